import {
  type AccordServices,
  applyMerge,
  defaultPreferenceValues,
  PasswordHash,
  type Preferences,
  PreferencesKind,
  Principal,
  Unauthenticated,
  Unavailable,
  UserId,
  withPortSpans
} from "@accord/domain"
import {
  type BodyReadResult,
  headerValue,
  type HttpRequest,
  type HttpTracing,
  makeHttpHandler,
  type RequestLog
} from "@accord/core"
import { apiRoutes } from "@accord/contract"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Option, Tracer } from "effect"
import { stubPorts } from "@accord/test-support"

/** A tracer that keeps every span it makes, so a test can read names, parents, attributes and ends. */
const recordingTracer = () => {
  const spans: Array<Tracer.NativeSpan> = []
  const tracer = Tracer.make({
    span: (options) => {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    }
  })
  return { tracer, spans }
}

const TOKEN = "tracing-test-token"
const record: Preferences = { id: 1, ...defaultPreferenceValues, createdAt: new Date(0), updatedAt: new Date(0) }

/** Ports that answer at once, except `ping`, which fails (health is 503) and the hasher, which waits a tick. */
const ports: Layer.Layer<AccordServices> = stubPorts({
  authenticator: {
    authenticate: (token) =>
      token === TOKEN
        ? Effect.succeed(Principal.User({ userId: UserId.make("u_1") }))
        : Effect.fail(new Unauthenticated({ reason: "invalid_token" }))
  },
  planEntries: { insertIfAbsent: () => Effect.succeed(true), findByEmailKey: () => Effect.succeed(undefined) },
  preferences: {
    getOrCreate: () => Effect.succeed(record),
    update: (_userId, merge) => Effect.sync(() => applyMerge(PreferencesKind, record, merge))
  },
  paymentMethods: { listByUser: () => Effect.succeed([]) },
  storeAdmin: { ping: Effect.fail(new Unavailable({ reason: "store_unreachable", retryAfterSeconds: 1 })) },
  passwordHasher: {
    hash: () =>
      Effect.as(
        Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1))),
        PasswordHash.make("h")
      ),
    verify: () => Effect.succeed(true)
  }
})

/** The composition a tracing host makes: ports in spans, the tracer in the runtime, the same tracer to the handler. */
const traced = () => {
  const recorder = recordingTracer()
  const runtime = ManagedRuntime.make(Layer.merge(withPortSpans(ports), Layer.succeed(Tracer.Tracer, recorder.tracer)))
  const logs: Array<RequestLog> = []
  const caller = Tracer.externalSpan({ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331" })
  const tracing: HttpTracing = {
    tracer: recorder.tracer,
    remoteParent: (headers) => (headerValue(headers, "traceparent") === undefined ? undefined : caller)
  }
  const handler = makeHttpHandler({ runtime, tracing, onResponse: (log) => logs.push(log) })
  return { handler, spans: recorder.spans, logs, caller }
}

const bytes = (text: string) => new TextEncoder().encode(text)

/** A JSON body that came with the headers (read at once: the synchronous path) or arrives later (awaited). */
const put = (body: string, arrives: "with the headers" | "later"): HttpRequest => ({
  method: "PUT",
  path: "/api/users/v1/preferences/language/",
  headers: {
    authorization: `Bearer ${TOKEN}`,
    "content-type": "application/json",
    "content-length": String(bytes(body).length),
    host: "api.example.org:8443",
    traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
  },
  readBody: () => Promise.resolve<BodyReadResult>({ _tag: "Read", bytes: bytes(body) }),
  ...(arrives === "with the headers" && { readBodyNow: (): BodyReadResult => ({ _tag: "Read", bytes: bytes(body) }) })
})

const SIGN_UP = '{"email":"ada@example.org","password":"a-long-password"}'

/** A sign-up whose body came with the headers. */
const post: HttpRequest = {
  method: "POST",
  path: "/api/plans/v1/subscription-plans/public/",
  headers: {
    authorization: `Bearer ${TOKEN}`,
    "content-type": "application/json",
    "content-length": String(bytes(SIGN_UP).length)
  },
  readBody: () => Promise.resolve({ _tag: "Read", bytes: bytes(SIGN_UP) }),
  readBodyNow: () => ({ _tag: "Read", bytes: bytes(SIGN_UP) })
}

const named = (spans: ReadonlyArray<Tracer.NativeSpan>, name: string): Tracer.NativeSpan => {
  const found = spans.filter((span) => span.name === name)
  expect(found.map((span) => span.name)).toEqual([name])
  return found[0]!
}

const parentOf = (span: Tracer.NativeSpan) => Option.getOrUndefined(span.parent)

describe("the handler's traces", () => {
  it.each(["with the headers", "later"] as const)(
    "a request whose body arrives %s: server > use case > store, every span ended, trace id in the log",
    async (arrives) => {
      const { handler, spans, logs, caller } = traced()
      const response = await handler(put('{"language":"fr"}', arrives))
      expect(response.status).toBe(200)

      const server = named(spans, "PUT /api/users/v1/preferences/language/")
      expect(server.kind).toBe("server")
      expect(parentOf(server)).toBe(caller)
      expect(Object.fromEntries(server.attributes)).toEqual({
        "http.request.method": "PUT",
        "http.route": "/api/users/v1/preferences/language/",
        "url.path": "/api/users/v1/preferences/language/",
        "server.address": "api.example.org",
        "server.port": 8443,
        "http.response.status_code": 200
      })
      const useCase = named(spans, "updateLanguagePreferences")
      expect(parentOf(useCase)).toBe(server)
      expect(parentOf(named(spans, "PreferencesStore.update"))).toBe(useCase)
      expect(parentOf(named(spans, "Authenticator.authenticate"))).toBe(server)
      expect(spans.map((span) => [span.name, span.status._tag])).toEqual(spans.map((span) => [span.name, "Ended"]))
      expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([caller.traceId]))
      expect(logs).toEqual([expect.objectContaining({ status: 200, traceId: caller.traceId })])
    }
  )

  it("the use case waits for the hasher (the asynchronous path): its spans end before the answer", async () => {
    const { handler, spans } = traced()
    const response = await handler(post)
    expect(response.status).toBe(201)
    const server = named(spans, "POST /api/plans/v1/subscription-plans/public/")
    expect(Option.isNone(server.parent)).toBe(true)
    const useCase = named(spans, "createPublicPlanEntry")
    expect(parentOf(useCase)).toBe(server)
    expect(parentOf(named(spans, "PasswordHasher.hash"))).toBe(useCase)
    expect(parentOf(named(spans, "PlanEntries.insertIfAbsent"))).toBe(useCase)
    expect(spans.every((span) => span.status._tag === "Ended")).toBe(true)
  })

  it("a 5xx ends the server span as a failure with error.type; a 4xx does not", async () => {
    const { handler, spans } = traced()
    expect((await handler({ method: "GET", path: "/api/health", headers: {} })).status).toBe(503)
    const health = named(spans, "GET /api/health")
    expect(health.attributes.get("error.type")).toBe("503")
    expect(health.status._tag === "Ended" && health.status.exit._tag).toBe("Failure")
    expect(parentOf(named(spans, "StoreAdmin.ping"))).toBe(named(spans, "health"))

    expect((await handler({ ...put("{}", "with the headers"), headers: {} })).status).toBe(401)
    const refused = spans.filter((span) => span.name === "PUT /api/users/v1/preferences/language/")
    expect(refused).toHaveLength(1)
    expect(refused[0]!.attributes.get("http.response.status_code")).toBe(401)
    expect(refused[0]!.attributes.has("error.type")).toBe(false)
    expect(refused[0]!.status._tag === "Ended" && refused[0]!.status.exit._tag).toBe("Success")
  })

  it("names a request no route matched by its method alone, an unknown method `HTTP`, and records no such path", async () => {
    const { handler, spans } = traced()
    expect((await handler({ method: "GET", path: `/api/nowhere/${TOKEN}`, headers: {} })).status).toBe(404)
    expect((await handler({ method: "PROPFIND", path: "/api/health", headers: {} })).status).toBe(405)
    expect(spans.map((span) => span.name)).toEqual(["GET", "HTTP /api/health"])
    expect(spans[0]!.attributes.has("url.path")).toBe(false)
    expect(Object.fromEntries(spans[1]!.attributes)).toMatchObject({
      "http.request.method": "_OTHER",
      "http.request.method_original": "PROPFIND"
    })
  })

  // docs/SECURITY.md, item 27: a path parameter is whatever the client typed (here 1.9 KB), on 401 and 405 as on 200.
  it("records a route with a parameter by its template only, never the path the client sent", async () => {
    const { handler, spans } = traced()
    const typed = `/api/payments/v1/payment-methods/${TOKEN}${"x".repeat(1900)}/`
    const template = "/api/payments/v1/payment-methods/{id}/"
    // A method the route does not serve, from the route table (whatever operations it has): 405.
    const served = apiRoutes.find((route) => `/api${route.path}` === template)?.operations.map((o) => o.method) ?? []
    const unserved = (["PATCH", "DELETE", "POST", "GET"] as const).find((method) => !served.includes(method)) ?? "PATCH"
    expect((await handler({ method: "PUT", path: typed, headers: {} })).status).toBe(401)
    expect((await handler({ method: unserved, path: typed, headers: {} })).status).toBe(405)
    expect((await handler({ method: "PUT", path: typed, headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(
      404
    )
    const servers = spans.filter((span) => span.kind === "server")
    expect(servers.map((span) => span.name)).toEqual([`PUT ${template}`, `${unserved} ${template}`, `PUT ${template}`])
    for (const server of servers) {
      expect(server.attributes.get("http.route")).toBe(template)
      expect(server.attributes.has("url.path")).toBe(false)
    }
    for (const span of spans) expect(JSON.stringify([...span.attributes])).not.toContain(TOKEN)
  })
})

describe("the handler without tracing", () => {
  it("makes no span at all, even with a tracer in the runtime, and logs no trace id", async () => {
    const recorder = recordingTracer()
    const runtime = ManagedRuntime.make(Layer.merge(ports, Layer.succeed(Tracer.Tracer, recorder.tracer)))
    const logs: Array<RequestLog> = []
    const handler = makeHttpHandler({ runtime, onResponse: (log) => logs.push(log) })
    const responses = await Promise.all([
      handler(put('{"language":"fr"}', "with the headers")),
      handler(put('{"language":"fr"}', "later")),
      handler(post),
      handler({ method: "GET", path: "/api/health", headers: {} })
    ])
    expect(responses.map((response) => response.status)).toEqual([200, 200, 201, 503])
    expect(recorder.spans).toEqual([])
    expect(logs.map((log) => Object.keys(log))).toEqual(
      logs.map(() => ["requestId", "method", "route", "path", "status", "durationMs"])
    )
  })
})

import { startKoaServer } from "@accord/adapter-koa"
import { AccordTransportError, makeAccordClient, type FetchLike } from "@accord/client"
import { makeAccordClient as makeValidatedClient } from "@accord/client/validated"
import { problem, problemBody, type Problem } from "@accord/core"
import { describe, expect, it } from "@effect/vitest"
import { makeAccordTestKit } from "@accord/testkit"

const BASE = "http://accord.test/api"

/** A fetch that records each request (with its body as text) and answers with `answer`. */
const recording = (answer: (request: Request) => Response = () => problemResponse(unavailable)) => {
  const sent: Array<{ readonly request: Request; readonly body: string }> = []
  const fetch: FetchLike = async (request) => {
    sent.push({ request, body: await request.text() })
    return answer(request)
  }
  return { fetch, sent }
}

const unavailable: Problem = { status: 503, code: "unavailable", detail: "The service cannot answer right now." }

const problemResponse = (problem: Problem, status = problem.status): Response =>
  new Response(problemBody(problem), {
    status,
    headers: { "content-type": "application/problem+json; charset=utf-8" }
  })

const jsonResponse = (status: number, body: string, contentType = "application/json; charset=utf-8"): Response =>
  new Response(body, { status, headers: { "content-type": contentType } })

/** The rejection of `promise`, which must be an AccordTransportError. */
const transportErrorOf = async (promise: Promise<unknown>): Promise<AccordTransportError> => {
  const error: unknown = await promise.then(
    () => undefined,
    (rejected: unknown) => rejected
  )
  expect(error).toBeInstanceOf(AccordTransportError)
  return error as AccordTransportError
}

describe("what the client sends", () => {
  it("the method and the path under baseUrl (a trailing slash ignored), the parameter percent-encoded", async () => {
    const { fetch, sent } = recording()
    const client = makeAccordClient({ baseUrl: `${BASE}/`, token: "tok", fetch })
    await client.health()
    await client.setDefaultPaymentMethod({ params: { id: "pm 1/x" } })
    await client.listPaymentMethods()
    expect(sent.map(({ request }) => `${request.method} ${request.url}`)).toStrictEqual([
      "GET http://accord.test/api/health",
      "PUT http://accord.test/api/payments/v1/payment-methods/pm%201%2Fx/",
      "GET http://accord.test/api/payments/v1/payment-methods/"
    ])
  })

  it("Authorization: Bearer on credentialed operations only", async () => {
    const { fetch, sent } = recording()
    const client = makeAccordClient({ baseUrl: BASE, token: "tok.en~+/=", fetch })
    await client.health()
    await client.getLanguagePreferences()
    await client.createPublicPlanEntry({ body: { email: "a@example.com", password: "12345678" } })
    expect(sent.map(({ request }) => request.headers.get("authorization"))).toStrictEqual([
      null,
      "Bearer tok.en~+/=",
      "Bearer tok.en~+/="
    ])
  })

  it("a JSON body with Content-Type and Content-Length where one is given, nothing otherwise", async () => {
    const { fetch, sent } = recording()
    const client = makeAccordClient({ baseUrl: BASE, token: "tok", fetch })
    await client.updateLanguagePreferences({ body: { language: "pt-BR", timezone: -180 } })
    await client.setDefaultPaymentMethod({ params: { id: "pm_1" } })
    await client.setDefaultPaymentMethod({ params: { id: "pm_1" }, body: { is_default: true } })
    await client.getLanguagePreferences()
    expect(
      sent.map(({ request, body }) => [
        request.headers.get("content-type"),
        request.headers.get("content-length"),
        body
      ])
    ).toStrictEqual([
      ["application/json", "36", '{"language":"pt-BR","timezone":-180}'],
      [null, null, ""],
      ["application/json", "19", '{"is_default":true}'],
      [null, null, ""]
    ])
  })

  it("counts Content-Length in bytes, not characters", async () => {
    const { fetch, sent } = recording()
    const client = makeAccordClient({ baseUrl: BASE, token: "tok", fetch })
    await client.createPublicPlanEntry({ body: { email: "a@example.com", password: "mot de passe é€😀" } })
    const [first] = sent
    expect(Number(first?.request.headers.get("content-length"))).toBe(new TextEncoder().encode(first?.body).length)
  })

  it("asks a token function before each credentialed request (sync or async), never for a public one", async () => {
    const { fetch, sent } = recording()
    const tokens = ["first", "second"]
    let asked = 0
    const client = makeAccordClient({
      baseUrl: BASE,
      token: async () => tokens[asked++],
      fetch
    })
    await client.health()
    await client.listPaymentMethods()
    await client.listPaymentMethods()
    await client.listPaymentMethods()
    expect(asked).toBe(3)
    expect(sent.map(({ request }) => request.headers.get("authorization"))).toStrictEqual([
      null,
      "Bearer first",
      "Bearer second",
      // The function returned undefined: no credential is sent.
      null
    ])
    const sync = makeAccordClient({ baseUrl: BASE, token: () => "sync", fetch })
    await sync.getLanguagePreferences()
    expect(sent.at(-1)?.request.headers.get("authorization")).toBe("Bearer sync")
  })
})

// The default client checks an answer cheaply, the validated one decodes it with the Schemas: what both refuse alike.
describe.each([
  ["@accord/client", makeAccordClient],
  ["@accord/client/validated", makeValidatedClient]
])("what %s makes of an answer", (_, makeAccordClient) => {
  it("a problem with one of the operation's codes: {ok: false, status, problem}", async () => {
    const { fetch } = recording()
    const result = await makeAccordClient({ baseUrl: BASE, fetch }).health()
    expect(result).toStrictEqual({
      ok: false,
      status: 503,
      problem: {
        type: "about:blank",
        title: "Service Unavailable",
        status: 503,
        detail: "The service cannot answer right now.",
        code: "unavailable"
      }
    })
  })

  it.each<[string, () => Response]>([
    ["a success body that is not JSON", () => jsonResponse(200, "ok")],
    ["a success status with another media type", () => jsonResponse(200, '{"status":"ok"}', "text/plain")],
    ["a status that is neither success nor problem", () => new Response(null, { status: 204 })],
    ["a proxy's HTML page", () => jsonResponse(502, "<html>Bad Gateway</html>", "text/html")],
    ["a problem whose code the operation cannot answer", () => problemResponse(problem("not_found"))],
    ["a problem whose status is not its HTTP status", () => problemResponse(unavailable, 500)],
    ["a problem body that is not a problem", () => jsonResponse(503, '{"error":"down"}', "application/problem+json")],
    [
      "a problem whose field error has a code the contract does not know",
      () =>
        jsonResponse(
          400,
          '{"type":"about:blank","title":"Bad Request","status":400,"detail":"x","code":"bad_request",' +
            '"errors":[{"pointer":"/a","code":"mystery","detail":"y"}]}',
          "application/problem+json"
        )
    ]
  ])("rejects %s as undecodable", async (_, answer) => {
    const { fetch } = recording(answer)
    const error = await transportErrorOf(makeAccordClient({ baseUrl: BASE, fetch }).health())
    expect(error.reason).toBe("undecodable")
    expect(error.status).toBe(answer().status)
    expect(error.message).toMatch(/^health: the \d+ answer is not one this operation gives/)
  })

  it("rejects with reason network when fetch rejects, with its error as the cause", async () => {
    const failure = new TypeError("fetch failed")
    const client = makeAccordClient({ baseUrl: BASE, fetch: () => Promise.reject(failure) })
    const error = await transportErrorOf(client.health())
    expect(error.reason).toBe("network")
    expect(error.cause).toBe(failure)
    expect(error.message).toBe("health: GET http://accord.test/api/health got no answer.")
  })

  it("rejects with reason network when nothing listens (the real fetch)", async () => {
    const kit = await makeAccordTestKit()
    const server = await startKoaServer({ runtime: kit.runtime, port: 0 })
    await server.close()
    await kit.dispose()
    const error = await transportErrorOf(makeAccordClient({ baseUrl: `${server.url}/api` }).health())
    expect(error.reason).toBe("network")
  })

  it("rejects with reason network when the request is aborted", async () => {
    const controller = new AbortController()
    const client = makeAccordClient({
      baseUrl: BASE,
      fetch: (request) =>
        new Promise((_, reject) => request.signal.addEventListener("abort", () => reject(request.signal.reason)))
    })
    const pending = client.health({ signal: controller.signal })
    controller.abort()
    expect((await transportErrorOf(pending)).reason).toBe("network")
  })

  it("rejects with reason token when the token function fails, and sends nothing", async () => {
    const { fetch, sent } = recording()
    const failure = new Error("refresh failed")
    const client = makeAccordClient({ baseUrl: BASE, fetch, token: () => Promise.reject(failure) })
    const error = await transportErrorOf(client.listPaymentMethods())
    expect([error.reason, error.cause]).toStrictEqual(["token", failure])
    expect(sent).toHaveLength(0)
  })

  it("rejects with a TypeError for a path parameter untyped code left out", async () => {
    const { fetch } = recording()
    const client = makeAccordClient({ baseUrl: BASE, fetch }) as unknown as Record<string, (input?: unknown) => unknown>
    await expect(client["setDefaultPaymentMethod"]?.({})).rejects.toThrow(
      new TypeError("setDefaultPaymentMethod: params.id must be a string")
    )
  })
})

describe("a success body its Schema does not decode (the one difference between the two clients)", () => {
  const answer = () => jsonResponse(200, '{"status":"fine","since":"today"}')

  it("@accord/client hands it over as sent: it checks the status and the media type, not the body", async () => {
    const { fetch } = recording(answer)
    expect(await makeAccordClient({ baseUrl: BASE, fetch }).health()).toStrictEqual({
      ok: true,
      status: 200,
      value: { status: "fine", since: "today" },
      etag: undefined
    })
  })

  it("@accord/client/validated rejects it as undecodable, with the Schema's issue as the cause", async () => {
    const { fetch } = recording(answer)
    const error = await transportErrorOf(makeValidatedClient({ baseUrl: BASE, fetch }).health())
    expect([error.reason, error.status]).toStrictEqual(["undecodable", 200])
    expect(error.message).toMatch(/^health: the 200 answer is not one this operation gives \(.*"ok"/s)
    expect(error.cause).toBeDefined()
  })

  it("@accord/client/validated drops the fields the Schema does not name; @accord/client keeps them", async () => {
    const { fetch } = recording(() => jsonResponse(200, '{"status":"ok","since":"today"}'))
    const validated = await makeValidatedClient({ baseUrl: BASE, fetch }).health()
    const light = await makeAccordClient({ baseUrl: BASE, fetch }).health()
    expect([validated.ok && validated.value, light.ok && light.value]).toStrictEqual([
      { status: "ok" },
      { status: "ok", since: "today" }
    ])
  })
})

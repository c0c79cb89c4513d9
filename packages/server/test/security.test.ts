import { createHash } from "node:crypto"
import { readdir, readFile } from "node:fs/promises"
import { join } from "node:path"
import { startFastifyServer } from "@accord/adapter-fastify"
import { startKoaServer } from "@accord/adapter-koa"
import { startExpressServer } from "@accord/adapter-express"
import { startFetchServer } from "@accord/adapter-fetch/node"
import { send, type RawRequest, type RawResponse } from "@accord/conformance"
import { startOnRuntime, stubPort, type StartAdapter } from "@accord/test-support"
import { type AccordServices, Email, emailKey, PasswordHasher, PlanEntries, type SeedInput } from "@accord/domain"
import type { AccordRuntime } from "@accord/core"
import type { RunningServer } from "@accord/node/server"
import { makeScryptHasher, ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { MemoryStoreLive } from "@accord/store-memory"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import {
  ConfigError,
  createLogger,
  defaultConfig,
  parseConfig,
  readSeedFile,
  requestLogging,
  startAccord,
  type AccordConfig
} from "../src/index.js"
import { makeTempDir, repoRoot } from "./cli-helpers.js"

// docs/SECURITY.md: one test (or more) per item of the checklist, named there.

const adapters: ReadonlyArray<readonly [string, StartAdapter]> = [
  ["koa", startKoaServer],
  ["fastify", startFastifyServer],
  ["express", startExpressServer],
  ["fetch", startFetchServer]
]

const tokens = {
  a: "security-a.Yq3F9x-Kd0",
  b: "security-b.Lm7T2p-Wz4",
  client: "security-client.Rr5N8c-Hs1"
}
const seed: SeedInput = {
  users: [
    { id: "u_sec_a", token: tokens.a },
    { id: "u_sec_b", token: tokens.b }
  ],
  clients: [{ id: "sec_client", token: tokens.client }],
  payment_methods: [
    { id: "pm_a1", user_id: "u_sec_a", is_default: true },
    { id: "pm_a2", user_id: "u_sec_a" },
    { id: "pm_b1", user_id: "u_sec_b", is_default: true }
  ]
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` })
const json = (token: string) => ({ ...bearer(token), "Content-Type": "application/json" })
const plan = "/api/plans/v1/subscription-plans/public/"
const preferences = "/api/users/v1/preferences/language/"
const list = "/api/payments/v1/payment-methods/"
const method = (id: string) => `/api/payments/v1/payment-methods/${id}/`

const text = (response: RawResponse) => response.body.toString("utf8")
const body = (response: RawResponse): unknown => JSON.parse(text(response))
const sha256 = (value: string) => createHash("sha256").update(value, "utf8").digest("hex")

/** A memory store with cheap scrypt, with `override`'s services replacing its own (the later layer of a merge wins). */
const runtimeWith = <R extends AccordServices>(override: Layer.Layer<R>): AccordRuntime =>
  ManagedRuntime.make(Layer.mergeAll(MemoryStoreLive, ScryptPasswordHasherLive(testScryptCost), override))

/** A logger writing JSON lines into memory, at every level. */
const memoryLogger = () => {
  const lines: Array<string> = []
  const logger = createLogger("trace", { write: (line: string) => void lines.push(line) })
  return {
    logger,
    text: () => lines.join(""),
    entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>)
  }
}

/** Servers of every adapter on one runtime each (fresh memory stores seeded alike). */
const everyAdapter = (make: () => { runtime: AccordRuntime; options?: Parameters<typeof startOnRuntime>[2] }) => {
  const servers: Array<{ name: string; server: RunningServer; runtime: AccordRuntime }> = []
  beforeAll(async () => {
    for (const [name, start] of adapters) {
      const { runtime, options } = make()
      servers.push({ name, runtime, server: await startOnRuntime(start, runtime, options)(seed) })
    }
  })
  afterAll(async () => {
    for (const { server, runtime } of servers) {
      await server.close()
      await runtime.dispose()
    }
  })
  return servers
}

describe("no password or token in logs", () => {
  const passwords = [
    "Pw#log-secret-one",
    "Pw#log-secret-two",
    "Pw#7",
    `Pw#${"y".repeat(126)}`,
    "Pw#in-broken-json",
    "Pw#in-text-plain",
    "Pw#unauthenticated"
  ]
  const unknownToken = "security-unknown.Zz9-never-seeded"
  const malformedToken = "security$malformed-secret"
  const basic = Buffer.from("admin:Pw#basic-secret").toString("base64")
  const traffic = (): ReadonlyArray<RawRequest> => [
    { method: "GET", path: preferences, headers: bearer(tokens.a) },
    { method: "PUT", path: preferences, headers: json(tokens.a), body: '{"language":"fr"}' },
    { method: "GET", path: list, headers: bearer(tokens.b) },
    { method: "PUT", path: method("pm_a2"), headers: bearer(tokens.a) },
    { method: "PUT", path: method("pm_b1"), headers: bearer(tokens.a) },
    {
      method: "POST",
      path: plan,
      headers: json(tokens.client),
      body: JSON.stringify({ email: "log@example.com", password: passwords[0] })
    },
    {
      method: "POST",
      path: plan,
      headers: json(tokens.a),
      body: JSON.stringify({ email: "LOG@example.com", password: passwords[1] })
    },
    {
      method: "POST",
      path: plan,
      headers: json(tokens.client),
      body: JSON.stringify({ email: "short@example.com", password: passwords[2] })
    },
    {
      method: "POST",
      path: plan,
      headers: json(tokens.client),
      body: JSON.stringify({ email: "long@example.com", password: passwords[3] })
    },
    {
      method: "POST",
      path: plan,
      headers: json(tokens.client),
      body: `{"email":"x@example.com","password":"${passwords[4]}"`
    },
    {
      method: "POST",
      path: plan,
      headers: { ...bearer(tokens.client), "Content-Type": "text/plain" },
      body: `password=${passwords[5]}`
    },
    {
      method: "POST",
      path: plan,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ email: "u@example.com", password: passwords[6] })
    },
    { method: "GET", path: preferences, headers: bearer(unknownToken) },
    { method: "GET", path: preferences, headers: { Authorization: `Token ${malformedToken}` } },
    { method: "GET", path: preferences, headers: { Authorization: `Basic ${basic}` } },
    { method: "PUT", path: preferences, headers: json(tokens.client), body: "{}" },
    { method: "GET", path: `/api/health?token=${tokens.a}&password=${passwords[0]}` },
    { method: "GET", path: `/api/nope/${tokens.b}` }
  ]

  it.each(adapters.map(([name]) => name))(
    "%s through startAccord: the log has every request and no secret",
    async (adapter) => {
      const temp = await makeTempDir()
      try {
        const seedFile = await temp.write("seed.json", seed)
        const log = memoryLogger()
        const config: AccordConfig = {
          ...defaultConfig,
          adapter: adapter === "koa" || adapter === "express" || adapter === "fetch" ? adapter : "fastify",
          port: 0,
          logLevel: "trace",
          scrypt: { N: 1024, r: 8, p: 1 },
          seedFile
        }
        const accord = await startAccord(config, { logger: log.logger })
        const requests = traffic()
        const statuses: Array<number> = []
        for (const request of requests) statuses.push((await send(accord.url, request)).status)
        await accord.close()

        // The traffic did reach the logger: one request line each, failures included.
        const logged = log.entries().filter((entry) => entry["msg"] === "request")
        expect(logged.map((entry) => entry["status"])).toEqual(statuses)
        expect(statuses).toEqual(expect.arrayContaining([200, 201, 400, 401, 403, 404, 415]))

        const secrets = [...Object.values(tokens), unknownToken, malformedToken, basic, "Pw#basic-secret", ...passwords]
        const logText = log.text()
        for (const secret of secrets) {
          expect(logText, `a secret in the log: ${secret}`).not.toContain(secret)
          // A digest identifies a credential as well as the token does in a log search; none is logged either.
          expect(logText).not.toContain(sha256(secret))
        }
      } finally {
        await temp.cleanup()
      }
    }
  )
})

describe("no password in any response", () => {
  const servers = everyAdapter(() => ({ runtime: runtimeWith(Layer.empty) }))
  const cases: ReadonlyArray<readonly [string, string, RawRequest, number]> = [
    [
      "a new entry",
      "Pw#response-new-1",
      {
        method: "POST",
        path: plan,
        headers: json(tokens.client),
        body: JSON.stringify({ email: "resp@example.com", password: "Pw#response-new-1" })
      },
      201
    ],
    [
      "a duplicate",
      "Pw#response-dup-2",
      {
        method: "POST",
        path: plan,
        headers: json(tokens.a),
        body: JSON.stringify({ email: "RESP@example.com", password: "Pw#response-dup-2" })
      },
      201
    ],
    [
      "too_short",
      "Pw#shrt",
      {
        method: "POST",
        path: plan,
        headers: json(tokens.client),
        body: JSON.stringify({ email: "s@example.com", password: "Pw#shrt" })
      },
      400
    ],
    [
      "too_long",
      `Pw#${"z".repeat(126)}`,
      {
        method: "POST",
        path: plan,
        headers: json(tokens.client),
        body: JSON.stringify({ email: "l@example.com", password: `Pw#${"z".repeat(126)}` })
      },
      400
    ],
    [
      "a valid password beside a bad email",
      "Pw#beside-bad-email",
      {
        method: "POST",
        path: plan,
        headers: json(tokens.client),
        body: JSON.stringify({ email: "a..b@example", password: "Pw#beside-bad-email" })
      },
      400
    ],
    [
      "a valid password beside an unknown field",
      "Pw#beside-unknown",
      {
        method: "POST",
        path: plan,
        headers: json(tokens.client),
        body: JSON.stringify({ email: "u@example.com", password: "Pw#beside-unknown", role: "admin" })
      },
      400
    ],
    [
      "a password in broken JSON",
      "Pw#broken-json",
      {
        method: "POST",
        path: plan,
        headers: json(tokens.client),
        body: '{"email":"b@example.com","password":"Pw#broken-json"'
      },
      400
    ],
    [
      "a password in a duplicated key",
      "Pw#dup-key",
      {
        method: "POST",
        path: plan,
        headers: json(tokens.client),
        body: '{"email":"d@example.com","password":"Pw#dup-key","password":"Pw#dup-key"}'
      },
      400
    ]
  ]

  it.each(cases)("%s: the password is in neither the body nor a header", async (_name, password, request, status) => {
    for (const { name, server } of servers) {
      const response = await send(server.url, request)
      expect(response.status, name).toBe(status)
      const everything = `${text(response)}\n${JSON.stringify(response.headers)}`
      expect(everything, name).not.toContain(password)
      expect(everything, name).not.toContain(JSON.stringify(password).slice(1, -1))
      if (status === 201) expect(body(response), name).toMatchObject({ password: "********" })
    }
  })
})

describe("user enumeration: a known email answers exactly like a new one", () => {
  const counter = { hashes: 0 }
  // Wraps the real hasher and counts: a known email must still pay for a hash.
  const countingHasher = Layer.effect(
    PasswordHasher,
    Effect.map(makeScryptHasher(testScryptCost), (inner) =>
      PasswordHasher.of({
        hash: (password) => Effect.tap(inner.hash(password), () => Effect.sync(() => void counter.hashes++)),
        verify: inner.verify
      })
    )
  )
  const servers = everyAdapter(() => ({ runtime: runtimeWith(countingHasher) }))
  /** Everything but the values that must differ between any two responses (request id, date). */
  const comparable = (response: RawResponse) => {
    const { "x-request-id": _id, date: _date, ...headers } = response.headers
    return { status: response.status, headers, body: text(response) }
  }

  it.each(adapters.map(([name]) => name))(
    "%s: same status, headers and body; the hasher runs both times; nothing is overwritten",
    async (adapter) => {
      const entry = servers.find((candidate) => candidate.name === adapter)
      if (entry === undefined) throw new Error(`no ${adapter} server`)
      const { name, server, runtime } = entry
      const post = (email: string, password: string) =>
        send(server.url, {
          method: "POST",
          path: plan,
          headers: json(tokens.client),
          body: JSON.stringify({ email, password })
        })
      const email = `enum.${name}@Example.COM`
      const before = counter.hashes
      const fresh = await post(email, "Pw#first-password")
      const known = await post(email, "Pw#second-password")
      expect(counter.hashes - before, name).toBe(2)
      expect(fresh.status, name).toBe(201)
      expect(comparable(known), name).toEqual(comparable(fresh))
      // Uniqueness ignores case, and the answer is what a new entry with that address would get.
      const caseVariant = await post(`ENUM.${name}@example.com`, "Pw#third-password")
      const newOfTheSameLength = await post(`NEWX.${name}@example.com`, "Pw#fourth-password")
      expect(counter.hashes - before, name).toBe(4)
      expect(comparable(caseVariant).headers).toEqual(comparable(newOfTheSameLength).headers)
      expect(body(caseVariant)).toEqual({ email: `ENUM.${name}@example.com`, password: "********" })
      // The first password is the one kept.
      const kept = await runtime.runPromise(
        Effect.gen(function* () {
          const stored = yield* (yield* PlanEntries).findByEmailKey(emailKey(Email.make(email)))
          if (stored === undefined) throw new Error("not stored")
          const hasher = yield* PasswordHasher
          return [
            yield* hasher.verify(Redacted.make("Pw#first-password"), stored.passwordHash),
            yield* hasher.verify(Redacted.make("Pw#second-password"), stored.passwordHash)
          ]
        })
      )
      expect(kept).toEqual([true, false])
    }
  )
})

describe("BOLA: a user cannot read or change another user's payment methods", () => {
  const servers = everyAdapter(() => ({ runtime: runtimeWith(Layer.empty) }))

  it("B's requests on A's methods are 404 not_found, identical to an unknown id, and A's list does not change", async () => {
    for (const { name, server } of servers) {
      const listA = () => send(server.url, { method: "GET", path: list, headers: bearer(tokens.a) })
      const before = text(await listA())
      const unknown = await send(server.url, {
        method: "PUT",
        path: method("pm_does_not_exist"),
        headers: bearer(tokens.b)
      })
      expect(unknown.status, name).toBe(404)
      const attempts: ReadonlyArray<RawRequest> = [
        { method: "PUT", path: method("pm_a2"), headers: bearer(tokens.b) },
        {
          method: "PUT",
          path: "/api/payments/v1/payment-methods/pm_a2",
          headers: json(tokens.b),
          body: '{"is_default":true}'
        },
        { method: "PUT", path: method("%70%6D%5F%61%32"), headers: json(tokens.b), body: "{}" },
        { method: "PUT", path: method("pm_a1"), headers: bearer(tokens.b) }
      ]
      for (const attempt of attempts) {
        const response = await send(server.url, attempt)
        expect(response.status, `${name} ${attempt.path}`).toBe(404)
        expect(text(response), name).toBe(text(unknown))
      }
      expect(text(await listA()), name).toBe(before)
      const listB = body(await send(server.url, { method: "GET", path: list, headers: bearer(tokens.b) }))
      expect(listB, name).toMatchObject({ data: [{ id: "pm_b1", is_default: true }] })
      expect(JSON.stringify(listB), name).not.toContain("pm_a")
    }
  })
})

describe("mass assignment: only the documented fields are writable", () => {
  const servers = everyAdapter(() => ({ runtime: runtimeWith(Layer.empty) }))
  const errorsOf = (response: RawResponse) =>
    (body(response) as { errors?: ReadonlyArray<{ pointer: string; code: string }> }).errors?.map(
      ({ pointer, code }) => [pointer, code]
    )

  it("read-only id, created_at and updated_at are ignored whatever their values", async () => {
    for (const { name, server } of servers) {
      const before = body(
        await send(server.url, { method: "GET", path: preferences, headers: bearer(tokens.a) })
      ) as Record<string, unknown>
      const response = await send(server.url, {
        method: "PUT",
        path: preferences,
        headers: json(tokens.a),
        body: JSON.stringify({
          id: 999_999,
          created_at: "2000-01-01T00:00:00.000Z",
          updated_at: "2100-01-01T00:00:00.000Z"
        })
      })
      expect(response.status, name).toBe(200)
      expect(body(response), name).toEqual(before)
    }
  })

  it.each([
    ["user_id on preferences", preferences, { user_id: "u_sec_b", language: "de" }, [["/user_id", "unknown_field"]]],
    ["is_default on preferences", preferences, { is_default: true }, [["/is_default", "unknown_field"]]],
    ["user_id on set-default", method("pm_a2"), { user_id: "u_sec_b" }, [["/user_id", "unknown_field"]]],
    [
      "user_id beside is_default: true",
      method("pm_a2"),
      { is_default: true, user_id: "u_sec_b" },
      [["/user_id", "unknown_field"]]
    ],
    ["is_default: false", method("pm_a1"), { is_default: false }, [["/is_default", "not_allowed"]]],
    [
      "id and created_at on a plan entry",
      plan,
      { email: "m@example.com", password: "Pw#mass-assign", id: 1, created_at: "2000-01-01T00:00:00.000Z" },
      [
        ["/created_at", "unknown_field"],
        ["/id", "unknown_field"]
      ]
    ]
  ] as const)(
    "%s: 400 validation_failed naming the field, and nothing changes",
    async (_name, path, payload, errors) => {
      for (const { name, server } of servers) {
        const snapshot = async () =>
          [
            text(await send(server.url, { method: "GET", path: preferences, headers: bearer(tokens.a) })),
            text(await send(server.url, { method: "GET", path: preferences, headers: bearer(tokens.b) })),
            text(await send(server.url, { method: "GET", path: list, headers: bearer(tokens.a) })),
            text(await send(server.url, { method: "GET", path: list, headers: bearer(tokens.b) }))
          ] as const
        const before = await snapshot()
        const response = await send(server.url, {
          method: path === plan ? "POST" : "PUT",
          path,
          headers: json(tokens.a),
          body: JSON.stringify(payload)
        })
        expect(response.status, name).toBe(400)
        expect(body(response), name).toMatchObject({ code: "validation_failed" })
        expect(errorsOf(response), name).toEqual(errors)
        expect(await snapshot(), name).toEqual(before)
      }
    }
  )
})

describe("no stack trace or internal detail in any answer; a 500 is generic and logged with its request id", () => {
  const internalMessage = 'relation "payment_methods" is corrupt (at /work/main/packages/store/secret.ts:42:7)'
  const defect = () => Effect.die(new Error(internalMessage))
  const failing = Layer.mergeAll(
    stubPort.paymentMethods({ listByUser: defect, setDefault: () => Effect.die("a defect that is not an Error") }),
    stubPort.preferences({
      getOrCreate: defect,
      update: () =>
        Effect.sync(() => {
          throw new TypeError(
            "Cannot read properties of undefined (reading 'rows') at /work/main/packages/store/x.ts:7:3"
          )
        })
    })
  )
  const logs: Array<ReturnType<typeof memoryLogger>> = []
  const servers = everyAdapter(() => {
    const log = memoryLogger()
    logs.push(log)
    return { runtime: runtimeWith(failing), options: requestLogging(log.logger) }
  })
  const generic =
    '{"type":"about:blank","title":"Internal Server Error","status":500,"detail":"An unexpected error occurred.","code":"internal"}'

  it.each([
    ["a store defect (an Error with a path)", { method: "GET", path: list, headers: bearer(tokens.a) }],
    ["a store defect that is not an Error", { method: "PUT", path: method("pm_a2"), headers: bearer(tokens.a) }],
    [
      "an exception thrown inside the store",
      { method: "PUT", path: preferences, headers: json(tokens.a), body: '{"language":"fr"}' }
    ],
    ["a defect on a HEAD request", { method: "HEAD", path: preferences, headers: bearer(tokens.a) }]
  ] as const)("%s", async (label, request) => {
    for (const [index, { name, server }] of servers.entries()) {
      const requestId = `sec-500-${name}-${label.length}`
      const response = await send(server.url, {
        ...request,
        headers: { ...request.headers, "X-Request-Id": requestId }
      })
      expect(response.status, name).toBe(500)
      expect(response.headers["content-type"], name).toBe("application/problem+json; charset=utf-8")
      expect(response.headers["x-request-id"], name).toBe(requestId)
      expect(text(response), name).toBe(request.method === "HEAD" ? "" : generic)
      const entry = logs[index]
        ?.entries()
        .find((line) => line["msg"] === "internal error" && line["requestId"] === requestId)
      expect(entry, `${name}: the 500 is logged with its request id`).toBeDefined()
      // The operator gets the cause; the client got none of it.
      expect(entry?.["err"], name).toBeDefined()
      if (label.startsWith("a store defect (an Error"))
        expect(JSON.stringify(entry?.["err"]), name).toContain("is corrupt")
    }
  })

  it("the Authorization header is not in the error log either", () => {
    for (const log of logs) expect(log.text()).not.toContain(`Bearer ${tokens.a}`)
  })
})

describe("constant-time token comparison: no store compares tokens or digests with ===", () => {
  // Static check: an equality operator with a token or a digest on either side, in any store or auth source. The
  // authenticators' comparison itself is tested where it runs (packages/*/test/security.test.ts, token-digest.test.ts).
  const roots = [
    "packages/store-memory/src",
    "packages/store-postgres/src",
    "packages/auth-jwt/src",
    "packages/node/src"
  ]
  const EQUALITY = /([\w$.[\]"'`]+)\s*(===|!==|==|!=)\s*([\w$.[\]"'`]+)/g
  const SENSITIVE = /token|digest|secret|hash/i
  const HARMLESS = /^(undefined|null|true|false|""|''|\d+|"[\w-]*"|typeof)$/

  const sources = async (dir: string): Promise<ReadonlyArray<string>> => {
    const entries = await readdir(dir, { withFileTypes: true })
    const nested = await Promise.all(
      entries.map((entry) =>
        entry.isDirectory()
          ? sources(join(dir, entry.name))
          : Promise.resolve(entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [])
      )
    )
    return nested.flat()
  }

  it("finds no such comparison", async () => {
    const files = (await Promise.all(roots.map((root) => sources(join(repoRoot, root))))).flat()
    expect(files.length).toBeGreaterThan(10)
    const findings: Array<string> = []
    for (const file of files) {
      const lines = (await readFile(file, "utf8")).split("\n")
      lines.forEach((line, index) => {
        for (const [, left = "", , right = ""] of line.matchAll(EQUALITY)) {
          const sensitive = SENSITIVE.test(left) || SENSITIVE.test(right)
          if (sensitive && !HARMLESS.test(left) && !HARMLESS.test(right))
            findings.push(`${file.slice(repoRoot.length)}:${index + 1}: ${line.trim()}`)
        }
      })
    }
    expect(findings).toEqual([])
  })

  it("would find one (the check itself works)", () => {
    const line = "if (stored.digest === digest) return principal"
    expect(
      [...line.matchAll(EQUALITY)].some(([, left = "", , right = ""]) => SENSITIVE.test(left) || SENSITIVE.test(right))
    ).toBe(true)
  })
})

describe("secrets never in the CLI's error messages", () => {
  const secret = "cli-secret-token.Qx8-dont-print"
  let temp: Awaited<ReturnType<typeof makeTempDir>>
  beforeAll(async () => {
    temp = await makeTempDir()
  })
  afterAll(() => temp.cleanup())

  const seedMessage = async (content: string): Promise<string> => {
    const path = await temp.write(`seed-${createHash("sha1").update(content).digest("hex").slice(0, 8)}.json`, content)
    const error = await readSeedFile(path).then(
      () => undefined,
      (failure: unknown) => failure
    )
    if (!(error instanceof ConfigError)) throw new Error(`expected a ConfigError for ${content.slice(0, 60)}`)
    return error.message
  }

  it.each([
    ["invalid JSON around a token", `{"users": [{"id": "u_1", "token": "${secret}"} oops]}`],
    ["a token outside the grammar", JSON.stringify({ users: [{ id: "u_1", token: `${secret} with spaces` }] })],
    ["a token over 512 characters", JSON.stringify({ users: [{ id: "u_1", token: `${secret}${"x".repeat(520)}` }] })],
    [
      "a token given twice",
      JSON.stringify({ users: [{ id: "u_1", token: secret }], clients: [{ id: "web", token: secret }] })
    ],
    ["a token in an unknown field", JSON.stringify({ users: [{ id: "u_1", token: "fine-token", password: secret }] })],
    ["a token where a list belongs", JSON.stringify({ users: secret })]
  ])("a bad seed file (%s) names the problem, not the token", async (_name, content) => {
    const message = await seedMessage(content)
    expect(message.length).toBeGreaterThan(0)
    expect(message).not.toContain(secret)
  })

  it.each([
    [
      "a database URL with a password and a bad option",
      ["--store", "postgres", "--port", "nope"],
      { DATABASE_URL: `postgres://admin:${secret}@127.0.0.1/x` }
    ],
    [
      "a database URL of the wrong scheme",
      ["--store", "postgres", "--database-url", `mysql://admin:${secret}@db/x`],
      {}
    ],
    [
      "a JWT secret that is too short",
      ["--auth", "jwt"],
      { JWT_SECRET: secret.slice(0, 20), JWT_ISSUER: "https://issuer", JWT_AUDIENCE: "accord" }
    ],
    [
      "a JWT secret beside a JWKS URL",
      ["--auth", "jwt"],
      { JWT_SECRET: `${secret}${secret}`, JWKS_URL: "https://issuer/jwks", JWT_ISSUER: "i", JWT_AUDIENCE: "a" }
    ]
  ] as const)("a bad configuration (%s) names the problem, not the secret", (_name, args, env) => {
    let message = ""
    try {
      parseConfig([...args], env)
    } catch (error) {
      if (error instanceof ConfigError) message = error.message
    }
    expect(message.length).toBeGreaterThan(0)
    expect(message).not.toContain(secret)
    expect(message).not.toContain(secret.slice(0, 20))
  })
})

// Kept apart so the list above reads as the checklist; the Authenticator port is what every store implements.
describe("an authenticator defect is a 500 too, never a 401 that hides it", () => {
  const log = memoryLogger()
  const broken = stubPort.authenticator({
    authenticate: () => Effect.die(new Error("key cache corrupted at /work/main/x.ts:1"))
  })
  const servers = everyAdapter(() => ({ runtime: runtimeWith(broken), options: requestLogging(log.logger) }))

  it("answers the generic 500 and logs it", async () => {
    for (const { name, server } of servers) {
      const response = await send(server.url, { method: "GET", path: preferences, headers: bearer(tokens.a) })
      expect(response.status, name).toBe(500)
      expect(text(response), name).not.toMatch(/work\/main|x\.ts|corrupted/)
    }
    expect(log.entries().filter((entry) => entry["msg"] === "internal error")).toHaveLength(servers.length)
  })
})

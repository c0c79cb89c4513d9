import type { RunningServer } from "@accord/node/server"
import { startExpressServer } from "@accord/adapter-express"
import { startFastifyServer } from "@accord/adapter-fastify"
import { startFetchServer } from "@accord/adapter-fetch/node"
import { startKoaServer } from "@accord/adapter-koa"
import { paths, send, type RawResponse } from "@accord/conformance"
import { operations } from "@accord/contract"
import {
  checkResponse,
  keepAliveAgent,
  makeFuzzFixture,
  runFuzzBatch,
  runHttpFuzz,
  snapshotModels,
  startWith,
  type FuzzCase
} from "@accord/test-support"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

// Every standalone server, each on a fresh memory store (rate limiting off), gets the same generated requests:
// every answer must conform, stored data may change only through 2xx answers, and each must answer as Koa does.
runHttpFuzz("koa, fastify, express and fetch on store-memory", [
  ["koa", startWith(startKoaServer)],
  ["fastify", startWith(startFastifyServer)],
  ["express", startWith(startExpressServer)],
  ["fetch", startWith(startFetchServer)]
])

// What the fuzz found, kept as plain cases so they stay fixed whatever the seed explores.
describe("fuzz findings", () => {
  const fixture = makeFuzzFixture("fuzz-findings")
  const servers: Array<readonly [string, RunningServer]> = []
  beforeAll(async () => {
    servers.push(
      ["koa", await startWith(startKoaServer)(fixture.seed)],
      ["fastify", await startWith(startFastifyServer)(fixture.seed)],
      ["express", await startWith(startExpressServer)(fixture.seed)],
      ["fetch", await startWith(startFetchServer)(fixture.seed)]
    )
  })
  afterAll(async () => {
    await Promise.all(servers.map(([, server]) => server.close()))
  })

  // Fastify 5 refuses QUERY without a Content-Type itself (FST_ERR_ROUTE_MISSING_CONTENT_TYPE, its own JSON 400);
  // the contract answers route, then method: 405 on a known path, 404 elsewhere.
  it.each([
    ["a known path", paths.paymentMethods, 405, "method_not_allowed"],
    ["a path with a body route", paths.preferences, 405, "method_not_allowed"],
    ["an unknown path under the prefix", "/api/nope", 404, "not_found"],
    ["a path outside the prefix", "/elsewhere", 404, "not_found"]
  ] as const)("QUERY without Content-Type on %s", async (_name, path, status, code) => {
    for (const [name, server] of servers) {
      const response = await send(server.url, { method: "QUERY", path, headers: { Authorization: "Bearer" } })
      expect(response.status, name).toBe(status)
      expect(response.headers["content-type"], name).toBe("application/problem+json; charset=utf-8")
      expect(JSON.parse(response.body.toString("utf8")), name).toMatchObject({ status, code })
    }
  })
})

// The fuzz is only as good as its checks: each of these must catch a broken answer.
describe("the fuzz's checks catch what they claim to", () => {
  const fixture = makeFuzzFixture("fuzz-self-test")
  const password = "Pw#secret-password"
  const planEntry: FuzzCase = {
    method: "POST",
    path: paths.planEntries,
    actor: "client",
    authorization: `Bearer ${fixture.client.token}`,
    contentType: "application/json",
    json: true,
    body: JSON.stringify({ email: "a@example.com", password }),
    transferEncoding: undefined,
    syntax: "object",
    requestId: "self-test-1",
    secrets: [password]
  }
  const headers = {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "x-request-id": "self-test-1"
  }
  const response = (status: number, body: unknown, extra: Record<string, string> = {}): RawResponse => ({
    status,
    headers: { ...headers, ...extra },
    body: Buffer.from(typeof body === "string" ? body : JSON.stringify(body))
  })
  const problem = {
    type: "about:blank",
    title: "Internal Server Error",
    status: 500,
    detail: "An unexpected error occurred.",
    code: "internal"
  }
  const problemType = { "content-type": "application/problem+json; charset=utf-8" }

  it("a conforming answer passes", () => {
    expect(checkResponse(fixture, planEntry, response(201, { email: "a@example.com", password: "********" }))).toEqual(
      []
    )
  })

  it.each([
    ["a 500", response(500, problem, problemType), /status 500|a 500/],
    [
      "a stack trace",
      response(
        400,
        {
          ...problem,
          status: 400,
          title: "Bad Request",
          code: "invalid_json",
          detail: "at parse (/work/main/x.ts:1:2)"
        },
        problemType
      ),
      /internal detail/
    ],
    [
      "the password reflected",
      response(201, { email: "a@example.com", password }),
      /contains a secret of the request \(a password\)/
    ],
    [
      "a success body its Schema refuses",
      response(201, { email: "a@example.com", password: "********", id: 1 }),
      /createPublicPlanEntry: the success body is not what its Schema says/
    ],
    [
      "a success body not written as its Schema writes it",
      response(201, { password: "********", email: "a@example.com" }),
      /createPublicPlanEntry: the success body is not written as its Schema writes it/
    ],
    [
      "a missing nosniff",
      response(201, { email: "a@example.com", password: "********" }, { "x-content-type-options": "" }),
      /X-Content-Type-Options/
    ],
    [
      "a request id not echoed",
      response(201, { email: "a@example.com", password: "********" }, { "x-request-id": "other" }),
      /X-Request-Id/
    ],
    [
      "an extra problem key",
      response(400, { ...problem, status: 400, title: "Bad Request", code: "invalid_json", stack: "x" }, problemType),
      /keys/
    ],
    [
      "a code of another status",
      response(400, { ...problem, status: 400, title: "Bad Request", code: "not_found" }, problemType),
      /does not belong/
    ],
    [
      "a code the operation does not declare",
      response(
        412,
        { ...problem, status: 412, title: "Precondition Failed", code: "precondition_failed" },
        problemType
      ),
      /code precondition_failed, which the contract does not declare for createPublicPlanEntry/
    ]
  ] as const)("%s is a violation", (_name, answer, pattern) => {
    expect(checkResponse(fixture, planEntry, answer).join("\n")).toMatch(pattern)
  })

  it("an Allow other than the route's methods is a violation", () => {
    const options: FuzzCase = { ...planEntry, method: "OPTIONS", body: undefined, secrets: [] }
    const { "content-type": _, ...bodiless } = headers
    const answer = (allow: string): RawResponse => ({
      status: 204,
      headers: { ...bodiless, allow },
      body: Buffer.alloc(0)
    })
    expect(checkResponse(fixture, options, answer("OPTIONS, POST"))).toEqual([])
    expect(checkResponse(fixture, options, answer("OPTIONS, POST, PUT")).join("\n")).toMatch(
      /Allow OPTIONS, POST, PUT, expected OPTIONS, POST/
    )
  })

  it("a change of stored data that no 2xx made is a violation", async () => {
    const server = await startWith(startKoaServer)(fixture.seed)
    const agent = keepAliveAgent(2)
    try {
      const models = await snapshotModels(server.url, agent, fixture)
      const reads = Object.keys(models.a.records)
      // Every record a user's read of the contract reads (its declared `records`), whatever they are.
      expect(reads).toEqual(
        Object.values(operations).flatMap((operation) =>
          operation.access === "user" &&
          operation.params === undefined &&
          operation.records !== "none" &&
          ("reads" in operation.records || "lists" in operation.records)
            ? ["reads" in operation.records ? operation.records.reads : operation.records.lists]
            : []
        )
      )
      expect(reads).toContain("preferences")
      // The model says each of A's reads showed something the store never held, as if a refused request had changed
      // it: every user read of the contract is checked, by the record its declaration names.
      for (const read of reads) models.a.records[read] = { changed: "by no 2xx" }
      const outcome = await runFuzzBatch(server.url, agent, fixture, models, [], 2)
      for (const read of reads) expect(outcome.problems.join("\n")).toContain(`user a: ${read} answered`)
      expect(outcome.problems.join("\n")).not.toContain("user b:")
    } finally {
      agent.destroy()
      await server.close()
    }
  })
})

import { readFileSync } from "node:fs"
import { send, type RawRequest, type RawResponse } from "@accord/conformance"
import { afterAll, describe, expect, it } from "@effect/vitest"
import type { StartServer } from "./http-conformance.js"

// Accord mounted inside a host application (docs/api.md, "Routes"; each adapter's README): what every binding must
// keep of its host and of Accord, as `runHttpConformance` is the behaviour every server must have. Each adapter's
// embedding test starts its README's example and calls this with what differs between hosts (its quirks); what only
// one host has (Express's sub-routers, Fastify's hooks) stays in that test.

const PROBLEM_TYPE = "application/problem+json; charset=utf-8"
const AUTH = { Authorization: "Bearer dev-token-u1" }
const JSON_USER = { ...AUTH, "Content-Type": "application/json" }
const PREFERENCES = "/api/users/v1/preferences/language/"

/** The README example of every adapter: a host app with its own `POST /orders` and error format, Accord under /api. */
export interface EmbeddingOptions {
  /** The host framework, as the tests name it. */
  readonly host: string
  /** The README example, listening: its base URL, and how to close it once the suite is done. */
  readonly url: string
  readonly close: () => Promise<void>
  /** The test file that runs the example between `// README:start` and `// README:end`, and the README that shows it. */
  readonly example: { readonly source: URL; readonly readme: URL }
  /** A media type the host's own parsers leave to Accord, default `text/plain` (Fastify parses that one itself). */
  readonly otherMediaType?: string
  /**
   * The host answers a path with a malformed percent-escape itself, before any route of its (Fastify's router decodes
   * the path first); default false: Accord's 404.
   */
  readonly hostRefusesMalformedPaths?: boolean
  /**
   * Accord behind a host that reads every body before Accord's router (what each README warns about), on a seed with
   * the token `greedy-token`: its answer must still be a clean problem, not a hang or a 500. None: the host cannot be
   * set up so (Fastify keeps each plugin's parsing to itself).
   */
  readonly behindGreedyParser?: StartServer
}

const bodyOf = (response: RawResponse): unknown => JSON.parse(response.body.toString("utf8"))

/** What a request to the README example's host route or Accord's answers, for every host. */
export const runEmbeddingSuite = (options: EmbeddingOptions): void => {
  const { host, url } = options
  // Express matches its mount path case-insensitively, and every host a prefix of a longer segment; Accord does not.
  const outside = ["/elsewhere", "/API/health", "/apis"]
  const otherMediaType = options.otherMediaType ?? "text/plain"
  const orders = (body: string): RawRequest => ({
    method: "POST",
    path: "/orders",
    headers: { "Content-Type": "application/json" },
    body
  })

  // At the file's end: a host's own tests may still call the example.
  afterAll(() => options.close())

  describe(`Accord inside a host ${host} app (the README example)`, () => {
    it("the host's route keeps its own body parsing", async () => {
      const response = await send(url, orders('{"sku":"A-1"}'))
      expect(response.status).toBe(200)
      expect(bodyOf(response)).toEqual({ received: { sku: "A-1" } })
    })

    it("the host's error handler still formats the host's errors", async () => {
      const response = await send(url, orders("{bad"))
      expect(response.status).toBe(400)
      expect(bodyOf(response)).toHaveProperty("host_error")
    })

    it("paths outside the prefix keep the host's 404", async () => {
      for (const path of outside) {
        const response = await send(url, { method: "GET", path })
        expect(response.status, path).toBe(404)
        expect(response.headers["content-type"], path).not.toBe(PROBLEM_TYPE)
      }
    })

    it("Accord's routes answer under the prefix, with the full path (the mount path is not stripped)", async () => {
      expect((await send(url, { method: "GET", path: "/api/health" })).status).toBe(200)
      expect((await send(url, { method: "GET", path: "/api/health?probe=1" })).status).toBe(200)
      const updated = await send(url, {
        method: "PUT",
        path: PREFERENCES,
        headers: JSON_USER,
        body: '{"language":"EN-us"}'
      })
      expect(updated.status).toBe(200)
      expect(bodyOf(updated)).toMatchObject({ language: "en-US" })
      const created = await send(url, {
        method: "POST",
        path: "/api/plans/v1/subscription-plans/public/",
        headers: JSON_USER,
        body: '{"email":"ada@Example.COM","password":"correct horse"}'
      })
      expect(created.status).toBe(201)
      expect(created.body.toString()).toBe('{"email":"ada@example.com","password":"********"}')
      // Written as the core wrote it: the core's Content-Type, no ETag of the host's.
      expect(created.headers["content-type"]).toBe("application/json; charset=utf-8")
      expect(created.headers).not.toHaveProperty("etag")
    })

    it("Accord's errors are its own problems, never the host's format", async () => {
      const cases: ReadonlyArray<readonly [RawRequest, string]> = [
        [{ method: "PUT", path: PREFERENCES, headers: JSON_USER, body: "{bad" }, "invalid_json"],
        [
          { method: "PUT", path: PREFERENCES, headers: { ...AUTH, "Content-Type": otherMediaType }, body: "{}" },
          "unsupported_media_type"
        ],
        [
          {
            method: "PUT",
            path: PREFERENCES,
            headers: { ...JSON_USER, "Content-Type": "application/json; charset=latin1" },
            body: "{}"
          },
          "unsupported_media_type"
        ],
        [
          { method: "PUT", path: PREFERENCES, headers: { "Content-Type": otherMediaType }, body: "{bad" },
          "unauthenticated"
        ],
        [
          {
            method: "PUT",
            path: PREFERENCES,
            headers: JSON_USER,
            body: `{"language":"${"a".repeat(20_000)}"}`
          },
          "payload_too_large"
        ],
        [{ method: "GET", path: "/api/nope" }, "not_found"],
        [{ method: "GET", path: "/api" }, "not_found"],
        ...(options.hostRefusesMalformedPaths === true
          ? []
          : [[{ method: "GET", path: "/api/%zz" }, "not_found"] as const]),
        [{ method: "DELETE", path: "/api/health" }, "method_not_allowed"]
      ]
      for (const [request, code] of cases) {
        const response = await send(url, request)
        const label = `${request.method} ${request.path} ${JSON.stringify(request.headers)}`
        expect(response.headers["content-type"], label).toBe(PROBLEM_TYPE)
        expect(bodyOf(response), label).toMatchObject({ code })
      }
    })

    it("README.md shows exactly this example", () => {
      const source = readFileSync(options.example.source, "utf8")
      const start = "// README:start\n"
      const example = source.slice(source.indexOf(start) + start.length, source.indexOf("// README:end"))
      expect(example.length).toBeGreaterThan(0)
      expect(readFileSync(options.example.readme, "utf8")).toContain("```ts\n" + example + "```\n")
    })
  })

  const greedy = options.behindGreedyParser
  if (greedy !== undefined)
    describe(`a host ${host} app that reads every body before Accord's router`, () => {
      it("answers 400 invalid_json (the body could not be read), 401 first without a credential", async () => {
        const running = await greedy({ users: [{ id: "u_g", token: "greedy-token" }] })
        try {
          const body = '{"language":"fr"}'
          const consumed = await send(running.url, {
            method: "PUT",
            path: PREFERENCES,
            headers: { Authorization: "Bearer greedy-token", "Content-Type": "application/json" },
            body
          })
          expect(consumed.status).toBe(400)
          expect(bodyOf(consumed)).toMatchObject({ code: "invalid_json", detail: "The body could not be read." })
          const anonymous = await send(running.url, {
            method: "PUT",
            path: PREFERENCES,
            headers: { "Content-Type": "application/json" },
            body
          })
          expect(bodyOf(anonymous)).toMatchObject({ code: "unauthenticated" })
        } finally {
          await running.close()
        }
      })
    })
}

import { startExpressServer } from "@accord/adapter-express"
import { startFastifyServer } from "@accord/adapter-fastify"
import { startFetchServer } from "@accord/adapter-fetch/node"
import { startKoaServer } from "@accord/adapter-koa"
import { paths, send } from "@accord/conformance"
import { startWith, type StartAdapter } from "@accord/test-support"
import { describe, expect, it } from "@effect/vitest"

// docs/api.md, "Conditional requests": the If-Match check and the write are one atomic step, so of N PUTs sent at once
// with the same If-Match exactly one writes; the others are 412 and change nothing. The PostgreSQL twin, two
// processes on one database: packages/server/test/if-match-race.pg.test.ts.

const CLIENTS = 40
const user = { id: "race_u1", token: "if-match-race-token" }
const seed = { users: [user] }
const authorization = { Authorization: `Bearer ${user.token}` }

const adapters: ReadonlyArray<readonly [string, StartAdapter]> = [
  ["koa", startKoaServer],
  ["fastify", startFastifyServer],
  ["express", startExpressServer],
  ["fetch", startFetchServer]
]

describe.each(adapters)("If-Match under concurrency on %s with the memory store", (_name, start) => {
  it(`${CLIENTS} PUTs of the preferences with the same If-Match: exactly one 200, the others 412`, async () => {
    const server = await startWith(start)(seed)
    try {
      const read = await send(server.url, { method: "GET", path: paths.preferences, headers: authorization })
      const etag = read.headers["etag"] ?? ""
      expect(etag).toMatch(/^"/)
      // Each client writes a value of its own, so that the winner's write changes the representation.
      const responses = await Promise.all(
        Array.from({ length: CLIENTS }, (_, index) =>
          send(server.url, {
            method: "PUT",
            path: paths.preferences,
            headers: { ...authorization, "Content-Type": "application/json", "If-Match": etag },
            body: JSON.stringify({ timezone: (index % 2 === 0 ? 15 : -15) * (Math.floor(index / 2) + 1) })
          })
        )
      )
      const statuses = responses.map((res) => res.status)
      expect(statuses.filter((status) => status === 200)).toHaveLength(1)
      expect(statuses.filter((status) => status === 412)).toHaveLength(CLIENTS - 1)
      const winner = responses.find((res) => res.status === 200)
      const after = await send(server.url, { method: "GET", path: paths.preferences, headers: authorization })
      expect(after.body.toString("utf8")).toBe(winner?.body.toString("utf8"))
      expect(after.headers["etag"]).toBe(winner?.headers["etag"])
    } finally {
      await server.close()
    }
  })
})

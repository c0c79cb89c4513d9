import { paths, send } from "@accord/conformance"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import { buildServer, makeTempDir, spawnCli, stopped, type Cli, killLeftovers } from "./cli-helpers.js"
import { adminQuery, databaseUrl, dropSchema, freshSchema, skipReason } from "./postgres-helpers.js"

// docs/api.md, "Conditional requests": If-Match is checked atomically with the write (a compare-and-set: the write
// happens only if the record is still the version the condition was judged on), so of N PUTs with the same If-Match
// split between two processes on one database exactly one writes.

const url = databaseUrl ?? ""
const CLIENTS = 60
const run = randomBytes(4).toString("hex")
const user = { id: `race_${run}`, token: `if-match-race-${run}` }
const methodIds = [`pm_a_${run}`, `pm_b_${run}`]
const seed = { users: [user], payment_methods: methodIds.map((id) => ({ id, user_id: user.id })) }
const authorization = { Authorization: `Bearer ${user.token}` }

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined
    ? `If-Match under concurrency, two processes on one database (${skipReason})`
    : "If-Match under concurrency, two processes on one database",
  () => {
    const schema = freshSchema()
    let temp: Awaited<ReturnType<typeof makeTempDir>> | undefined
    const clis: Array<Cli> = []
    let urls: ReadonlyArray<string> = []

    beforeAll(async () => {
      buildServer()
      temp = await makeTempDir()
      const seedPath = await temp.write("seed.json", seed)
      const common = ["--store", "postgres", "--database-url", url, "--database-schema", schema, "--port", "0"]
      // The first migrates and seeds; the second starts on the migrated schema.
      clis.push(spawnCli([...common, "--seed", seedPath, "--adapter", "fastify"]))
      await clis[0]?.listening
      clis.push(spawnCli([...common, "--adapter", "koa"]))
      urls = await Promise.all(clis.map((cli) => cli.listening))
    }, 120_000)
    afterAll(async () => {
      await killLeftovers(clis)
      await temp?.cleanup()
      await dropSchema(url, schema)
    })

    it(`${CLIENTS} PUTs of the preferences with the same If-Match, split between the processes: one 200, the others 412`, async () => {
      const read = await send(urls[0] ?? "", { method: "GET", path: paths.preferences, headers: authorization })
      const etag = read.headers["etag"] ?? ""
      expect(etag).toMatch(/^"/)
      const responses = await Promise.all(
        Array.from({ length: CLIENTS }, (_, index) =>
          send(urls[index % urls.length] ?? "", {
            method: "PUT",
            path: paths.preferences,
            headers: { ...authorization, "Content-Type": "application/json", "If-Match": etag },
            // A value of its own per client: the winner's write changes the representation.
            body: JSON.stringify({ timezone: (index % 2 === 0 ? 15 : -15) * (Math.floor(index / 2) + 1) }),
            timeoutMs: 60_000
          })
        )
      )
      const statuses = responses.map((res) => res.status)
      expect(
        responses.filter((res) => res.status !== 200 && res.status !== 412).map((res) => res.body.toString("utf8"))
      ).toEqual([])
      expect(statuses.filter((status) => status === 200)).toHaveLength(1)
      expect(statuses.filter((status) => status === 412)).toHaveLength(CLIENTS - 1)
      const winner = responses.find((res) => res.status === 200)
      const stored = await adminQuery(url, `SELECT timezone FROM "${schema}".preferences WHERE user_id = $1`, [user.id])
      const written = JSON.parse(winner?.body.toString("utf8") ?? "{}") as { timezone?: number }
      expect(stored.rows).toEqual([{ timezone: written.timezone }])
    }, 120_000)

    it("set-default with an If-Match gone stale through the other process is 412, and the default stays", async () => {
      const [first = "", second = ""] = methodIds
      // The method's ETag is what its set-default answered: make the other the default, then read `first`'s by
      // making it the default and the other again (its representation then is is_default false, with its updated_at).
      const put = (base: string, id: string, ifMatch?: string) =>
        send(base, {
          method: "PUT",
          path: paths.paymentMethod(id),
          headers: ifMatch === undefined ? authorization : { ...authorization, "If-Match": ifMatch },
          timeoutMs: 60_000
        })
      const chosen = await put(urls[0] ?? "", first)
      expect(chosen.status).toBe(200)
      const etag = chosen.headers["etag"] ?? ""
      expect((await put(urls[1] ?? "", first, etag)).status).toBe(200)
      // The default moves to `second`: `first`'s representation changes, so its ETag is stale.
      expect((await put(urls[0] ?? "", second)).status).toBe(200)
      const stale = await put(urls[1] ?? "", first, etag)
      expect(stale.status).toBe(412)
      const defaults = await adminQuery(
        url,
        `SELECT id FROM "${schema}".payment_methods WHERE user_id = $1 AND is_default`,
        [user.id]
      )
      expect(defaults.rows).toEqual([{ id: second }])

      const exits = await Promise.all(clis.map((cli) => stopped(cli)))
      expect(exits).toEqual([
        { code: 0, signal: null },
        { code: 0, signal: null }
      ])
    }, 120_000)
  }
)

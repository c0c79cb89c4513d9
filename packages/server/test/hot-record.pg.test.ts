import { paths, send, type RawResponse } from "@accord/conformance"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { buildServer, makeTempDir, spawnCli, type Cli, killLeftovers } from "./cli-helpers.js"
import { adminQuery, databaseUrl, dropSchema, freshSchema, skipReason } from "./postgres-helpers.js"

// docs/operations.md, "Writes under contention" (issue 36): fifty writers of one record, split between two processes
// on one database, all finish, each with a 200 or the store's 503 with Retry-After, and the invariants hold exactly:
// every 200 is a version of its own with its event, the events' sequences have no gap, one default stays. A write that
// cannot get its record's turn within the query timeout answers that 503 rather than wait.

const url = databaseUrl ?? ""
const WRITERS = 50
const run = randomBytes(4).toString("hex")
const user = { id: `hot_${run}`, token: `hot-record-${run}` }
const methodIds = Array.from({ length: 4 }, (_, index) => `pm_${index}_${run}`)
const seed = { users: [user], payment_methods: methodIds.map((id) => ({ id, user_id: user.id })) }
const authorization = { Authorization: `Bearer ${user.token}` }

/** A 200, or the store's 503 with its Retry-After (anything else is reported with its body). */
const unexpected = (responses: ReadonlyArray<RawResponse>) =>
  responses
    .filter(
      (res) => res.status !== 200 && !(res.status === 503 && /^[1-9][0-9]*$/.test(res.headers["retry-after"] ?? ""))
    )
    .map((res) => `${res.status} ${res.body.toString("utf8")}`)

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined
    ? `one record, fifty writers, two processes on one database (${skipReason})`
    : "one record, fifty writers, two processes on one database",
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
      clis.push(spawnCli([...common, "--seed", seedPath, "--adapter", "fastify"]))
      await clis[0]?.listening
      clis.push(spawnCli([...common, "--adapter", "koa"]))
      // A third whose statements, and so its writers' turns, are bounded by 300 ms: the 503 test's.
      clis.push(spawnCli([...common, "--adapter", "fastify", "--database-query-timeout-ms", "300"]))
      urls = await Promise.all(clis.map((cli) => cli.listening))
    }, 120_000)
    afterAll(async () => {
      await killLeftovers(clis)
      await temp?.cleanup()
      await dropSchema(url, schema)
    })

    /** Every subject's events numbered 1, 2, 3, ... with no gap, up to the sequence its counter holds. */
    const expectGapFree = async () => {
      const subjects = await adminQuery(
        url,
        `SELECT s.subject, s.last_sequence::int AS last, count(e.id)::int AS count,
           coalesce(max(e.sequence), 0)::int AS max, count(DISTINCT e.sequence)::int AS distinct
         FROM "${schema}".event_subjects AS s LEFT JOIN "${schema}".events AS e ON e.subject = s.subject
         GROUP BY s.subject, s.last_sequence`
      )
      for (const row of subjects.rows as Array<{ last: number; count: number; max: number; distinct: number }>) {
        expect({ count: row.count, max: row.max, distinct: row.distinct }).toEqual({
          count: row.last,
          max: row.last,
          distinct: row.last
        })
      }
    }

    it(`${WRITERS} PUTs of one user's preferences, each a value of its own: every 200 a version with its event`, async () => {
      const countEvents = async () =>
        (
          (await adminQuery(url, `SELECT count(*)::int AS count FROM "${schema}".events WHERE owner = $1`, [user.id]))
            .rows[0] as { count: number }
        ).count
      const before = await countEvents()
      const responses = await Promise.all(
        Array.from({ length: WRITERS }, (_, index) =>
          send(urls[index % 2] ?? "", {
            method: "PUT",
            path: paths.preferences,
            headers: { ...authorization, "Content-Type": "application/json" },
            body: JSON.stringify({ timezone: (index + 1) * 15 }),
            timeoutMs: 60_000
          })
        )
      )
      expect(unexpected(responses)).toEqual([])
      const written = responses.filter((res) => res.status === 200)
      expect(written.length).toBeGreaterThan(0)
      // Each 200 changed the record (its value differs from every other writer's): a version, and an event, of its own.
      expect(new Set(written.map((res) => res.headers["etag"])).size).toBe(written.length)
      expect((await countEvents()) - before).toBe(written.length)
      const stored = await adminQuery(url, `SELECT timezone FROM "${schema}".preferences WHERE user_id = $1`, [user.id])
      const answered = written.map((res) => (JSON.parse(res.body.toString("utf8")) as { timezone: number }).timezone)
      expect(answered).toContain((stored.rows[0] as { timezone: number }).timezone)
      await expectGapFree()
    }, 120_000)

    it(`${WRITERS} set-defaults of one user's methods: one default, and its events without a gap`, async () => {
      const responses = await Promise.all(
        Array.from({ length: WRITERS }, (_, index) =>
          send(urls[index % 2] ?? "", {
            method: "PUT",
            path: paths.paymentMethod(methodIds[index % methodIds.length] ?? ""),
            headers: authorization,
            timeoutMs: 60_000
          })
        )
      )
      expect(unexpected(responses)).toEqual([])
      const defaults = await adminQuery(
        url,
        `SELECT id FROM "${schema}".payment_methods WHERE user_id = $1 AND is_default`,
        [user.id]
      )
      expect(defaults.rows).toHaveLength(1)
      await expectGapFree()
    }, 120_000)

    it("writers whose turn would come after the query timeout answer 503 with Retry-After, and never hang", async () => {
      // The row held locked by another connection: the first writer's statement waits on it until the server's
      // statement_timeout cancels it, and holds the record's turn meanwhile, so the writers queued behind it cannot get
      // their turn within the 300 ms. No duration is judged: only that every writer is answered, with a 503.
      const holder = new pg.Client({ connectionString: url })
      await holder.connect()
      try {
        await holder.query("BEGIN")
        await holder.query(`SELECT id FROM "${schema}".preferences WHERE user_id = $1 FOR UPDATE`, [user.id])
        const responses = await Promise.all(
          Array.from({ length: 6 }, (_, index) =>
            send(urls[2] ?? "", {
              method: "PUT",
              path: paths.preferences,
              headers: { ...authorization, "Content-Type": "application/json" },
              body: JSON.stringify({ timezone: -(index + 1) * 15 }),
              timeoutMs: 60_000
            })
          )
        )
        expect(responses.map((res) => res.status)).toEqual(Array.from({ length: 6 }, () => 503))
        expect(unexpected(responses)).toEqual([])
        for (const res of responses) {
          expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/)
          expect((JSON.parse(res.body.toString("utf8")) as { code: string }).code).toBe("unavailable")
        }
      } finally {
        await holder.query("ROLLBACK")
        await holder.end()
      }
      // The lock gone, the record's writers are served again.
      const after = await send(urls[2] ?? "", {
        method: "PUT",
        path: paths.preferences,
        headers: { ...authorization, "Content-Type": "application/json" },
        body: JSON.stringify({ timezone: -600 }),
        timeoutMs: 60_000
      })
      expect(after.status).toBe(200)
      await expectGapFree()
    }, 120_000)
  }
)

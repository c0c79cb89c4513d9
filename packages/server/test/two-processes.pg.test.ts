import { paths, send, type RawResponse } from "@accord/conformance"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import { migrations as allMigrations } from "@accord/store-postgres"
import { buildServer, makeTempDir, spawnCli, stopped, type Cli, killLeftovers } from "./cli-helpers.js"
import { adminQuery, databaseUrl, dropSchema, freshSchema, skipReason } from "./postgres-helpers.js"

const url = databaseUrl ?? ""
const REQUESTS = 500
const run = randomBytes(4).toString("hex")
const user = { id: `two_${run}`, token: `two-processes-${run}` }
const methodIds = Array.from({ length: 10 }, (_, index) => `pm_${index}_${run}`)
const seed = {
  users: [user],
  payment_methods: methodIds.map((id) => ({ id, user_id: user.id }))
}

interface MethodBody {
  readonly id: string
  readonly is_default: boolean
}

const json = <A>(res: RawResponse): A => JSON.parse(res.body.toString("utf8")) as A

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined
    ? `two server processes on one database (${skipReason})`
    : "two server processes on one database",
  () => {
    const schema = freshSchema()
    let temp: Awaited<ReturnType<typeof makeTempDir>> | undefined
    let seedPath = ""
    const clis: Array<Cli> = []

    beforeAll(async () => {
      buildServer()
      temp = await makeTempDir()
      seedPath = await temp.write("seed.json", seed)
    }, 120_000)
    afterAll(async () => {
      // A failed test may leave a process running; it must not outlive the suite or hold the schema.
      await killLeftovers(clis)
      await temp?.cleanup()
      await dropSchema(url, schema)
    })

    it(`start at the same moment on a fresh schema, migrate once, and keep one default under ${REQUESTS} concurrent set-default requests split between them`, async () => {
      const common = [
        "--store",
        "postgres",
        "--database-url",
        url,
        "--database-schema",
        schema,
        "--port",
        "0",
        "--seed",
        seedPath
      ]
      // Both spawned before either is awaited: their migrations and seed loads race on an empty schema.
      clis.push(spawnCli([...common, "--adapter", "fastify"]), spawnCli([...common, "--adapter", "koa"]))
      const urls = await Promise.all(clis.map((cli) => cli.listening))

      const migrations = await adminQuery(url, `SELECT version FROM "${schema}".accord_migrations ORDER BY version`)
      expect(migrations.rows).toEqual(allMigrations.map((migration) => ({ version: migration.version })))
      // Each seed row was inserted by exactly one of the two. Log lines are batched, so they may follow "listening".
      await Promise.all(clis.map((cli) => cli.logged("seed loaded")))
      const seedReports = clis.map((cli) => cli.logLines().find((line) => line["msg"] === "seed loaded"))
      const added = (key: string) => seedReports.reduce((sum, report) => sum + Number(report?.[key]), 0)
      expect(added("credentialsAdded")).toBe(1)
      expect(added("paymentMethodsAdded")).toBe(methodIds.length)

      const authorization = { Authorization: `Bearer ${user.token}` }
      const requests = Array.from({ length: REQUESTS }, (_, index) => {
        // Alternate processes; each process gets every method; half the requests carry the optional body.
        const id = methodIds[Math.floor(index / 2) % methodIds.length] ?? ""
        const target = urls[index % urls.length] ?? ""
        const withBody = index % 4 < 2
        return {
          id,
          sent: send(target, {
            method: "PUT",
            path: paths.paymentMethod(id),
            headers: withBody ? { ...authorization, "Content-Type": "application/json" } : authorization,
            ...(withBody && { body: '{"is_default":true}' }),
            timeoutMs: 60_000
          })
        }
      })
      const responses = await Promise.all(requests.map((request) => request.sent))
      // A writer whose turn on the record does not come within the query timeout answers 503 with Retry-After
      // (docs/operations.md, "Writes under contention"); every other answer is the 200 of its own method.
      const busy = (res: (typeof responses)[number]) =>
        res.status === 503 &&
        res.headers["retry-after"] !== undefined &&
        res.body.toString("utf8").includes('"code":"unavailable"')
      const unexpected = responses.flatMap((res, index) =>
        res.status === 200 || busy(res) ? [] : [`#${index}: ${res.status} ${res.body.toString("utf8").slice(0, 200)}`]
      )
      expect(unexpected).toEqual([])
      expect(responses.filter((res) => res.status === 200).length).toBeGreaterThan(0)
      responses.forEach((res, index) => {
        if (res.status === 200)
          expect(json<MethodBody>(res)).toMatchObject({ id: requests[index]?.id, is_default: true })
      })

      const lists = await Promise.all(
        urls.map(async (base) => {
          const res = await send(base, { method: "GET", path: paths.paymentMethods, headers: authorization })
          expect(res.status).toBe(200)
          return json<{ data: ReadonlyArray<MethodBody> }>(res).data
        })
      )
      const defaults = lists.map((list) => list.filter((method) => method.is_default).map((method) => method.id))
      expect(defaults[0]).toHaveLength(1)
      expect(defaults[1]).toEqual(defaults[0])
      for (const list of lists) expect(list.map((method) => method.id)).toEqual([...methodIds].sort())
      const stored = await adminQuery(
        url,
        `SELECT id FROM "${schema}".payment_methods WHERE user_id = $1 AND is_default`,
        [user.id]
      )
      expect(stored.rows.map((row: { id: string }) => row.id)).toEqual(defaults[0])

      const exits = await Promise.all(clis.map((cli) => stopped(cli)))
      expect(exits).toEqual([
        { code: 0, signal: null },
        { code: 0, signal: null }
      ])
    }, 120_000)
  }
)

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import { createServer, type AddressInfo, type Socket } from "node:net"
import { paths, send } from "@accord/conformance"
import { buildServer, makeTempDir, spawnCli, stopped, type Cli, killLeftovers } from "./cli-helpers.js"
import { adminQuery, databaseUrl, dropSchema, freshSchema, skipReason } from "./postgres-helpers.js"
import { newSecret, ok, startReceiver, type Receiver } from "./webhook-receiver.js"
import { runMigrateCli } from "@accord/store-postgres"

/** `accord-migrate` with the suite's database in its environment, as an operator runs it beside the servers. */
const runMigrate = async (argv: ReadonlyArray<string>) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const code = await runMigrateCli(
    argv,
    { DATABASE_URL: databaseUrl },
    {
      out: (line) => out.push(line),
      err: (line) => err.push(line)
    }
  )
  return { code, out: out.join("\n"), err: err.join("\n") }
}

// docs/operations.md, "Events", on PostgreSQL: the outbox's claims (FOR UPDATE SKIP LOCKED) and its durability, with
// real server processes and a receiver that verifies every signature. Every wait is for a count.

const url = databaseUrl ?? ""
const run = randomBytes(4).toString("hex")
const users = Array.from({ length: 4 }, (_, index) => ({ id: `ev_${index}_${run}`, token: `events-${index}-${run}` }))
const seed = { users }

/** Resolves once `condition` holds, looking again after each short pause (bounded by the test's own time-out). */
const eventually = async (condition: () => Promise<boolean> | boolean): Promise<void> => {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 20))
}

/**
 * `count` changes of the users' timezones, spread over `targets`, each answered 200: multiples of `step`, whose sign
 * keeps one test's values apart from another's (the writes race, so any of a user's values may be the last stored, and
 * writing it again would be a no-op, which records no event).
 */
const makeChanges = async (targets: ReadonlyArray<string>, count: number, step: number) => {
  const answers = await Promise.all(
    Array.from({ length: count }, (_, index) => {
      const user = users[index % users.length] ?? users[0]
      return send(targets[index % targets.length] ?? "", {
        method: "PUT",
        path: paths.preferences,
        headers: { Authorization: `Bearer ${user?.token ?? ""}`, "Content-Type": "application/json" },
        // Each user's writes in turn set a new value: every one is a change.
        body: JSON.stringify({ timezone: step * (1 + Math.floor(index / users.length)) })
      })
    })
  )
  expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200))
}

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined ? `events on PostgreSQL (${skipReason})` : "events on PostgreSQL",
  () => {
    const schema = freshSchema()
    const secret = newSecret()
    let temp: Awaited<ReturnType<typeof makeTempDir>> | undefined
    let seedPath = ""
    const clis: Array<Cli> = []
    const receivers: Array<Receiver> = []

    beforeAll(async () => {
      buildServer()
      temp = await makeTempDir()
      seedPath = await temp.write("seed.json", seed)
    }, 120_000)
    afterAll(async () => {
      await killLeftovers(clis)
      await Promise.all(receivers.map((receiver) => receiver.close()))
      await temp?.cleanup()
      await dropSchema(url, schema)
    })

    const serverArgs = (webhookUrl: string) => [
      "--store",
      "postgres",
      "--database-url",
      url,
      "--database-schema",
      schema,
      "--port",
      "0",
      "--seed",
      seedPath,
      "--webhook-url",
      webhookUrl,
      "--events-poll-ms",
      "10",
      "--events-backoff-ms",
      "10",
      // Short attempts, so a claim that a killed server held ends soon (twice the attempt's bound).
      "--webhook-connect-timeout-ms",
      "500",
      "--webhook-timeout-ms",
      "1000"
    ]
    const statuses = async () =>
      (await adminQuery(url, `SELECT status, count(*)::int AS count FROM "${schema}".events GROUP BY status`))
        .rows as ReadonlyArray<{ status: string; count: number }>

    it("two processes on one database deliver each event once", async () => {
      const receiver = await startReceiver([secret], ok)
      receivers.push(receiver)
      const both = [
        spawnCli(serverArgs(receiver.url), { WEBHOOK_SECRET: secret }),
        spawnCli(serverArgs(receiver.url), { WEBHOOK_SECRET: secret })
      ]
      clis.push(...both)
      const targets = await Promise.all(both.map((cli) => cli.listening))
      await makeChanges(targets, 80, 15)
      await eventually(async () => (await statuses()).some((row) => row.status === "delivered" && row.count === 80))
      expect(await statuses()).toEqual([{ status: "delivered", count: 80 }])
      expect(receiver.unverified).toEqual([])
      const ids = receiver.deliveries.map((delivery) => delivery.id)
      expect(new Set(ids).size).toBe(80)
      // Each once: no event went to the receiver twice while both processes were healthy.
      expect(ids).toHaveLength(80)
      expect(await Promise.all(both.map((cli) => stopped(cli)))).toEqual([
        { code: 0, signal: null },
        { code: 0, signal: null }
      ])
    }, 120_000)

    it("kill -9 with events committed and not delivered, some held by its claim: delivered after the restart", async () => {
      // The receiver's port, first held by a server that accepts and never answers: every attempt runs to its
      // time-out, so the killed server dies holding the claim of the events it was attempting, which the next one
      // takes when the claim ends (docs/operations.md, "Events").
      const sockets = new Set<Socket>()
      const silent = createServer((socket) => void sockets.add(socket))
      await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
      const port = (silent.address() as AddressInfo).port
      const webhookUrl = `http://127.0.0.1:${port}/hooks`
      const before = (await adminQuery(url, `SELECT count(*)::int AS count FROM "${schema}".events`)).rows[0] as {
        count: number
      }
      const first = spawnCli(serverArgs(webhookUrl), { WEBHOOK_SECRET: secret })
      clis.push(first)
      await makeChanges([await first.listening], 12, -15)
      await first.logged("event delivery failed; retrying")
      first.child.kill("SIGKILL")
      expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" })
      const pending = await statuses()
      expect(pending.find((row) => row.status === "pending")?.count).toBe(12)
      const held = (
        await adminQuery(
          url,
          `SELECT count(*)::int AS count FROM "${schema}".event_deliveries WHERE status = 'pending' AND due_at > now()`
        )
      ).rows[0] as { count: number }
      expect(held.count).toBeGreaterThan(0)
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => silent.close(() => resolve()))

      const receiver = await startReceiver([secret], ok, port)
      receivers.push(receiver)
      const second = spawnCli(serverArgs(webhookUrl), { WEBHOOK_SECRET: secret })
      clis.push(second)
      await second.listening
      await eventually(() => receiver.deliveries.length >= 12)
      await eventually(async () => (await statuses()).every((row) => row.status === "delivered"))
      expect(receiver.unverified).toEqual([])
      const total = (await adminQuery(url, `SELECT count(*)::int AS count FROM "${schema}".events`)).rows[0] as {
        count: number
      }
      expect(total.count - before.count).toBe(12)
      expect(new Set(receiver.deliveries.map((delivery) => delivery.id)).size).toBe(12)
      expect(await stopped(second)).toEqual({ code: 0, signal: null })
    }, 120_000)

    it("a replayed event is retried on the usual schedule, not given up after one attempt", async () => {
      // Issue 35: a replayed event's give-up clock started at its change, so its first refusal after the replay gave it
      // up again at once.
      let refusals = Number.POSITIVE_INFINITY
      const receiver = await startReceiver([secret], (_request, response) => {
        if (refusals-- > 0) response.writeHead(500).end()
        else response.writeHead(204).end()
      })
      receivers.push(receiver)
      const server = spawnCli([...serverArgs(receiver.url), "--events-retry-for-s", "2"], { WEBHOOK_SECRET: secret })
      clis.push(server)
      await makeChanges([await server.listening], 1, 600)
      await server.logged("event delivery given up")
      // Refused twice more after the replay, then taken: given up again at once, it would never be.
      refusals = 2
      const replayed = await runMigrate(["replay-events", "--database-schema", schema])
      expect(replayed).toEqual({ code: 0, out: "1 failed event pending again", err: "" })
      await receiver.until(() => receiver.deliveries.length === 1)
      await eventually(async () => (await statuses()).every((row) => row.status === "delivered"))
      expect(await stopped(server)).toEqual({ code: 0, signal: null })
    }, 120_000)

    it("prunes delivered events older than --events-retention-days, in batches; keeps the others; the feed with them", async () => {
      const receiver = await startReceiver([secret], ok)
      receivers.push(receiver)
      const first = spawnCli(serverArgs(receiver.url), { WEBHOOK_SECRET: secret })
      clis.push(first)
      const before = await receiver.deliveries.length
      await makeChanges([await first.listening], 4, 705)
      await receiver.until(() => receiver.deliveries.length === before + 4)
      await eventually(async () => (await statuses()).every((row) => row.status === "delivered"))
      expect(await stopped(first)).toEqual({ code: 0, signal: null })
      // Aged: two delivered 40 days ago, one failed as long ago; the fourth is recent.
      const ids = receiver.deliveries.slice(before).map((delivery) => delivery.id)
      const [oldest, older, failed, recent] = ids
      await adminQuery(
        url,
        `UPDATE "${schema}".events SET at = now() - interval '40 days' WHERE id = ANY ($1::uuid[])`,
        [[oldest, older, failed]]
      )
      await adminQuery(url, `UPDATE "${schema}".events SET status = 'failed' WHERE id = $1::uuid`, [failed])
      const second = spawnCli([...serverArgs(receiver.url), "--events-retention-days", "30"], {
        WEBHOOK_SECRET: secret,
        LOG_LEVEL: "info"
      })
      clis.push(second)
      await second.listening
      await second.logged("delivered events pruned")
      const left = (await adminQuery(url, `SELECT id::text FROM "${schema}".events WHERE id = ANY ($1::uuid[])`, [ids]))
        .rows as ReadonlyArray<{ id: string }>
      expect(left.map((row) => row.id).sort()).toEqual([failed, recent].sort())
      const pruned = second.logLines().find((line) => line["msg"] === "delivered events pruned")
      expect(pruned).toMatchObject({ retentionDays: 30 })
      expect(pruned?.["count"]).toBe(2)
      expect(await stopped(second)).toEqual({ code: 0, signal: null })
    }, 120_000)
  }
)

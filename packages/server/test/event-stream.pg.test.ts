import { auditTarget, nextEvent, openEventStream, paths, send, type OpenStream } from "@accord/conformance"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import { buildServer, killLeftovers, makeTempDir, spawnCli, type Cli } from "./cli-helpers.js"
import { databaseUrl, dropSchema, freshSchema, skipReason } from "./postgres-helpers.js"

// docs/api.md, "Events": the live stream across processes on one PostgreSQL database. A change made through one
// process reaches a stream held on the other (LISTEN/NOTIFY, the outbox the truth); a process killed with SIGKILL
// loses nothing: the client reconnects to the other with its Last-Event-ID and gets every event once, in order.

const url = databaseUrl ?? ""
const run = randomBytes(4).toString("hex")
const user = { id: `live_${run}`, token: `live-stream-${run}` }
const seed = { users: [user] }

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined
    ? `events streams across two processes (${skipReason})`
    : "events streams across two processes",
  () => {
    const schema = freshSchema()
    let temp: Awaited<ReturnType<typeof makeTempDir>> | undefined
    const clis: Array<Cli> = []
    const streams: Array<OpenStream> = []

    beforeAll(async () => {
      buildServer()
      temp = await makeTempDir()
    }, 120_000)
    afterAll(async () => {
      for (const stream of streams) stream.close()
      await killLeftovers(clis)
      await temp?.cleanup()
      await dropSchema(url, schema)
    })

    const targetOf = (base: string) =>
      auditTarget({ url: `${base}/api`, userToken: user.token, otherUserToken: "-", clientToken: "-" })
    const put = async (base: string, timezone: number): Promise<void> => {
      const res = await send(base, {
        method: "PUT",
        path: paths.preferences,
        headers: { Authorization: `Bearer ${user.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ timezone })
      })
      expect(res.status).toBe(200)
    }
    const feedIds = async (base: string): Promise<ReadonlyArray<string>> => {
      const res = await send(base, {
        method: "GET",
        path: `${paths.events}?limit=100`,
        headers: { Authorization: `Bearer ${user.token}` }
      })
      expect(res.status).toBe(200)
      return (JSON.parse(res.body.toString("utf8")) as { data: ReadonlyArray<{ id: string }> }).data.map(
        (event) => event.id
      )
    }

    it("a change through one process reaches a stream held on the other; after kill -9, the other replays from Last-Event-ID, each event once, in order", async () => {
      const seedPath = (await temp?.write("seed.json", seed)) ?? ""
      const common = ["--store", "postgres", "--database-url", url, "--database-schema", schema, "--port", "0"]
      const holder = spawnCli([...common, "--seed", seedPath, "--adapter", "fastify"])
      clis.push(holder)
      const holderUrl = await holder.listening
      const writer = spawnCli([...common, "--adapter", "koa"])
      clis.push(writer)
      const writerUrl = await writer.listening

      const stream = await openEventStream(targetOf(holderUrl), user.token)
      streams.push(stream)
      expect(stream.status).toBe(200)
      expect((await stream.next())?.retry).toBe("2000")
      await put(writerUrl, 60)
      const first = await nextEvent(stream, "the change made on the other process")
      expect(first.id).toBe((await feedIds(writerUrl)).at(-1))

      // The holder dies without a word; three more changes are made meanwhile on the other.
      holder.child.kill("SIGKILL")
      await holder.exited
      for (const timezone of [120, 180, 240]) await put(writerUrl, timezone)
      const resumed = await openEventStream(targetOf(writerUrl), user.token, { "last-event-id": first.id ?? "" })
      streams.push(resumed)
      expect(resumed.status).toBe(200)
      await resumed.next()
      const replayed = [
        await nextEvent(resumed, "replay 1"),
        await nextEvent(resumed, "replay 2"),
        await nextEvent(resumed, "replay 3")
      ]
      const all = await feedIds(writerUrl)
      expect(replayed.map((block) => block.id)).toEqual(all.slice(all.indexOf(first.id ?? "") + 1))
      expect(all).toHaveLength(4)
      // Then live, once: the next change arrives, and nothing before it is sent again.
      await put(writerUrl, 300)
      expect((await nextEvent(resumed, "live after the replay")).id).toBe((await feedIds(writerUrl)).at(-1))
    }, 120_000)
  }
)

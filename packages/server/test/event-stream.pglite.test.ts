import { auditTarget, nextEvent, openEventStream, paths, send, type OpenStream } from "@accord/conformance"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { buildServer, killLeftovers, makeTempDir, spawnCli, type Cli } from "./cli-helpers.js"

// docs/api.md, "Events": on PGlite, the process that held a stream killed with SIGKILL, then started again on its
// data directory: the client reconnects with its Last-Event-ID and gets every event it had not, once, in order.

const user = { id: "live_pglite", token: "live-stream-pglite" }

describe("an events stream on PGlite across a kill -9 and a restart", () => {
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
  })

  const start = (dataDir: string, more: ReadonlyArray<string> = []): Cli => {
    const cli = spawnCli(["--store", "pglite", "--data-dir", dataDir, "--port", "0", ...more], { LOG_LEVEL: "warn" })
    clis.push(cli)
    return cli
  }
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

  it("replays after Last-Event-ID what the client had not: each event once, in order", async () => {
    const dataDir = `${temp?.dir ?? ""}/data`
    const seedPath = (await temp?.write("seed.json", { users: [user] })) ?? ""
    const first = start(dataDir, ["--seed", seedPath])
    const firstUrl = await first.listening
    const stream = await openEventStream(targetOf(firstUrl), user.token)
    streams.push(stream)
    expect(stream.status).toBe(200)
    await stream.next()
    await put(firstUrl, 60)
    const received = await nextEvent(stream, "live on the first process")
    // One more change, and the process dies at once: its event may or may not have reached the client.
    await put(firstUrl, 120)
    first.child.kill("SIGKILL")
    await first.exited
    stream.close()

    const second = start(dataDir)
    const secondUrl = await second.listening
    await put(secondUrl, 180)
    const resumed = await openEventStream(targetOf(secondUrl), user.token, { "last-event-id": received.id ?? "" })
    streams.push(resumed)
    expect(resumed.status).toBe(200)
    await resumed.next()
    const all = await feedIds(secondUrl)
    expect(all).toHaveLength(3)
    const missed = all.slice(all.indexOf(received.id ?? "") + 1)
    const replayed = []
    while (replayed.length < missed.length) replayed.push((await nextEvent(resumed, "replay")).id)
    expect(replayed).toEqual(missed)
  }, 180_000)
})

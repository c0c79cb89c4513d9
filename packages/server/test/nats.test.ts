import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, ManagedRuntime, Schema } from "effect"
import { DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream"
import { connect } from "@nats-io/transport-node"
import { toEventEnvelope } from "@accord/contract"
import { EventStore, Seed, TimezoneOffset, updateLanguagePreferences, UserId } from "@accord/domain"
import { makeMemoryStore } from "@accord/store-memory"
import { NATS_STREAM, natsSink, natsSubject, startEventRelay, type RelaySettings } from "../src/events.js"
import {
  bearer,
  buildServer,
  killLeftovers,
  makeTempDir,
  spawnCli,
  stopped,
  testSeed,
  USER_TOKEN,
  type Cli
} from "./cli-helpers.js"

// docs/operations.md, "Events": the relay's NATS JetStream sink, read back by a JetStream consumer. Needs a NATS server
// with JetStream: NATS_URL (e.g. nats://127.0.0.1:4222), as .ci/run sets it where one runs.

const natsUrl = process.env["NATS_URL"]
const skipReason = "NATS_URL is not set (a NATS server with JetStream, e.g. nats://127.0.0.1:4222)"

const USER = UserId.make(`u_nats_${Date.now()}`)

/** A relay to NATS alone, retrying after `backoffMs` and looking for events every few milliseconds. */
const natsOnly = (natsUrl: string, backoffMs: number): RelaySettings => ({
  webhookUrls: [],
  webhookKeys: [],
  webhookConnectTimeoutMs: 1000,
  webhookTimeoutMs: 1000,
  natsUrl,
  retryForMs: 86_400_000,
  backoffMs,
  pollMs: 5,
  retentionDays: 0
})

/** A TCP port nothing listens on now. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })
const seed = Schema.decodeUnknownSync(Seed)({ users: [{ id: USER, token: "nats-token" }] })

describe.skipIf(natsUrl === undefined)(
  natsUrl === undefined ? `NATS sink (skipped: ${skipReason})` : "NATS sink",
  () => {
    const url = natsUrl ?? ""
    const runtime = ManagedRuntime.make(makeMemoryStore(seed))
    afterAll(() => runtime.dispose())

    it("publishes each event to accord.events.<type> with its id as Nats-Msg-Id; a consumer reads each", async () => {
      const connection = await connect({ servers: url })
      try {
        const manager = await jetstreamManager(connection)
        // The sink creates the stream when missing; where it exists, the messages of this test come after its last.
        const { sink, ready, close } = await natsSink(url)
        await ready
        const first = (await manager.streams.info(NATS_STREAM)).state.last_seq + 1
        await close()
        for (const timezone of [15, 30, 45])
          await runtime.runPromise(updateLanguagePreferences(USER, { timezone: TimezoneOffset.make(timezone) }))
        const recorded = await runtime.runPromise(Effect.flatMap(EventStore, (events) => events.list(undefined, 100)))
        const settled: Array<string> = []
        let allSettled: () => void = () => undefined
        const done = new Promise<void>((resolve) => (allSettled = resolve))
        const relay = await startEventRelay(runtime, natsOnly(url, 1), {
          onSettled: (_event, _sink, settlement) => {
            settled.push(settlement.status)
            if (settled.filter((status) => status === "delivered").length === recorded.length) allSettled()
          }
        })
        await done
        await relay?.close()
        expect(sink.name).toBe("nats")

        const consumer = await jetstream(connection).consumers.get(NATS_STREAM, {
          deliver_policy: DeliverPolicy.StartSequence,
          opt_start_seq: first
        })
        const mine = new Set(recorded.map((event) => event.id))
        const received: Array<{ subject: string; id: string | undefined; body: string }> = []
        const messages = await consumer.consume()
        for await (const message of messages) {
          const id = message.headers?.get("Nats-Msg-Id")
          if (id !== undefined && mine.has(id)) received.push({ subject: message.subject, id, body: message.string() })
          if (received.length === recorded.length) break
        }
        // Published concurrently (docs/operations.md, "Events": no order across events); ids sort by creation.
        expect(received.sort((a, b) => ((a.id ?? "") < (b.id ?? "") ? -1 : 1))).toEqual(
          recorded.map((event) => ({
            subject: natsSubject("preferences.updated"),
            id: event.id,
            body: JSON.stringify(toEventEnvelope(event))
          }))
        )

        // A redelivery (at least once) is dropped by JetStream's duplicate window: the same id publishes nothing new.
        const before = (await manager.streams.info(NATS_STREAM)).state.messages
        const again = await natsSink(url)
        await again.ready
        const [event] = recorded
        if (event === undefined) throw new Error("no event")
        await Effect.runPromise(again.sink.deliver(event))
        await again.close()
        expect((await manager.streams.info(NATS_STREAM)).state.messages).toBe(before)
      } finally {
        await connection.drain()
      }
    })
  }
)

// A NATS server of the test's own (the `nats-server` binary, JetStream on, its store in a temporary directory), so that
// it can be stopped and started again.
const natsServerBinary = ["/usr/sbin/nats-server", "/usr/local/bin/nats-server", "/usr/bin/nats-server"].find((path) =>
  existsSync(path)
)

describe.skipIf(natsServerBinary === undefined)(
  natsServerBinary === undefined
    ? "NATS sink across a NATS server restart (skipped: no nats-server binary on this machine)"
    : "NATS sink across a NATS server restart",
  () => {
    it("events recorded while NATS is down are published once it is back", async () => {
      const storeDir = await mkdtemp(join(tmpdir(), "accord-nats-"))
      const port = await freePort()
      const url = `nats://127.0.0.1:${port}`
      const start = () => {
        const child = spawn(natsServerBinary ?? "", ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", storeDir], {
          stdio: ["ignore", "ignore", "pipe"]
        })
        const ready = new Promise<void>((resolve) => {
          let text = ""
          child.stderr.on("data", (chunk: Buffer) => {
            text += chunk.toString("utf8")
            if (text.includes("Server is ready")) resolve()
          })
        })
        return { child, ready }
      }
      let server = start()
      await server.ready
      const runtime = ManagedRuntime.make(makeMemoryStore(seed))
      const delivered: Array<string> = []
      const refused: Array<string> = []
      let changed: () => void = () => undefined
      const until = (condition: () => boolean) =>
        new Promise<void>((resolve) => {
          if (condition()) return resolve()
          changed = () => {
            if (condition()) resolve()
          }
        })
      const relay = await startEventRelay(runtime, natsOnly(url, 50), {
        onSettled: (event, _sink, settlement, failure) => {
          if (failure !== undefined) refused.push(failure.reason)
          if (settlement.status === "delivered") delivered.push(event.id)
          changed()
        }
      })
      try {
        const change = (timezone: number) =>
          runtime.runPromise(updateLanguagePreferences(USER, { timezone: TimezoneOffset.make(timezone) }))
        await change(60)
        await until(() => delivered.length === 1)
        // Down: what is recorded now is refused, kept and retried.
        server.child.kill("SIGTERM")
        await new Promise((resolve) => server.child.once("exit", resolve))
        await change(120)
        await change(180)
        await until(() => refused.length >= 2)
        server = start()
        await server.ready
        await until(() => delivered.length === 3)
        const recorded = await runtime.runPromise(Effect.flatMap(EventStore, (events) => events.list(undefined, 10)))
        expect([...delivered].sort()).toEqual(recorded.map((event) => event.id).sort())
        // The stream holds each once.
        const connection = await connect({ servers: url })
        try {
          const info = await (await jetstreamManager(connection)).streams.info(NATS_STREAM)
          expect(info.state.messages).toBe(3)
        } finally {
          await connection.drain()
        }
      } finally {
        await relay?.close()
        await runtime.dispose()
        server.child.kill("SIGTERM")
        await new Promise((resolve) => server.child.once("exit", resolve))
        await rm(storeDir, { recursive: true, force: true })
      }
    }, 60_000)
  }
)

describe.skipIf(natsServerBinary === undefined)(
  natsServerBinary === undefined
    ? "the server when NATS does not answer at start (skipped: no nats-server binary on this machine)"
    : "the server when NATS does not answer at start",
  () => {
    let temp: Awaited<ReturnType<typeof makeTempDir>> | undefined
    const clis: Array<Cli> = []
    beforeAll(async () => {
      buildServer()
      temp = await makeTempDir()
    }, 120_000)
    afterAll(async () => {
      await killLeftovers(clis)
      await temp?.cleanup()
    })

    it("starts and serves, says so in its log and metrics, and publishes the events once NATS answers", async () => {
      // Issue 35: it exited 1 ("cannot start the event relay: connection refused") after opening its port.
      const seedPath = (await temp?.write("seed.json", testSeed)) ?? ""
      const storeDir = await mkdtemp(join(tmpdir(), "accord-nats-"))
      const port = await freePort()
      const cli = spawnCli(
        [
          "--port",
          "0",
          "--seed",
          seedPath,
          "--metrics-port",
          "0",
          "--events-nats-url",
          `nats://127.0.0.1:${port}`,
          "--events-backoff-ms",
          "10",
          "--events-poll-ms",
          "10"
        ],
        { LOG_LEVEL: "info" }
      )
      clis.push(cli)
      const url = await cli.listening
      await cli.logged("NATS is unreachable; events are kept and published once it answers")
      const metricsUrl = String(cli.logLines().find((line) => line["msg"] === "listening")?.["metricsUrl"])
      const metrics = async () => (await fetch(`${metricsUrl}/metrics`)).text()
      expect(await metrics()).toMatch(/^accord_event_nats_connected 0$/m)
      for (const timezone of [15, 30]) {
        const written = await fetch(`${url}/api/users/v1/preferences/language/`, {
          method: "PUT",
          headers: { ...bearer(USER_TOKEN), "content-type": "application/json" },
          body: JSON.stringify({ timezone })
        })
        expect(written.status).toBe(200)
      }
      expect((await fetch(`${url}/api/health/ready`)).status).toBe(200)
      const nats = spawn(natsServerBinary ?? "", ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", storeDir], {
        stdio: "ignore"
      })
      try {
        await cli.logged("NATS connected")
        const connection = await connect({ servers: `nats://127.0.0.1:${port}` })
        try {
          const manager = await jetstreamManager(connection)
          for (;;) {
            if ((await manager.streams.info(NATS_STREAM)).state.messages === 2) break
            await new Promise((resolve) => setTimeout(resolve, 20))
          }
        } finally {
          await connection.drain()
        }
        expect(await metrics()).toMatch(/^accord_event_nats_connected 1$/m)
        expect(await metrics()).toMatch(/^accord_events\{status="delivered"\} 2$/m)
        const named = cli.logLines().find((line) => line["msg"] === "event sink")
        expect(named).toMatchObject({ sink: "nats", servers: `nats://127.0.0.1:${port}` })
        expect(await stopped(cli)).toEqual({ code: 0, signal: null })
      } finally {
        nats.kill("SIGTERM")
        await new Promise((resolve) => nats.once("exit", resolve))
        await rm(storeDir, { recursive: true, force: true })
      }
    }, 120_000)
  }
)

import { createServer } from "node:http"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { randomBytes } from "node:crypto"
import { type ChildProcess } from "node:child_process"
import {
  defaultPaymentMethodChanged,
  type DomainEvent,
  EventStore,
  type PaymentMethod,
  PaymentMethodId,
  PaymentMethods,
  relayOnce,
  StoreAdmin,
  type StoreServices,
  type UserId
} from "@accord/domain"
import { webhookSink } from "@accord/server"
import { makeMemoryStore } from "@accord/store-memory"
import { PgliteStoreLive, PostgresStoreLive } from "@accord/store-postgres"
import { Effect, Layer, ManagedRuntime } from "effect"
import pg from "pg"
import { decodeSeed, paymentMethodIds, seedInput, userId } from "./fixtures.js"
import { cpuSecondsOf, forkChild, messageOf, stopChild } from "./processes.js"
import type { ChildMessage, EventsResult, EventWriteResult, ServerReady } from "./protocol.js"

/**
 * Issue 31's figures, in a child of the bench (as micro.ts): (a) what recording an event adds to a write, per store:
 * the same port call, `PaymentMethods.setDefault` moving a user's default between two methods, once with the event
 * set-default records (`payment_method.default_changed`) and once with none (`() => []`), in alternating blocks;
 * (b) how many events one relay delivers: events recorded in the memory store, then `relayOnce` (the server's defaults:
 * batches of 100, 8 at once) until none is due, each a signed webhook (the server's `webhookSink`) to a node:http
 * receiver in another process (events.ts started with `receiver`) that answers 204.
 */

/** Writes with the event and as many without, per SQL store (ten times that on the memory store). */
const sqlWrites = Number(process.env["BENCH_EVENT_WRITES"] ?? 4000)
const relayed = Number(process.env["BENCH_RELAY_EVENTS"] ?? 5000)
const databaseUrl = process.env["BENCH_DATABASE_URL"] || undefined
/** Writes per block: blocks alternate with and without the event, so a drift in the machine favours neither. */
const BLOCK = 100

const recordNone = (): ReadonlyArray<DomainEvent> => []
const recordChange = (previous: PaymentMethod | undefined, chosen: PaymentMethod): ReadonlyArray<DomainEvent> => [
  defaultPaymentMethodChanged(previous, chosen)
]

const cpuMicros = (): number => {
  const usage = process.cpuUsage()
  return usage.user + usage.system
}

/** (a) on one store: `writes` set-defaults with the event and as many without, in alternating blocks. */
const measureWrites = async (
  store: string,
  writes: number,
  layer: Layer.Layer<StoreServices, unknown>,
  seedThroughPort: boolean,
  /** The CPU seconds so far of the database's own process serving the store, when it is another process. */
  serverCpuSeconds?: () => Promise<number | undefined>
): Promise<EventWriteResult> => {
  const runtime = ManagedRuntime.make(layer)
  try {
    if (seedThroughPort)
      await runtime.runPromise(Effect.flatMap(StoreAdmin, (admin) => admin.loadSeed(decodeSeed(seedInput(1)))))
    const methods = await runtime.runPromise(Effect.service(PaymentMethods))
    const user = userId(0) as UserId
    const ids = paymentMethodIds(0)
      .slice(0, 2)
      .map((id) => PaymentMethodId.make(id))
    let turn = 0
    const block = async (events: typeof recordNone | typeof recordChange) => {
      const server = await serverCpuSeconds?.()
      const cpu = cpuMicros()
      const wall = performance.now()
      for (let index = 0; index < BLOCK; index++) {
        // Alternating ids, so the default moves every time (setting the current default again records nothing).
        const id = ids[turn++ & 1] ?? ids[0]
        if (id === undefined) throw new Error("no payment method")
        await runtime.runPromise(methods.setDefault(user, id, new Date(), events))
      }
      const spent = { cpu: cpuMicros() - cpu, wall: (performance.now() - wall) * 1000 }
      const serverAfter = await serverCpuSeconds?.()
      return {
        ...spent,
        server: server === undefined || serverAfter === undefined ? Number.NaN : (serverAfter - server) * 1e6
      }
    }
    // Unmeasured: compiles both paths and warms the connection or the WebAssembly.
    for (let index = 0; index < 5; index++) {
      await block(recordChange)
      await block(recordNone)
    }
    const countEvents = () =>
      runtime.runPromise(
        Effect.map(
          Effect.flatMap(EventStore, (events) => events.countByStatus),
          (counts) => counts.pending + counts.delivered + counts.failed
        )
      )
    const eventsBefore = await countEvents()
    const totals = { withCpu: 0, withWall: 0, withServer: 0, noneCpu: 0, noneWall: 0, noneServer: 0 }
    const blocks = Math.max(1, Math.round(writes / BLOCK))
    for (let index = 0; index < blocks; index++) {
      // Alternating which goes first, so neither always follows the other.
      const order = index % 2 === 0 ? ([recordChange, recordNone] as const) : ([recordNone, recordChange] as const)
      for (const events of order) {
        const spent = await block(events)
        if (events === recordChange) {
          totals.withCpu += spent.cpu
          totals.withWall += spent.wall
          totals.withServer += spent.server
        } else {
          totals.noneCpu += spent.cpu
          totals.noneWall += spent.wall
          totals.noneServer += spent.server
        }
      }
    }
    const recorded = (await countEvents()) - eventsBefore
    // What is compared must be what it says: one event per write with it, none without.
    if (recorded !== blocks * BLOCK)
      throw new Error(`${store}: ${recorded} events recorded for ${blocks * BLOCK} writes with an event`)
    const n = blocks * BLOCK
    const result: EventWriteResult = {
      store,
      writes: n,
      withCpuMicros: totals.withCpu / n,
      noneCpuMicros: totals.noneCpu / n,
      withWallMicros: totals.withWall / n,
      noneWallMicros: totals.noneWall / n,
      ...(Number.isFinite(totals.withServer + totals.noneServer) && {
        server: { withCpuMicros: totals.withServer / n, noneCpuMicros: totals.noneServer / n }
      })
    }
    console.log(
      `events: ${store.padEnd(10)} set-default with its event ${result.withCpuMicros.toFixed(1)} µs CPU ` +
        `(${result.withWallMicros.toFixed(1)} µs wall), without ${result.noneCpuMicros.toFixed(1)} ` +
        `(${result.noneWallMicros.toFixed(1)})` +
        (result.server === undefined
          ? ""
          : `; the database's backend ${result.server.withCpuMicros.toFixed(1)} µs with, ${result.server.noneCpuMicros.toFixed(1)} without`) +
        `; ${n} writes each`
    )
    return result
  } finally {
    await runtime.dispose()
  }
}

/** (b): `relayed` events in the memory store, then one relay delivers them all to the receiver. */
const measureRelay = async (): Promise<EventsResult["relay"]> => {
  const receiver: ChildProcess = forkChild("events.js", ["receiver"])
  const runtime = ManagedRuntime.make(makeMemoryStore(decodeSeed(seedInput(relayed))))
  try {
    const { url } = await messageOf(receiver, "ready")
    for (let index = 0; index < relayed; index++) {
      const id = paymentMethodIds(index)[1]
      if (id === undefined) throw new Error("no payment method")
      await runtime.runPromise(
        Effect.flatMap(PaymentMethods, (methods) =>
          methods.setDefault(userId(index) as UserId, PaymentMethodId.make(id), new Date(), recordChange)
        )
      )
    }
    const sink = webhookSink({
      url: `${url}/webhooks`,
      keys: [randomBytes(24)],
      connectTimeoutMs: 10_000,
      responseTimeoutMs: 10_000
    })
    const relayOptions = { sinks: [sink] }
    const cpu = cpuMicros()
    const wall = performance.now()
    let attempted = 0
    for (;;) {
      const batch = await runtime.runPromise(relayOnce(relayOptions))
      if (batch === 0) break
      attempted += batch
    }
    const seconds = (performance.now() - wall) / 1000
    const cpuSpent = cpuMicros() - cpu
    const counts = await runtime.runPromise(Effect.flatMap(EventStore, (events) => events.countByStatus))
    const answer = messageOf(receiver, "received")
    receiver.send({ type: "count" })
    const { count: received } = await answer
    if (counts.delivered !== relayed || attempted !== relayed || received !== relayed)
      throw new Error(
        `relay: ${relayed} recorded, ${attempted} attempted, ${counts.delivered} delivered, ${received} received`
      )
    const result = {
      events: relayed,
      seconds,
      eventsPerSecond: relayed / seconds,
      cpuMicrosPerEvent: cpuSpent / relayed
    }
    console.log(
      `events: relay delivered ${relayed} signed webhooks in ${seconds.toFixed(2)} s: ` +
        `${result.eventsPerSecond.toFixed(0)} events/s, ${result.cpuMicrosPerEvent.toFixed(1)} µs CPU per event`
    )
    return result
  } finally {
    await runtime.dispose()
    await stopChild(receiver)
  }
}

/**
 * (a) on PostgreSQL: a schema of the run's own, dropped after, and a pool of one connection named by
 * `application_name`, so that its backend process is found, and its CPU time read from /proc when the server runs on
 * this machine (else only this process's CPU and the wall time are stated).
 */
const measurePostgres = async (url: string): Promise<EventWriteResult> => {
  const name = `accord_bench_events_${randomBytes(4).toString("hex")}`
  const named = new URL(url)
  named.searchParams.set("application_name", name)
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    let backend: number | undefined
    const serverCpuSeconds = async () => {
      if (backend === undefined) {
        const { rows } = await client.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE application_name = $1",
          [name]
        )
        backend = rows.length === 1 ? rows[0]?.pid : undefined
      }
      return cpuSecondsOf(backend)
    }
    return await measureWrites(
      "PostgreSQL",
      sqlWrites,
      PostgresStoreLive({ connectionString: named.toString(), schema: name, poolSize: 1 }),
      true,
      serverCpuSeconds
    )
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`)
    await client.end()
  }
}

const main = async (): Promise<void> => {
  const results: Array<EventWriteResult> = []
  // Ten times the writes on the memory store: each costs a hundredth of a SQL one, and a garbage collection landing in a
  // block would otherwise decide the difference.
  results.push(await measureWrites("memory", sqlWrites * 10, makeMemoryStore(decodeSeed(seedInput(1))), false))
  const dataDir = mkdtempSync(join(tmpdir(), "accord-bench-events-"))
  try {
    results.push(await measureWrites("PGlite", sqlWrites, PgliteStoreLive({ dataDir: join(dataDir, "db") }), true))
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
  if (databaseUrl !== undefined) results.push(await measurePostgres(databaseUrl))
  const relay = await measureRelay()
  const message: ChildMessage = { type: "events", result: { writes: results, relay } }
  process.send?.(message, () => process.exit(0))
}

/** The receiver: answers 204 to every POST, counts them, and says how many when asked. */
const receive = (): void => {
  let received = 0
  const server = createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      if (request.method === "POST" && request.headers["webhook-signature"] !== undefined) received++
      response.writeHead(204).end()
    })
  })
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    if (address === null || typeof address === "string" || process.send === undefined)
      throw new Error("events.js receiver is started by events.js with fork()")
    const ready: ServerReady = { type: "ready", url: `http://127.0.0.1:${address.port}` }
    process.send(ready)
  })
  process.on("message", () => {
    const answer: ChildMessage = { type: "received", count: received }
    process.send?.(answer)
  })
  process.once("disconnect", () => process.exit(0))
  process.once("SIGTERM", () => process.exit(0))
}

if (process.argv[2] === "receiver") receive()
else
  main().catch((error: unknown) => {
    console.error(error)
    process.exit(1)
  })

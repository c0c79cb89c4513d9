import { Seed, type SeedInput, StoreAdmin, type StoreServices } from "@accord/domain"
import type { AccordRuntime } from "@accord/core"
import { loadApiReference } from "@accord/api-reference"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import type { RunningServer, StandaloneServerOptions } from "@accord/node/server"
import { MemoryStoreLive } from "@accord/store-memory"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import type { StartServer } from "./http-conformance.js"

/** An adapter's standalone server factory (`startKoaServer`, `startFastifyServer`, or a third party's). */
export type StartAdapter = (options: StandaloneServerOptions) => Promise<RunningServer>

/** Options passed on to the adapter's factory (e.g. a smaller drain limit), and the store to run on. */
export interface StartWithOptions extends Partial<Omit<StandaloneServerOptions, "runtime">> {
  /** Built afresh for every start and released when that server closes; default: the memory store. */
  readonly store?: Layer.Layer<StoreServices, unknown>
}

/** The heartbeat of the test servers' event streams. */
const TEST_HEARTBEAT_MS = 500

/**
 * Loads `seed` into `runtime`'s store, then starts the adapter on 127.0.0.1 on a free port, serving the API reference
 * page (`docs: loadApiReference()`, which the suite's docs tests fetch) unless `options.docs` says otherwise.
 */
const seedAndStart = async (
  start: StartAdapter,
  runtime: AccordRuntime,
  seed: SeedInput,
  options: Partial<Omit<StandaloneServerOptions, "runtime">>
): Promise<RunningServer> => {
  const decoded = Schema.decodeUnknownSync(Seed)(seed)
  await runtime.runPromise(Effect.flatMap(StoreAdmin, (admin) => admin.loadSeed(decoded)))
  // A short heartbeat, so that the stream's heartbeat audit waits a moment rather than the default 15 s.
  const eventStreams = { heartbeatMs: TEST_HEARTBEAT_MS, ...options.eventStreams }
  return start({ host: "127.0.0.1", port: 0, docs: loadApiReference(), ...options, eventStreams, runtime })
}

/**
 * A `StartServer` for `runHttpConformance` (and the parity check) from an adapter's standalone factory: a fresh
 * store (`options.store`, default memory) with `seed` loaded, cheap scrypt parameters, 127.0.0.1 on a free port, and
 * the API reference page from `@accord/api-reference`.
 * `close()` drains the server and then disposes the runtime it made, releasing the store.
 */
export const startWith =
  (start: StartAdapter, options: StartWithOptions = {}): StartServer =>
  async (seed: SeedInput) => {
    const { store = MemoryStoreLive, ...serverOptions } = options
    const runtime = ManagedRuntime.make(Layer.mergeAll(store, ScryptPasswordHasherLive(testScryptCost)))
    try {
      const server = await seedAndStart(start, runtime, seed, serverOptions)
      return {
        url: server.url,
        close: async () => {
          try {
            await server.close()
          } finally {
            await runtime.dispose()
          }
        }
      }
    } catch (error) {
      await runtime.dispose()
      throw error
    }
  }

/**
 * A `StartServer` on a runtime the caller built and disposes: several servers (of one adapter or of several) then
 * share one store, e.g. one PGlite database whose start-up is too slow to repeat. `close()` drains the server only.
 * The suites' ids and tokens are random per run, so runs sharing a store do not see each other's rows.
 */
export const startOnRuntime =
  (
    start: StartAdapter,
    runtime: AccordRuntime,
    options: Partial<Omit<StandaloneServerOptions, "runtime">> = {}
  ): StartServer =>
  (seed: SeedInput) =>
    seedAndStart(start, runtime, seed, options)

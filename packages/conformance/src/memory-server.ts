import { Seed, StoreAdmin, type RunningServer, type SeedInput, type StandaloneServerOptions } from "@accord/core"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/core/node"
import { MemoryStoreLive } from "@accord/store-memory"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import type { StartServer } from "./http-conformance.js"

/** An adapter's standalone server factory (`startKoaServer`, `startFastifyServer`, or a third party's). */
export type StartAdapter = (options: StandaloneServerOptions) => Promise<RunningServer>

/**
 * A `StartServer` for `runHttpConformance` (and the parity check) from an adapter's standalone factory: a fresh
 * memory store with `seed` loaded, cheap scrypt parameters, 127.0.0.1 on a free port. `close()` drains the server
 * and then disposes the runtime it made. `options` are passed on (e.g. a smaller drain limit).
 */
export const startWith =
  (start: StartAdapter, options: Partial<Omit<StandaloneServerOptions, "runtime">> = {}): StartServer =>
  async (seed: SeedInput) => {
    const runtime = ManagedRuntime.make(Layer.mergeAll(MemoryStoreLive, ScryptPasswordHasherLive(testScryptCost)))
    try {
      const decoded = Schema.decodeUnknownSync(Seed)(seed)
      await runtime.runPromise(Effect.flatMap(StoreAdmin, (admin) => admin.loadSeed(decoded)))
      const server = await start({ host: "127.0.0.1", port: 0, ...options, runtime })
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

import { Layer, ManagedRuntime } from "effect"
import { ScryptPasswordHasherLive } from "@accord/node/scrypt"
import { MemoryStoreLive } from "@accord/store-memory"
import { startFetchServer } from "@accord/adapter-fetch/node"

const runtime = ManagedRuntime.make(Layer.mergeAll(MemoryStoreLive, ScryptPasswordHasherLive()))

// The fetch handler on Node, with the limits, malformed-HTTP answers and drain of the other standalone servers.
export const server = await startFetchServer({ runtime, host: "127.0.0.1", port: Number(process.env.PORT ?? 3000) })
console.log(`listening on ${server.url}`)

// close() drains: it stops accepting, answers what it accepted, then closes; the runtime is yours to dispose of.
export const stop = async (): Promise<void> => {
  await server.close()
  await runtime.dispose()
}

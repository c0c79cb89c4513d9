import { startFastifyServer } from "@accord/adapter-fastify"
import type { AccordRuntime } from "@accord/core"
import { ScryptPasswordHasherLive } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { Layer, ManagedRuntime } from "effect"
import { decodeSeed, seedInput } from "./fixtures.js"
import type { ChildMessage, ServerReady } from "./protocol.js"

/**
 * The server of the streams section (streams.ts), in its own process started with --expose-gc: Accord on Fastify over
 * the memory store seeded with `users` users. Reports its URL over IPC; asked `usage`, it collects garbage and
 * answers its resident size and heap. Exits on SIGTERM or when the parent goes away.
 */

const collect = (): { rss: number; heapUsed: number } => {
  const gc = globalThis.gc
  if (gc === undefined) throw new Error("streams-server.js needs --expose-gc")
  for (let i = 0; i < 3; i++) gc()
  const { rss, heapUsed } = process.memoryUsage()
  return { rss, heapUsed }
}

const main = async (): Promise<void> => {
  const users = Number(process.argv[2] ?? "1000")
  if (process.send === undefined) throw new Error("streams-server.js is started by the bench with fork()")
  const runtime: AccordRuntime = ManagedRuntime.make(
    Layer.merge(makeMemoryStore(decodeSeed(seedInput(users))), ScryptPasswordHasherLive())
  )
  await runtime.context()
  const server = await startFastifyServer({ runtime, host: "127.0.0.1", port: 0 })
  const stop = (): void => void server.close().finally(() => process.exit(0))
  process.once("SIGTERM", stop)
  process.once("disconnect", stop)
  process.on("message", (message: { type?: unknown }) => {
    if (message.type !== "usage") return
    const usage: ChildMessage = { type: "usage", ...collect() }
    process.send?.(usage)
  })
  const ready: ServerReady = { type: "ready", url: server.url }
  process.send(ready)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})

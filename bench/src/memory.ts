import { getLanguagePreferences, PaymentMethods, StoreAdmin, type UserId } from "@accord/domain"
import { makeMemoryStore } from "@accord/store-memory"
import { Effect, ManagedRuntime } from "effect"
import { decodeSeed, seedInput, userId } from "./fixtures.js"
import type { ChildMessage } from "./protocol.js"

/**
 * Resident size of store-memory, in a fresh process started with --expose-gc: `users` users, each with a token,
 * preferences and three payment methods, all written through the ports.
 */

const users = Number(process.env["BENCH_MEMORY_USERS"] ?? 100_000)

const collect = (): { rss: number; heapUsed: number } => {
  const gc = globalThis.gc
  if (gc === undefined) throw new Error("memory.js needs --expose-gc")
  for (let i = 0; i < 3; i++) gc()
  const { rss, heapUsed } = process.memoryUsage()
  return { rss, heapUsed }
}

const main = async (): Promise<void> => {
  const runtime = ManagedRuntime.make(makeMemoryStore())
  await runtime.runPromise(Effect.void)
  const before = collect()
  const started = performance.now()
  // The seed is built and decoded here only, so nothing but the store holds it once this returns.
  await runtime.runPromise(Effect.flatMap(StoreAdmin, (admin) => admin.loadSeed(decodeSeed(seedInput(users)))))
  for (let index = 0; index < users; index++) await runtime.runPromise(getLanguagePreferences(userId(index) as UserId))
  const seedSeconds = (performance.now() - started) / 1000
  const after = collect()
  // Using the store after the measurement keeps it reachable through it, and checks that the seed arrived.
  const last = await runtime.runPromise(
    Effect.flatMap(PaymentMethods, (methods) => methods.listByUser(userId(users - 1) as UserId))
  )
  if (last.length !== 3) throw new Error(`the store holds ${last.length} payment methods for the last user, not 3`)
  const message: ChildMessage = {
    type: "memory",
    result: { users, paymentMethodsPerUser: 3, seedSeconds, before, after }
  }
  process.send?.(message, () => process.exit(0))
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})

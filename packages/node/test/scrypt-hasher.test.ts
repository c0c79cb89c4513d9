import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Redacted, Result } from "effect"
import { PasswordHash, PasswordHasher, Unavailable } from "@accord/domain"
import { makeScryptHasher, ScryptPasswordHasherLive, testScryptCost, type ScryptHasherLoad } from "@accord/node/scrypt"

const secret = Redacted.make("correct horse battery")

describe("scrypt hasher", () => {
  it.effect("hashes to a self-describing scrypt string that verifies only the same password", () =>
    Effect.gen(function* () {
      const hasher = yield* PasswordHasher
      const hash = yield* hasher.hash(secret)
      expect(hash).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/)
      expect(hash).not.toContain(Redacted.value(secret))
      expect(yield* hasher.verify(secret, hash)).toBe(true)
      expect(yield* hasher.verify(Redacted.make("correct horse battery!"), hash)).toBe(false)
    }).pipe(Effect.provide(ScryptPasswordHasherLive(testScryptCost)))
  )

  it.effect("salts every hash", () =>
    Effect.gen(function* () {
      const hasher = yield* PasswordHasher
      const [one, two] = yield* Effect.all([hasher.hash(secret), hasher.hash(secret)])
      expect(one).not.toBe(two)
    }).pipe(Effect.provide(ScryptPasswordHasherLive(testScryptCost)))
  )

  it.effect("a malformed stored hash never verifies", () =>
    Effect.gen(function* () {
      const hasher = yield* PasswordHasher
      for (const stored of ["", "plain", "bcrypt$x$y", "scrypt$1024$8$1$c2FsdA=="]) {
        expect(yield* hasher.verify(secret, PasswordHash.make(stored))).toBe(false)
      }
    }).pipe(Effect.provide(ScryptPasswordHasherLive(testScryptCost)))
  )

  it.effect("bounded: with 1 running and 1 queued, a third concurrent hash is refused with hashing_saturated", () =>
    Effect.gen(function* () {
      // A slower cost than the tests' usual one keeps the first hash running while the other two arrive.
      const hasher = yield* makeScryptHasher({
        N: 2 ** 14,
        r: 8,
        p: 1,
        maxConcurrent: 1,
        maxQueued: 1,
        retryAfterSeconds: 3
      })
      const attempt = Effect.result(hasher.hash(secret))
      const outcomes = yield* Effect.all([attempt, attempt, attempt], { concurrency: "unbounded" })
      const refused = outcomes.filter(Result.isFailure).map((outcome) => outcome.failure)
      expect(outcomes.filter(Result.isSuccess)).toHaveLength(2)
      expect(refused).toHaveLength(1)
      expect(refused[0]).toBeInstanceOf(Unavailable)
      expect(refused[0]).toMatchObject({ reason: "hashing_saturated", retryAfterSeconds: 3 })
      // The slots are given back: once the burst is over, hashing works again.
      expect(yield* Effect.result(hasher.hash(secret))).toSatisfy(Result.isSuccess)
    })
  )

  it.effect("verify shares the same bound as hash", () =>
    Effect.gen(function* () {
      const cheap = yield* makeScryptHasher(testScryptCost)
      const hash = yield* cheap.hash(secret)
      const hasher = yield* makeScryptHasher({ N: 2 ** 14, r: 8, p: 1, maxConcurrent: 1, maxQueued: 0 })
      const outcomes = yield* Effect.all(
        [Effect.result(hasher.hash(secret)), Effect.result(hasher.verify(secret, hash))],
        {
          concurrency: "unbounded"
        }
      )
      expect(outcomes.map((outcome) => outcome._tag)).toEqual(["Success", "Failure"])
    })
  )

  it.live("observeLoad: a live view of the hashes running, waiting and refused, for a host's metrics", () =>
    Effect.gen(function* () {
      let load: ScryptHasherLoad | undefined
      const hasher = yield* makeScryptHasher({
        N: 2 ** 14,
        r: 8,
        p: 1,
        maxConcurrent: 1,
        maxQueued: 1,
        observeLoad: (view) => (load = view)
      })
      if (load === undefined) throw new Error("observeLoad was not called as the hasher was made")
      const view = load
      const snapshot = () => ({ running: view.running, waiting: view.waiting, rejected: view.rejected })
      expect(snapshot()).toEqual({ running: 0, waiting: 0, rejected: 0 })
      expect({ maxConcurrent: view.maxConcurrent, maxQueued: view.maxQueued }).toEqual({
        maxConcurrent: 1,
        maxQueued: 1
      })

      const first = yield* Effect.forkChild(hasher.hash(secret))
      const second = yield* Effect.forkChild(hasher.hash(secret))
      // Both fibers start at once (admission is synchronous); a hash at this cost takes tens of milliseconds.
      yield* Effect.yieldNow
      expect(snapshot()).toEqual({ running: 1, waiting: 1, rejected: 0 })
      expect(yield* Effect.result(hasher.hash(secret))).toSatisfy(Result.isFailure)
      expect(view.rejected).toBe(1)

      yield* Fiber.join(first)
      yield* Fiber.join(second)
      expect(snapshot()).toEqual({ running: 0, waiting: 0, rejected: 1 })
    })
  )
})

import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto"
import { Effect, Layer, Redacted, Semaphore } from "effect"
import { PasswordHash, PasswordHasher, Unavailable } from "@accord/domain"

export interface ScryptHasherOptions {
  /** CPU/memory cost, a power of two. Production minimum (docs/api.md, "Create public plan entry (POST)"): 2^15. */
  readonly N?: number
  readonly r?: number
  readonly p?: number
  /** Hashes computed at once (each takes a libuv thread and 128*N*r bytes). */
  readonly maxConcurrent?: number
  /** Hash requests allowed to wait for a slot; past that the hasher answers Unavailable at once. */
  readonly maxQueued?: number
  readonly retryAfterSeconds?: number
  /** Called once, as the hasher is made, with a live view of its load (for a host's metrics; docs/operations.md). */
  readonly observeLoad?: (load: ScryptHasherLoad) => void
}

/** What a hasher is doing, read at any time: each field is the current count, not a snapshot. */
export interface ScryptHasherLoad {
  /** Hashes (or verifications) computing now, at most `maxConcurrent`. */
  readonly running: number
  /** Admitted and waiting for a slot, at most `maxQueued`. */
  readonly waiting: number
  /** Refused with hashing_saturated (503) since the hasher was made. */
  readonly rejected: number
  readonly maxConcurrent: number
  readonly maxQueued: number
}

/** Hashes at once by default: libuv's default thread pool has four threads. */
export const DEFAULT_SCRYPT_MAX_CONCURRENT = 4
export const DEFAULT_SCRYPT_MAX_QUEUED = 64

/** The production default: N=2^15, r=8, p=3 (docs/api.md, "Create public plan entry (POST)"). */
export const productionScryptCost = { N: 2 ** 15, r: 8, p: 3 } as const
/** Cheap parameters for tests only: the format and the salt are the same, the work is not. */
export const testScryptCost = { N: 2 ** 10, r: 8, p: 1 } as const

const SALT_BYTES = 16
const KEY_BYTES = 32

const derive = (password: string, salt: Buffer, cost: ScryptOptions & { N: number; r: number }) =>
  Effect.callback<Buffer, Error>((resume) => {
    // scrypt needs 128*N*r bytes; node's default maxmem (32 MiB) is exactly too small for N=2^15, r=8.
    scrypt(password, salt, KEY_BYTES, { ...cost, maxmem: 256 * cost.N * cost.r }, (error, key) =>
      resume(error ? Effect.fail(error) : Effect.succeed(key))
    )
  })

const encode = (cost: { N: number; r: number; p: number }, salt: Buffer, key: Buffer): PasswordHash =>
  PasswordHash.make(`scrypt$${cost.N}$${cost.r}$${cost.p}$${salt.toString("base64")}$${key.toString("base64")}`)

const decodeHash = (hash: PasswordHash) => {
  const [scheme, N, r, p, salt, key] = hash.split("$")
  if (
    scheme !== "scrypt" ||
    N === undefined ||
    r === undefined ||
    p === undefined ||
    salt === undefined ||
    key === undefined
  ) {
    return undefined
  }
  return {
    cost: { N: Number(N), r: Number(r), p: Number(p) },
    salt: Buffer.from(salt, "base64"),
    key: Buffer.from(key, "base64")
  }
}

/** scrypt via node:crypto with a random salt per hash and bounded concurrency (503 when saturated). */
export const makeScryptHasher = (options: ScryptHasherOptions = {}) =>
  Effect.gen(function* () {
    const cost = {
      N: options.N ?? productionScryptCost.N,
      r: options.r ?? productionScryptCost.r,
      p: options.p ?? productionScryptCost.p
    }
    const maxConcurrent = options.maxConcurrent ?? DEFAULT_SCRYPT_MAX_CONCURRENT
    const maxQueued = options.maxQueued ?? DEFAULT_SCRYPT_MAX_QUEUED
    const saturated = new Unavailable({
      reason: "hashing_saturated",
      retryAfterSeconds: options.retryAfterSeconds ?? 1
    })
    const slots = yield* Semaphore.make(maxConcurrent)
    // Admitted: running or waiting for a slot. Counted here because the semaphore does not tell who waits.
    let admitted = 0
    let running = 0
    let rejected = 0
    options.observeLoad?.({
      get running() {
        return running
      },
      get waiting() {
        return admitted - running
      },
      get rejected() {
        return rejected
      },
      maxConcurrent,
      maxQueued
    })

    const bounded = <A>(work: Effect.Effect<A, Error>): Effect.Effect<A, Unavailable> =>
      Effect.suspend(() => {
        if (admitted >= maxConcurrent + maxQueued) {
          rejected++
          return Effect.fail(saturated)
        }
        admitted++
        return slots
          .withPermits(1)(
            Effect.suspend(() => {
              running++
              return work
            }).pipe(Effect.ensuring(Effect.sync(() => running--)))
          )
          .pipe(
            Effect.mapError((cause) => new Unavailable({ reason: "hashing_saturated", retryAfterSeconds: 1, cause })),
            Effect.ensuring(Effect.sync(() => admitted--))
          )
      })

    return PasswordHasher.of({
      hash: (password) =>
        bounded(
          Effect.suspend(() => {
            const salt = randomBytes(SALT_BYTES)
            return Effect.map(derive(Redacted.value(password), salt, cost), (key) => encode(cost, salt, key))
          })
        ),
      verify: (password, hash) => {
        const stored = decodeHash(hash)
        if (stored === undefined) return Effect.succeed(false)
        return bounded(
          Effect.map(
            derive(Redacted.value(password), stored.salt, stored.cost),
            (key) => key.length === stored.key.length && timingSafeEqual(key, stored.key)
          )
        )
      }
    })
  })

export const ScryptPasswordHasherLive = (options: ScryptHasherOptions = {}): Layer.Layer<PasswordHasher> =>
  Layer.effect(PasswordHasher, makeScryptHasher(options))

import { expect } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Seed, StoreAdmin, UserId, ValidationError, type FieldIssueCode, type SeedInput } from "@accord/core"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/core/node"
import { MemoryStoreLive } from "@accord/store-memory"

/** A fresh memory store and a cheap scrypt hasher: each test that provides it starts from nothing. */
export const TestServices = Layer.mergeAll(MemoryStoreLive, ScryptPasswordHasherLive(testScryptCost))

export const alice = UserId.make("u_alice")
export const bob = UserId.make("u_bob")

export const seed = (input: SeedInput) =>
  Effect.flatMap(StoreAdmin, (admin) => admin.loadSeed(Schema.decodeUnknownSync(Seed)(input)))

/** The `[pointer, code]` pairs of a ValidationError, in the order the error lists them. */
export const issuesOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (error) => {
    expect(error).toBeInstanceOf(ValidationError)
    return error instanceof ValidationError ? error.issues.map((found) => [found.pointer, found.code] as const) : []
  })

export type Issue = readonly [pointer: string, code: FieldIssueCode]

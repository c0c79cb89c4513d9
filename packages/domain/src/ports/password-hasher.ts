import { Context, type Effect, type Redacted } from "effect"
import type { Unavailable } from "../errors.js"
import type { PasswordHash } from "../values/password.js"

/** Slow, salted password hashing. Fails with Unavailable when its bounded queue is full. */
export class PasswordHasher extends Context.Service<
  PasswordHasher,
  {
    readonly hash: (password: Redacted.Redacted<string>) => Effect.Effect<PasswordHash, Unavailable>
    readonly verify: (password: Redacted.Redacted<string>, hash: PasswordHash) => Effect.Effect<boolean, Unavailable>
  }
>()("@accord/domain/PasswordHasher") {}

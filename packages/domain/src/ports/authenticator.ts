import { Context, type Effect } from "effect"
import type { Unauthenticated, Unavailable } from "../errors.js"
import type { Principal } from "../principal.js"

/**
 * Resolves a credential (the token of an `Authorization: Bearer` header, already checked against the token
 * grammar) to a principal. Unknown or rejected credentials fail with `Unauthenticated({ reason: "invalid_token" })`.
 */
export class Authenticator extends Context.Service<
  Authenticator,
  {
    readonly authenticate: (token: string) => Effect.Effect<Principal, Unauthenticated | Unavailable>
  }
>()("@accord/domain/Authenticator") {}

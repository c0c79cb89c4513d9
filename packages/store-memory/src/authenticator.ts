import { Effect, HashMap, Option, Ref } from "effect"
import { Authenticator, type ClientId, Principal, Unauthenticated, type UserId } from "@accord/domain"
import { sameDigestBytes, tokenDigestWithBytes } from "@accord/node/token-digest"
import type { MemoryState, StoredCredential } from "./state.js"

const invalidToken = new Unauthenticated({ reason: "invalid_token" })

/**
 * Static tokens, kept only as SHA-256 digests. The lookup is by digest, which leaks nothing about the token an
 * attacker could steer; the final comparison is constant-time all the same.
 */
export const makeAuthenticator = (state: MemoryState) =>
  Authenticator.of({
    authenticate: (token) =>
      Effect.flatMap(Ref.get(state.credentials), (credentials) => {
        const digest = tokenDigestWithBytes(token)
        return Option.match(HashMap.get(credentials, digest.hex), {
          onNone: () => Effect.fail(invalidToken),
          onSome: (stored) =>
            sameDigestBytes(stored.digestBytes, digest.bytes)
              ? Effect.succeed(stored.principal)
              : Effect.fail(invalidToken)
        })
      })
  })

export type CredentialSeed =
  | { readonly kind: "user"; readonly id: UserId; readonly token: string }
  | { readonly kind: "client"; readonly id: ClientId; readonly token: string }

const toStored = (seed: CredentialSeed): StoredCredential => {
  const digest = tokenDigestWithBytes(seed.token)
  return {
    digest: digest.hex,
    digestBytes: digest.bytes,
    principal: seed.kind === "user" ? Principal.User({ userId: seed.id }) : Principal.Client({ clientId: seed.id })
  }
}

/** Adds each credential whose token is not known yet; a known token keeps the principal it has. */
export const addCredentials = (state: MemoryState, seeds: ReadonlyArray<CredentialSeed>): Effect.Effect<number> => {
  const stored = seeds.map(toStored)
  return Ref.modify(state.credentials, (credentials) => {
    let added = 0
    let next = credentials
    for (const credential of stored) {
      if (HashMap.has(next, credential.digest)) continue
      next = HashMap.set(next, credential.digest, credential)
      added++
    }
    return [added, next]
  })
}

import { Schema } from "effect"

/** Longest user or client id accepted: the authenticator's subject claim is an opaque string, but a bounded one. */
const MAX_IDENTITY_LENGTH = 255

/**
 * No control character (C0, DEL, C1) and no lone UTF-16 surrogate: PostgreSQL refuses a NUL in text, and a lone
 * surrogate would be stored as U+FFFD, making two subjects one user (docs/SECURITY.md, "Identities are checked at the edge"). Linear, after the
 * length bound.
 */
const isWellFormedIdentity = (id: string): boolean => {
  for (let index = 0; index < id.length; index++) {
    const unit = id.charCodeAt(index)
    if (unit < 0x20 || (unit >= 0x7f && unit <= 0x9f)) return false
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = id.charCodeAt(index + 1)
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false
      index++
    } else if (unit >= 0xdc00 && unit <= 0xdfff) return false
  }
  return true
}

/** An identity as it may reach a store: 1 to 255 UTF-16 units, well-formed, no control characters. */
const Identity = Schema.String.check(
  Schema.isMinLength(1).abort(),
  Schema.isMaxLength(MAX_IDENTITY_LENGTH).abort(),
  Schema.makeFilter<string>(isWellFormedIdentity, { title: "no control character or lone surrogate" })
)

/** A user's id as the authenticator knows it; opaque to Accord beyond the rules of `Identity`. */
export const UserId = Identity.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type

/** An application (client) credential's id; a client has no user. */
export const ClientId = Identity.pipe(Schema.brand("ClientId"))
export type ClientId = typeof ClientId.Type

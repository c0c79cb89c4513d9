import { Schema } from "effect"

/** A salted, slow hash of a password in the hasher's own self-describing format. */
export const PasswordHash = Schema.String.pipe(Schema.brand("PasswordHash"))
export type PasswordHash = typeof PasswordHash.Type

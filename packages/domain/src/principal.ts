import { Data } from "effect"
import type { ClientId, UserId } from "./values/ids.js"

/** Who is calling: a user, or an application key with no user (it may only create public plan entries). */
export type Principal = Data.TaggedEnum<{
  User: { readonly userId: UserId }
  Client: { readonly clientId: ClientId }
}>
export const Principal = Data.taggedEnum<Principal>()

import { isWellFormedToken } from "@accord/domain"

export type Credential =
  { readonly _tag: "Missing" } | { readonly _tag: "Malformed" } | { readonly _tag: "Token"; readonly token: string }

const MISSING: Credential = { _tag: "Missing" }
const MALFORMED: Credential = { _tag: "Malformed" }

/**
 * Reads `Authorization: <scheme> 1*SP <token>`. Bearer and Token (the DRF form) in any case carry a token; any
 * other scheme counts as no credential, an empty or ill-formed token as an invalid one.
 */
export const readCredential = (header: string | undefined): Credential => {
  if (header === undefined || header.trim() === "") return MISSING
  const space = header.indexOf(" ")
  const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase()
  if (scheme !== "bearer" && scheme !== "token") return MISSING
  const token = space < 0 ? "" : header.slice(space + 1).replace(/^ +/, "")
  return isWellFormedToken(token) ? { _tag: "Token", token } : MALFORMED
}

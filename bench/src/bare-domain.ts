import { createHash, randomUUID, timingSafeEqual } from "node:crypto"
import { paymentMethodIds, userId, userToken } from "./workload.js"

/**
 * What a careful developer would write by hand with a bare framework for the two benchmarked routes: the same token
 * digests, field checks, state changes, response bytes and headers as Accord, with none of its layers. The peer
 * servers (peer-tsrest.ts, peer-effect.ts) reuse the pieces: the token lookup (authenticateToken), the limits their
 * schemas check (LANGUAGE_MAX_LENGTH, TIMEZONE, canonicalLanguage, READ_ONLY_FIELDS), the merges on validated input
 * (mergePreferences, makeDefaultPaymentMethod), the problem bodies and the response headers.
 */

interface PreferencesRecord {
  readonly id: number
  language: string
  timezone: number
  mfaEnabled: boolean
  readonly createdAt: string
  updatedAt: string
}

interface PaymentMethodRecord {
  readonly id: string
  isDefault: boolean
  readonly createdAt: string
  updatedAt: string
}

export interface BareStore {
  /** SHA-256 hex digest of the token -> the digest's bytes and the user id. */
  readonly credentials: Map<string, { readonly digest: Buffer; readonly userId: string }>
  readonly preferences: Map<string, PreferencesRecord>
  readonly paymentMethods: Map<string, Array<PaymentMethodRecord>>
  nextPreferencesId: number
}

export const digest = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex")

export const makeBareStore = (users: number): BareStore => {
  const store: BareStore = {
    credentials: new Map(),
    preferences: new Map(),
    paymentMethods: new Map(),
    nextPreferencesId: 1
  }
  const now = new Date().toISOString()
  for (let index = 0; index < users; index++) {
    const hex = digest(userToken(index))
    store.credentials.set(hex, { digest: Buffer.from(hex, "hex"), userId: userId(index) })
    store.paymentMethods.set(
      userId(index),
      paymentMethodIds(index).map((id) => ({ id, isDefault: false, createdAt: now, updatedAt: now }))
    )
  }
  return store
}

export interface BareResponse {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

/** The headers of every answer a route gives (a fresh x-request-id each time). */
export const responseHeaders = (status: number): Record<string, string> => ({
  "content-type": status < 400 ? "application/json; charset=utf-8" : "application/problem+json; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-request-id": randomUUID()
})

/** responseHeaders without the content type, for a framework that sets the content type itself. */
export const headersBesideContentType = (): Record<string, string> => ({
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-request-id": randomUUID()
})

const REASONS: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  404: "Not Found",
  415: "Unsupported Media Type"
}

export interface ProblemBody {
  readonly type: string
  readonly title: string
  readonly status: number
  readonly detail: string
  readonly code: string
}

export const problemBody = (status: number, code: string, detail: string): ProblemBody => ({
  type: "about:blank",
  title: REASONS[status] ?? "Error",
  status,
  detail,
  code
})

export const problem = (status: number, code: string, detail: string): BareResponse => ({
  status,
  headers: responseHeaders(status),
  body: JSON.stringify(problemBody(status, code, detail))
})

export const UNAUTHORIZED_DETAIL = "The credential is malformed, unknown or expired."
export const NOT_FOUND_DETAIL = "No resource exists at this address."
export const VALIDATION_FAILED_DETAIL = "Some fields are invalid."
export const INVALID_BODY_DETAIL = "The body must be a JSON object."

export const ok = (body: unknown): BareResponse => ({
  status: 200,
  headers: responseHeaders(200),
  body: JSON.stringify(body)
})

export const TOKEN = /^[A-Za-z0-9._~+/-]{1,512}=*$/

/** `Bearer <token>` / `Token <token>` -> the token, or undefined. */
export const tokenOf = (header: string | undefined): string | undefined => {
  if (header === undefined) return undefined
  const space = header.indexOf(" ")
  if (space < 0) return undefined
  const scheme = header.slice(0, space).toLowerCase()
  if (scheme !== "bearer" && scheme !== "token") return undefined
  return header.slice(space + 1).trimStart()
}

/** `Bearer <token>` / `Token <token>` -> the user id, or undefined. */
export const authenticate = (store: BareStore, header: string | undefined): string | undefined => {
  const token = tokenOf(header)
  return token === undefined ? undefined : authenticateToken(store, token)
}

/** The token itself (the scheme already taken off) -> the user id, or undefined. Digest lookup, then a constant-time compare. */
export const authenticateToken = (store: BareStore, token: string): string | undefined => {
  if (!TOKEN.test(token)) return undefined
  const hex = digest(token)
  const stored = store.credentials.get(hex)
  if (stored === undefined) return undefined
  // The same constant-time check the memory store makes after its digest lookup.
  return timingSafeEqual(stored.digest, Buffer.from(hex, "hex")) ? stored.userId : undefined
}

export const isJsonContentType = (header: string | undefined): boolean =>
  header !== undefined && header.split(";")[0]?.trim().toLowerCase() === "application/json"

export const unauthorized = (): BareResponse => problem(401, "invalid_token", UNAUTHORIZED_DETAIL)

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Fields of the preferences a client may send back unchanged; they are ignored. */
export const READ_ONLY_FIELDS = ["id", "created_at", "updated_at"] as const
const READ_ONLY = new Set<string>(READ_ONLY_FIELDS)

export const LANGUAGE_MAX_LENGTH = 35
/** Minutes from UTC: -12:00 to +14:00 in quarter hours. */
export const TIMEZONE = { minimum: -720, maximum: 840, step: 15 } as const

/** The tag in canonical form, or undefined when it is not a well-formed BCP 47 tag. */
export const canonicalLanguage = (tag: string): string | undefined => {
  try {
    return Intl.getCanonicalLocales(tag)[0]
  } catch {
    return undefined
  }
}

export interface PreferencesView {
  readonly id: number
  readonly language: string
  readonly timezone: number
  readonly mfa_enabled: boolean
  readonly created_at: string
  readonly updated_at: string
}

const preferencesView = (record: PreferencesRecord): PreferencesView => ({
  id: record.id,
  language: record.language,
  timezone: record.timezone,
  mfa_enabled: record.mfaEnabled,
  created_at: record.createdAt,
  updated_at: record.updatedAt
})

/** The field checks of a preferences PUT (docs/api.md, "Precise rules"): the checked change, or the 400 to answer. */
export const readPreferencesChange = (body: unknown): PreferencesChange | BareResponse => {
  if (!isObject(body)) return problem(400, "invalid_body", INVALID_BODY_DETAIL)
  let language: string | undefined
  let timezone: number | undefined
  let mfaEnabled: boolean | undefined
  for (const key of Object.keys(body)) {
    const value = body[key]
    if (READ_ONLY.has(key)) continue
    if (key === "language") {
      if (typeof value !== "string" || value.length < 1 || value.length > LANGUAGE_MAX_LENGTH)
        return problem(400, "validation_failed", VALIDATION_FAILED_DETAIL)
      language = canonicalLanguage(value)
      if (language === undefined) return problem(400, "validation_failed", VALIDATION_FAILED_DETAIL)
    } else if (key === "timezone") {
      if (
        typeof value !== "number" ||
        !Number.isInteger(value) ||
        value < TIMEZONE.minimum ||
        value > TIMEZONE.maximum ||
        value % TIMEZONE.step !== 0
      ) {
        return problem(400, "validation_failed", VALIDATION_FAILED_DETAIL)
      }
      timezone = value
    } else if (key === "mfa_enabled") {
      if (typeof value !== "boolean") return problem(400, "validation_failed", VALIDATION_FAILED_DETAIL)
      mfaEnabled = value
    } else return problem(400, "validation_failed", VALIDATION_FAILED_DETAIL)
  }
  return { language, timezone, mfa_enabled: mfaEnabled }
}

export const isBareResponse = (value: PreferencesChange | BareResponse): value is BareResponse => "status" in value

/** Merge-PUT of the language preferences with the field checks of docs/api.md ("Precise rules"). */
export const updatePreferences = (store: BareStore, user: string, body: unknown): BareResponse => {
  const change = readPreferencesChange(body)
  return isBareResponse(change) ? change : ok(mergePreferences(store, user, change))
}

/** Checked fields of a preferences PUT (language already canonical); absent ones keep their stored value. */
export interface PreferencesChange {
  readonly language?: string | undefined
  readonly timezone?: number | undefined
  readonly mfa_enabled?: boolean | undefined
}

/** The merge itself, on fields already checked: creates the record on first use, touches updated_at only on a change. */
export const mergePreferences = (store: BareStore, user: string, change: PreferencesChange): PreferencesView => {
  const { language, timezone, mfa_enabled: mfaEnabled } = change
  const now = new Date().toISOString()
  let record = store.preferences.get(user)
  if (record === undefined) {
    record = {
      id: store.nextPreferencesId++,
      language: "en",
      timezone: 0,
      mfaEnabled: false,
      createdAt: now,
      updatedAt: now
    }
    store.preferences.set(user, record)
  }
  const next = {
    language: language ?? record.language,
    timezone: timezone ?? record.timezone,
    mfaEnabled: mfaEnabled ?? record.mfaEnabled
  }
  if (next.language !== record.language || next.timezone !== record.timezone || next.mfaEnabled !== record.mfaEnabled) {
    Object.assign(record, next, { updatedAt: now })
  }
  return preferencesView(record)
}

const PAYMENT_METHOD_ID = /^[A-Za-z0-9_-]{1,100}$/

/** Makes one of the user's methods the only default; body none, `{}` or `{"is_default": true}`. */
export const setDefaultPaymentMethod = (store: BareStore, user: string, id: string, body: unknown): BareResponse => {
  if (body !== undefined) {
    if (!isObject(body)) return problem(400, "invalid_body", INVALID_BODY_DETAIL)
    for (const key of Object.keys(body)) {
      if (key !== "is_default" || body[key] !== true) return problem(400, "validation_failed", VALIDATION_FAILED_DETAIL)
    }
  }
  const view = makeDefaultPaymentMethod(store, user, id)
  return view === undefined ? problem(404, "not_found", NOT_FOUND_DETAIL) : ok(view)
}

export interface PaymentMethodView {
  readonly id: string
  readonly is_default: boolean
  readonly created_at: string
  readonly updated_at: string
}

/** The change itself, once the body is checked: undefined when the user has no such method (a 404). */
export const makeDefaultPaymentMethod = (store: BareStore, user: string, id: string): PaymentMethodView | undefined => {
  if (!PAYMENT_METHOD_ID.test(id)) return undefined
  const methods = store.paymentMethods.get(user)
  const target = methods?.find((method) => method.id === id)
  if (methods === undefined || target === undefined) return undefined
  if (!target.isDefault) {
    const now = new Date().toISOString()
    for (const method of methods) {
      if (method.isDefault) Object.assign(method, { isDefault: false, updatedAt: now })
    }
    Object.assign(target, { isDefault: true, updatedAt: now })
  }
  return { id: target.id, is_default: target.isDefault, created_at: target.createdAt, updated_at: target.updatedAt }
}

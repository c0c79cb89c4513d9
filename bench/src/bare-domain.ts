import { createHash, randomUUID, timingSafeEqual } from "node:crypto"
import { paymentMethodIds, userId, userToken } from "./fixtures.js"

/**
 * What a careful developer would write by hand with a bare framework for the two benchmarked routes: the same token
 * digests, field checks, state changes, response bytes and headers as Accord, with none of its layers.
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

const digest = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex")

export const makeBareStore = (users: number): BareStore => {
  const store: BareStore = { credentials: new Map(), preferences: new Map(), paymentMethods: new Map(), nextPreferencesId: 1 }
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

const responseHeaders = (status: number): Record<string, string> => ({
  "content-type": status < 400 ? "application/json; charset=utf-8" : "application/problem+json; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-request-id": randomUUID()
})

const REASONS: Readonly<Record<number, string>> = { 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 415: "Unsupported Media Type" }

export const problem = (status: number, code: string, detail: string): BareResponse => ({
  status,
  headers: responseHeaders(status),
  body: JSON.stringify({ type: "about:blank", title: REASONS[status] ?? "Error", status, detail, code })
})

const ok = (body: unknown): BareResponse => ({ status: 200, headers: responseHeaders(200), body: JSON.stringify(body) })

const TOKEN = /^[A-Za-z0-9._~+/-]{1,512}=*$/

/** `Bearer <token>` / `Token <token>` -> the user id, or undefined. Digest lookup, then a constant-time compare. */
export const authenticate = (store: BareStore, header: string | undefined): string | undefined => {
  if (header === undefined) return undefined
  const space = header.indexOf(" ")
  if (space < 0) return undefined
  const scheme = header.slice(0, space).toLowerCase()
  if (scheme !== "bearer" && scheme !== "token") return undefined
  const token = header.slice(space + 1).trimStart()
  if (!TOKEN.test(token)) return undefined
  const hex = digest(token)
  const stored = store.credentials.get(hex)
  if (stored === undefined) return undefined
  // The same constant-time check the memory store makes after its digest lookup.
  return timingSafeEqual(stored.digest, Buffer.from(hex, "hex")) ? stored.userId : undefined
}

export const isJsonContentType = (header: string | undefined): boolean =>
  header !== undefined && header.split(";")[0]?.trim().toLowerCase() === "application/json"

export const unauthorized = (): BareResponse => problem(401, "invalid_token", "The credential is malformed, unknown or expired.")

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const READ_ONLY = new Set(["id", "created_at", "updated_at"])

const canonicalLanguage = (tag: string): string | undefined => {
  try {
    return Intl.getCanonicalLocales(tag)[0]
  } catch {
    return undefined
  }
}

const preferencesView = (record: PreferencesRecord) => ({
  id: record.id,
  language: record.language,
  timezone: record.timezone,
  mfa_enabled: record.mfaEnabled,
  created_at: record.createdAt,
  updated_at: record.updatedAt
})

/** Merge-PUT of the language preferences with CONTRACT's field checks. */
export const updatePreferences = (store: BareStore, user: string, body: unknown): BareResponse => {
  if (!isObject(body)) return problem(400, "invalid_body", "The body must be a JSON object.")
  let language: string | undefined
  let timezone: number | undefined
  let mfaEnabled: boolean | undefined
  for (const key of Object.keys(body)) {
    const value = body[key]
    if (READ_ONLY.has(key)) continue
    if (key === "language") {
      if (typeof value !== "string" || value.length < 1 || value.length > 35) return problem(400, "validation_failed", "Some fields are invalid.")
      language = canonicalLanguage(value)
      if (language === undefined) return problem(400, "validation_failed", "Some fields are invalid.")
    } else if (key === "timezone") {
      if (typeof value !== "number" || !Number.isInteger(value) || value < -720 || value > 840 || value % 15 !== 0) {
        return problem(400, "validation_failed", "Some fields are invalid.")
      }
      timezone = value
    } else if (key === "mfa_enabled") {
      if (typeof value !== "boolean") return problem(400, "validation_failed", "Some fields are invalid.")
      mfaEnabled = value
    } else return problem(400, "validation_failed", "Some fields are invalid.")
  }
  const now = new Date().toISOString()
  let record = store.preferences.get(user)
  if (record === undefined) {
    record = { id: store.nextPreferencesId++, language: "en", timezone: 0, mfaEnabled: false, createdAt: now, updatedAt: now }
    store.preferences.set(user, record)
  }
  const next = { language: language ?? record.language, timezone: timezone ?? record.timezone, mfaEnabled: mfaEnabled ?? record.mfaEnabled }
  if (next.language !== record.language || next.timezone !== record.timezone || next.mfaEnabled !== record.mfaEnabled) {
    Object.assign(record, next, { updatedAt: now })
  }
  return ok(preferencesView(record))
}

const PAYMENT_METHOD_ID = /^[A-Za-z0-9_-]{1,100}$/

/** Makes one of the user's methods the only default; body none, `{}` or `{"is_default": true}`. */
export const setDefaultPaymentMethod = (store: BareStore, user: string, id: string, body: unknown): BareResponse => {
  if (body !== undefined) {
    if (!isObject(body)) return problem(400, "invalid_body", "The body must be a JSON object.")
    for (const key of Object.keys(body)) {
      if (key !== "is_default" || body[key] !== true) return problem(400, "validation_failed", "Some fields are invalid.")
    }
  }
  const notFound = () => problem(404, "not_found", "No resource exists at this address.")
  if (!PAYMENT_METHOD_ID.test(id)) return notFound()
  const methods = store.paymentMethods.get(user)
  const target = methods?.find((method) => method.id === id)
  if (methods === undefined || target === undefined) return notFound()
  if (!target.isDefault) {
    const now = new Date().toISOString()
    for (const method of methods) {
      if (method.isDefault) Object.assign(method, { isDefault: false, updatedAt: now })
    }
    Object.assign(target, { isDefault: true, updatedAt: now })
  }
  return ok({ id: target.id, is_default: target.isDefault, created_at: target.createdAt, updated_at: target.updatedAt })
}

// @accord/client/webhooks: checks a webhook Accord sent (docs/api.md, "Events"), with WebCrypto only (Node, Bun,
// Deno, Workers, browsers), under the Standard Webhooks specification. An entry of its own, so that the default
// client's bundle does not carry it (README, "Bundle size").
import type { AccordEvent } from "@accord/contract"
import { parseWebhookSecrets, WEBHOOK_SECRETS_RULE } from "@accord/contract/webhook-secrets"

export type { AccordEvent, EventType } from "@accord/contract"

/** Why a webhook was refused: nothing of it may be trusted. */
export type WebhookFailure =
  /** A `webhook-id`, `webhook-timestamp` or `webhook-signature` header is missing or malformed. */
  | "headers"
  /** The timestamp is further from now than the tolerance: a replay, or a clock off. */
  | "timestamp"
  /** No signature is the body's under any of the secrets. */
  | "signature"
  /** A secret is not as the server takes it in `WEBHOOK_SECRET` (`parseWebhookSecrets`). */
  | "secret"
  /** Signed, but not a JSON event. */
  | "body"

export class WebhookVerificationError extends Error {
  readonly _tag = "WebhookVerificationError"
  override readonly name = "WebhookVerificationError"
  readonly reason: WebhookFailure
  constructor(reason: WebhookFailure, message: string) {
    super(message)
    this.reason = reason
  }
}

/** Headers as fetch gives them, or as Node gives them (lower-case names; a repeated one as an array). */
export type WebhookHeaders =
  | { readonly get: (name: string) => string | null }
  | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

export interface VerifyWebhookOptions {
  /** How far the timestamp may be from now, either way, in seconds. Default 300 (the specification's). */
  readonly toleranceSeconds?: number
  /** The current time in milliseconds since the epoch. Default `Date.now()`. */
  readonly now?: () => number
}

const header = (headers: WebhookHeaders, name: string): string | undefined => {
  if (typeof headers.get === "function") return headers.get(name) ?? undefined
  const value = (headers as Readonly<Record<string, string | ReadonlyArray<string> | undefined>>)[name]
  return typeof value === "string" ? value : undefined
}

const base64Bytes = (text: string): Uint8Array<ArrayBuffer> | undefined => {
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0))
  } catch {
    return undefined
  }
}

/** Compares every byte whatever differs first: the time taken says nothing of where a forged signature goes wrong. */
const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  let difference = 0
  for (let index = 0; index < a.length; index++) difference |= (a[index] ?? 0) ^ (b[index] ?? 0)
  return difference === 0
}

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })

/** The keys of `secret`, each text read as the server reads `WEBHOOK_SECRET`: the grammar is the contract's. */
const keysOf = (secret: string | ReadonlyArray<string>): ReadonlyArray<Uint8Array<ArrayBuffer>> =>
  (typeof secret === "string" ? [secret] : secret).flatMap((text) => {
    const keys = parseWebhookSecrets(text)
    if (keys === undefined) throw new WebhookVerificationError("secret", `The webhook secret ${WEBHOOK_SECRETS_RULE}.`)
    return keys
  })

const importKey = (key: Uint8Array<ArrayBuffer>): ReturnType<typeof crypto.subtle.importKey> =>
  crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"])

/**
 * Checks a webhook Accord sent and returns its event, typed by `type`. `secret` is the endpoint's secret as the server
 * has it in `WEBHOOK_SECRET`: one `whsec_` secret, or several separated by spaces during a rotation (any one may have
 * signed it), given as that one text or as a list of such texts; `body` is the request's body exactly as received
 * (its bytes or their text), never a re-serialised JSON. Rejects with a `WebhookVerificationError` when a header is missing, the
 * timestamp is further from now than the tolerance, or no signature matches: then nothing of the request may be used.
 * Deduplicate by the event's `id` (the `webhook-id`): delivery is at least once.
 */
export const verifyWebhook = async (
  secret: string | ReadonlyArray<string>,
  headers: WebhookHeaders,
  body: string | Uint8Array,
  options: VerifyWebhookOptions = {}
): Promise<AccordEvent> => {
  const id = header(headers, "webhook-id")
  const timestamp = header(headers, "webhook-timestamp")
  const signatures = header(headers, "webhook-signature")
  if (id === undefined || timestamp === undefined || signatures === undefined || !/^[0-9]{1,15}$/.test(timestamp))
    throw new WebhookVerificationError("headers", "webhook-id, webhook-timestamp and webhook-signature are required.")
  const now = (options.now ?? Date.now)() / 1000
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300))
    throw new WebhookVerificationError("timestamp", "The webhook's timestamp is too far from now.")
  const bytes = typeof body === "string" ? encoder.encode(body) : body
  const prefix = encoder.encode(`${id}.${timestamp}.`)
  const signed = new Uint8Array(prefix.length + bytes.length)
  signed.set(prefix)
  signed.set(bytes, prefix.length)
  const given: Array<Uint8Array> = []
  for (const entry of signatures.split(" ")) {
    const signature = entry.startsWith("v1,") ? base64Bytes(entry.slice(3)) : undefined
    if (signature !== undefined) given.push(signature)
  }
  let verified = false
  for (const key of await Promise.all(keysOf(secret).map(importKey))) {
    const expected = new Uint8Array(await crypto.subtle.sign("HMAC", key, signed))
    // Every signature against every secret, none skipped once one matched.
    for (const signature of given) if (sameBytes(signature, expected)) verified = true
  }
  if (!verified) throw new WebhookVerificationError("signature", "No signature of the webhook matches its body.")
  let event: unknown
  try {
    event = JSON.parse(decoder.decode(bytes))
  } catch {
    throw new WebhookVerificationError("body", "The webhook's body is not JSON.")
  }
  // Signed by the secret's holder, so Accord's own envelope (docs/api.md, "Events"); only its frame is checked here.
  if (typeof event !== "object" || event === null || (event as { specversion?: unknown }).specversion !== "1.0")
    throw new WebhookVerificationError("body", "The webhook's body is not a CloudEvents 1.0 event.")
  return event as AccordEvent
}

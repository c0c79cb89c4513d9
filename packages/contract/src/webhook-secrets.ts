// @accord/contract/webhook-secrets: the one grammar of webhook signing secrets (Standard Webhooks' `whsec_`), read by
// the server from `WEBHOOK_SECRET` and by `verifyWebhook` (@accord/client/webhooks) from the same text: plain code on
// the web platform (atob), nothing of effect or Node, so a receiver's bundle carries only this.

/** What a secret starts with. */
export const WEBHOOK_SECRET_PREFIX = "whsec_"

/** The fewest bytes a secret's key holds. */
export const MIN_WEBHOOK_KEY_BYTES = 16

/** The rule, as the server's usage error and `verifyWebhook`'s refusal word it. */
export const WEBHOOK_SECRETS_RULE = `must be ${WEBHOOK_SECRET_PREFIX} secrets (base64 of ${MIN_WEBHOOK_KEY_BYTES} bytes or more), separated by spaces`

/** What separates secrets, and may come before the first or after the last: spaces, tabs and line breaks. */
const SEPARATORS = /[ \t\r\n]+/

/** The base64 alphabet (RFC 4648, section 4), then at most two `=`; the length is checked apart. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/**
 * The key of one secret: `whsec_`, then base64 with its padding or without it (a padded text is a whole number of
 * four-character groups; one character alone encodes no byte), of at least MIN_WEBHOOK_KEY_BYTES bytes. Undefined
 * otherwise.
 */
export const webhookKeyOf = (secret: string): Uint8Array<ArrayBuffer> | undefined => {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) return undefined
  const text = secret.slice(WEBHOOK_SECRET_PREFIX.length)
  if (!BASE64.test(text)) return undefined
  if (text.endsWith("=") ? text.length % 4 !== 0 : text.length % 4 === 1) return undefined
  // atob reads exactly these texts (the forgiving-base64 decode of the HTML standard), alike on every runtime.
  const key = Uint8Array.from(atob(text), (char) => char.charCodeAt(0))
  return key.length < MIN_WEBHOOK_KEY_BYTES ? undefined : key
}

/**
 * The keys of a `WEBHOOK_SECRET`: one secret, or several separated by spaces, tabs or line breaks during a rotation
 * (each delivery is then signed with every one), with any of those before or after. Undefined when there is none or
 * one of them is not a secret (`webhookKeyOf`); never echoes them.
 */
export const parseWebhookSecrets = (text: string): ReadonlyArray<Uint8Array<ArrayBuffer>> | undefined => {
  const keys: Array<Uint8Array<ArrayBuffer>> = []
  // Separators before the first secret or after the last leave an empty text at that end: not a secret.
  for (const secret of text.split(SEPARATORS)) {
    if (secret === "") continue
    const key = webhookKeyOf(secret)
    if (key === undefined) return undefined
    keys.push(key)
  }
  return keys.length === 0 ? undefined : keys
}

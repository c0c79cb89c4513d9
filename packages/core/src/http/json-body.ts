import { PROBLEMS } from "@accord/contract"

/**
 * Strict JSON reading of request bodies, done once in core so every adapter rejects the same inputs
 * (docs/api.md, "Precise rules": invalid UTF-8, a byte-order mark, duplicate keys, prototype keys, nesting over 32).
 */
export const MAX_JSON_DEPTH = 32
const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"])
const DETAIL = PROBLEMS.invalid_json.detail
// fatal: invalid UTF-8 throws; ignoreBOM: keep a BOM in the text so JSON.parse refuses it.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

export type JsonReadResult =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly detail: string }

/**
 * Walks already-valid JSON text once to find what JSON.parse silently accepts: duplicate keys (it keeps the last),
 * prototype-pollution keys and excessive depth. Valid syntax lets this scanner stay small: it only needs to know
 * where strings start and end and which strings are object keys. Its detail names no key (docs/api.md, "Errors").
 */
const structuralProblem = (text: string): string | undefined => {
  const keysPerObject: Array<Set<string> | undefined> = []
  let expectingKey = false
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i)
    if (char === 0x7b /* { */ || char === 0x5b /* [ */) {
      keysPerObject.push(char === 0x7b ? new Set() : undefined)
      if (keysPerObject.length > MAX_JSON_DEPTH) return DETAIL.tooDeep(MAX_JSON_DEPTH)
      expectingKey = char === 0x7b
    } else if (char === 0x7d /* } */ || char === 0x5d /* ] */) {
      keysPerObject.pop()
      expectingKey = false
    } else if (char === 0x2c /* , */) {
      expectingKey = keysPerObject[keysPerObject.length - 1] !== undefined
    } else if (char === 0x22 /* " */) {
      const start = i
      let escaped = false
      for (i++; i < text.length; i++) {
        const c = text.charCodeAt(i)
        if (c === 0x5c /* \ */) {
          escaped = true
          i++
        } else if (c === 0x22) break
      }
      if (!expectingKey) continue
      expectingKey = false
      const key = escaped ? (JSON.parse(text.slice(start, i + 1)) as string) : text.slice(start + 1, i)
      if (FORBIDDEN_KEYS.has(key)) return DETAIL.forbiddenKey
      const keys = keysPerObject[keysPerObject.length - 1]
      if (keys?.has(key)) return DETAIL.repeatedKey
      keys?.add(key)
    }
  }
  return undefined
}

export const readJson = (bytes: Uint8Array): JsonReadResult => {
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return { ok: false, detail: DETAIL.notUtf8 }
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { ok: false, detail: DETAIL.notJson }
  }
  const problem = structuralProblem(text)
  return problem === undefined ? { ok: true, value } : { ok: false, detail: problem }
}

export const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

import type { HttpHeaders } from "./types.js"
import { headerValue } from "./header-value.js"

/** Longer `Accept` values are read as none (JSON): browsers send about 100 characters. */
const MAX_ACCEPT_LENGTH = 1024

/** The weight of one media range (`q`, RFC 9110 12.4.2), 1 when absent, 0 when unreadable. */
const weightOf = (parameters: ReadonlyArray<string>): number => {
  for (const parameter of parameters) {
    const equals = parameter.indexOf("=")
    if (equals < 0 || parameter.slice(0, equals).trim().toLowerCase() !== "q") continue
    const q = Number(parameter.slice(equals + 1).trim())
    return Number.isFinite(q) && q >= 0 && q <= 1 ? q : 0
  }
  return 1
}

/**
 * Which representation an operation that streams answers (docs/api.md, "Events"): the stream when `Accept` names
 * `text/event-stream` with a weight above `application/json`'s; JSON when it names JSON, a wildcard that covers it, or
 * nothing at all (as before the stream existed); `none` (406) when it names neither.
 */
export const negotiateStream = (headers: HttpHeaders): "json" | "stream" | "none" => {
  const raw = headerValue(headers, "accept")
  const accept = typeof raw === "string" ? raw : raw?.join(", ")
  if (accept === undefined || accept.trim() === "" || accept.length > MAX_ACCEPT_LENGTH) return "json"
  let json = 0
  let explicitJson = 0
  let stream = 0
  for (const range of accept.split(",")) {
    const [type = "", ...parameters] = range.split(";")
    const essence = type.trim().toLowerCase()
    const weight = weightOf(parameters)
    if (essence === "application/json") explicitJson = Math.max(explicitJson, weight)
    if (essence === "application/json" || essence === "application/*" || essence === "*/*")
      json = Math.max(json, weight)
    else if (essence === "text/event-stream") stream = Math.max(stream, weight)
  }
  if (stream > 0 && stream > explicitJson) return "stream"
  return json > 0 ? "json" : "none"
}

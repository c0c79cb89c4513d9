import { isDeepStrictEqual } from "node:util"

/**
 * The assertions the audits make, without a test framework: each throws an `AuditFailure` whose message is the
 * readable reason a runner prints (the label says which request and which part of the answer).
 */
export class AuditFailure extends Error {
  override readonly name = "AuditFailure"
}

/** Thrown by an audit that cannot judge this target (the runner reports a skip with the reason, not a failure). */
export class AuditSkipped extends Error {
  override readonly name = "AuditSkipped"
}

const MAX_SHOWN = 300

/** A value as JSON (`undefined` as such), cut to a readable length. */
export const shown = (value: unknown): string => {
  const json = value === undefined ? "undefined" : (JSON.stringify(value) ?? String(value))
  return json.length > MAX_SHOWN ? `${json.slice(0, MAX_SHOWN)}…` : json
}

export const fail = (reason: string): never => {
  throw new AuditFailure(reason)
}

/** Same value: primitives by identity, arrays and plain objects member by member (order of keys aside). */
export const equal = (actual: unknown, expected: unknown, label: string): void => {
  if (!isDeepStrictEqual(actual, expected)) fail(`${label}: expected ${shown(expected)}, got ${shown(actual)}`)
}

export const notEqual = (actual: unknown, unexpected: unknown, label: string): void => {
  if (isDeepStrictEqual(actual, unexpected)) fail(`${label}: expected anything but ${shown(unexpected)}`)
}

export const matches = (actual: unknown, pattern: RegExp, label: string): void => {
  if (typeof actual !== "string" || !pattern.test(actual)) fail(`${label}: expected ${pattern}, got ${shown(actual)}`)
}

export const doesNotMatch = (actual: string, pattern: RegExp, label: string): void => {
  const found = pattern.exec(actual)
  if (found !== null) fail(`${label}: ${pattern} found ${shown(found[0])} in ${shown(actual)}`)
}

/** A string that contains `part`, or an array that holds `part`. */
export const includes = (actual: string | ReadonlyArray<unknown>, part: unknown, label: string): void => {
  const found =
    typeof actual === "string"
      ? typeof part === "string" && actual.includes(part)
      : actual.some((item) => isDeepStrictEqual(item, part))
  if (!found) fail(`${label}: expected ${shown(actual)} to contain ${shown(part)}`)
}

export const excludes = (actual: string | ReadonlyArray<unknown>, part: unknown, label: string): void => {
  const found =
    typeof actual === "string"
      ? typeof part === "string" && actual.includes(part)
      : actual.some((item) => isDeepStrictEqual(item, part))
  if (found) fail(`${label}: ${shown(part)} must not appear`)
}

export const includesAll = (actual: ReadonlyArray<unknown>, parts: ReadonlyArray<unknown>, label: string): void => {
  const missing = parts.filter((part) => !actual.some((item) => isDeepStrictEqual(item, part)))
  if (missing.length > 0) fail(`${label}: ${shown(actual)} lacks ${shown(missing)}`)
}

export const greaterThan = (actual: number, bound: number, label: string): void => {
  if (!(actual > bound)) fail(`${label}: expected more than ${bound}, got ${actual}`)
}

export const lessThan = (actual: number, bound: number, label: string): void => {
  if (!(actual < bound)) fail(`${label}: expected less than ${bound}, got ${actual}`)
}

export const isTrue = (condition: boolean, label: string): void => {
  if (!condition) fail(label)
}

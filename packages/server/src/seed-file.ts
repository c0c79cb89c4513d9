import { readFile } from "node:fs/promises"
import { Result, Schema } from "effect"
import { type FieldIssue, Seed, toValidationError } from "@accord/domain"
import { ConfigError } from "./config.js"

const decodeSeed = Schema.decodeUnknownResult(Seed, { errors: "all", onExcessProperty: "error" })

/** `/payment_methods/2/user_id` -> `payment_methods[2].user_id`, the way people read a JSON file. */
const fieldName = (pointer: string): string =>
  pointer === ""
    ? "the top level"
    : pointer
        .slice(1)
        .split("/")
        .map((token) => token.replaceAll("~1", "/").replaceAll("~0", "~"))
        .map((token, index) => (/^[0-9]+$/.test(token) ? `[${token}]` : index === 0 ? token : `.${token}`))
        .join("")

const readError = (error: unknown): string => {
  const code = typeof error === "object" && error !== null && "code" in error ? error.code : undefined
  switch (code) {
    case "ENOENT":
      return "not found"
    case "EACCES":
    case "EPERM":
      return "cannot be read (permission denied)"
    case "EISDIR":
      return "is a directory, not a file"
    default:
      return `cannot be read (${typeof code === "string" ? code : "unknown error"})`
  }
}

/**
 * V8's JSON.parse message quotes the text around the error, which may be a token: only the position is kept,
 * turned into line and column.
 */
const jsonError = (text: string, error: unknown): string => {
  const position = error instanceof Error ? /at position ([0-9]+)/.exec(error.message)?.[1] : undefined
  if (text.trim() === "") return "is empty (expected a JSON object)"
  if (position === undefined) return "is not valid JSON"
  const before = text.slice(0, Number(position))
  const line = before.split("\n").length
  const column = Number(position) - before.lastIndexOf("\n")
  return `is not valid JSON (line ${line}, column ${column})`
}

/** Seed ids carry no message of their own, so the core would only say "is not valid" or "has the wrong type". */
const ruleOfField: Record<string, string> = {
  "": "must be a JSON object",
  "/users": "must be an array of {id, token}",
  "/clients": "must be an array of {id, token}",
  "/payment_methods": "must be an array of {id, user_id, is_default}",
  "/users/*/id": "must be a non-empty string",
  "/clients/*/id": "must be a non-empty string",
  "/payment_methods/*/user_id": "must be a non-empty string",
  "/payment_methods/*/id": "must be 1 to 100 characters of [A-Za-z0-9_-]"
}

const detailOf = (issue: FieldIssue): string => {
  const generic = issue.detail === "is not valid" || issue.detail === "has the wrong type"
  const rule = ruleOfField[issue.pointer.replace(/\/[0-9]+(?=\/)/g, "/*")]
  return generic && rule !== undefined ? rule : issue.detail
}

/**
 * Rules across entries that the shape alone cannot state. Returns one message per problem, never quoting a token.
 *
 * - A token may appear once in the whole file: one token naming two principals would be ambiguous.
 * - Payment method ids are unique across users (the route names a method by id alone).
 * - A user has at most one default payment method (the contract's invariant, checked before it reaches a store).
 * - A payment method's `user_id` must be a user of the same file: the server authenticates only with seed tokens,
 *   so a method of a user without one could never be used, and the usual cause is a typo in the id.
 *   A user may be listed several times, once per token.
 */
export const seedProblems = (seed: Seed): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const tokenOwner = new Map<string, string>()
  const credentials = [
    ...seed.users.map((user, index) => ({ token: user.token, where: `users[${index}].token` })),
    ...seed.clients.map((client, index) => ({ token: client.token, where: `clients[${index}].token` }))
  ]
  for (const { token, where } of credentials) {
    const first = tokenOwner.get(token)
    if (first === undefined) tokenOwner.set(token, where)
    else problems.push(`${where}: the same token as ${first} (a token may appear only once)`)
  }

  const users = new Set<string>(seed.users.map((user) => user.id))
  const methodAt = new Map<string, number>()
  const defaultAt = new Map<string, number>()
  seed.payment_methods.forEach((method, index) => {
    const where = `payment_methods[${index}]`
    const first = methodAt.get(method.id)
    if (first === undefined) methodAt.set(method.id, index)
    else
      problems.push(`${where}.id: "${method.id}" is already payment_methods[${first}].id (ids are unique across users)`)
    if (!users.has(method.user_id)) {
      problems.push(`${where}.user_id: user "${method.user_id}" is not listed in "users"`)
    }
    if (method.is_default) {
      const firstDefault = defaultAt.get(method.user_id)
      if (firstDefault === undefined) defaultAt.set(method.user_id, index)
      else {
        problems.push(
          `${where}.is_default: user "${method.user_id}" already has a default payment method (payment_methods[${firstDefault}])`
        )
      }
    }
  })
  return problems
}

/** Parses and checks a seed file's text. Throws ConfigError naming each problem; never quotes a token. */
export const parseSeed = (text: string, path: string): Seed => {
  const fail = (problem: string) => new ConfigError(`seed file ${path}: ${problem}`)
  let json: unknown
  try {
    // Editors on Windows like to write a byte-order mark; it is not JSON, but it is no mistake of the operator.
    json = JSON.parse(text.replace(/^\uFEFF/, ""))
  } catch (error) {
    throw fail(jsonError(text, error))
  }
  const decoded = decodeSeed(json)
  if (Result.isFailure(decoded)) {
    // The core's flattening reports field, rule and detail but never the offending value (effect's own formatters
    // quote it, tokens included).
    const issues = toValidationError(decoded.failure.issue).issues
    throw fail(
      ["invalid content", ...issues.map((issue) => `  ${fieldName(issue.pointer)}: ${detailOf(issue)}`)].join("\n")
    )
  }
  const problems = seedProblems(decoded.success)
  if (problems.length > 0) throw fail(["invalid content", ...problems.map((problem) => `  ${problem}`)].join("\n"))
  return decoded.success
}

/** Reads, parses and checks a seed file. Throws ConfigError (exit code 2) naming the problem. */
export const readSeedFile = async (path: string): Promise<Seed> => {
  let text: string
  try {
    text = await readFile(path, "utf8")
  } catch (error) {
    throw new ConfigError(`seed file ${path}: ${readError(error)}`)
  }
  return parseSeed(text, path)
}

import { parseArgs } from "node:util"
import {
  auditTarget,
  DEFAULT_AUDIT_TIMEOUT_MS,
  runAudits,
  type AuditResult,
  type AuditTarget,
  type RunLimits
} from "./audit.js"
import { httpAudits } from "./index.js"

/**
 * `accord-conformance`: the audits against any base URL, one line per audit. Exit code 1 when a MUST audit fails,
 * 2 for a usage error, 0 otherwise (SHOULD failures and skips included).
 */

interface Option {
  readonly name: string
  readonly kind: "string" | "boolean"
  /** Read when the flag is absent (tokens: so that they need not show in the process list). */
  readonly env?: string
  readonly value?: string
  readonly help: string
}

/**
 * The whole run's default time limit: a run against a conforming server on the same machine takes seconds, one over a
 * slow network a few minutes; past ten, the target is stalling it (docs/SECURITY.md, item 32).
 */
const DEFAULT_RUN_TIMEOUT_MS = 600_000

const OPTIONS: ReadonlyArray<Option> = [
  {
    name: "url",
    kind: "string",
    value: "URL",
    help: "the API's base URL with its mount prefix, e.g. http://127.0.0.1:3000/api"
  },
  { name: "user-token", kind: "string", env: "ACCORD_USER_TOKEN", value: "TOKEN", help: "a user's bearer token" },
  {
    name: "other-user-token",
    kind: "string",
    env: "ACCORD_OTHER_USER_TOKEN",
    value: "TOKEN",
    help: "another user's bearer token"
  },
  { name: "client-token", kind: "string", env: "ACCORD_CLIENT_TOKEN", value: "TOKEN", help: "a client's bearer token" },
  {
    name: "user-payment-methods",
    kind: "string",
    value: "IDS",
    help: "every payment method id of the user, comma-separated, at least two (default: seed.json's pm_1,pm_2)"
  },
  {
    name: "other-user-payment-methods",
    kind: "string",
    value: "IDS",
    help: "every payment method id of the other user, comma-separated (default: seed.json's pm_3)"
  },
  {
    name: "cors-origin",
    kind: "string",
    value: "ORIGIN",
    help: "an origin the server's CORS allows (any with --cors-origin '*'): runs the CORS audits, skipped without it"
  },
  { name: "only", kind: "string", value: "IDS", help: "run only these audits (comma-separated ids)" },
  {
    name: "timeout-ms",
    kind: "string",
    value: "MS",
    help: `the whole run's time limit (default ${DEFAULT_RUN_TIMEOUT_MS}): the audits not started by then fail`
  },
  {
    name: "audit-timeout-ms",
    kind: "string",
    value: "MS",
    help: `every audit's time limit (default: its own, ${DEFAULT_AUDIT_TIMEOUT_MS} for most)`
  },
  { name: "json", kind: "boolean", help: "print one JSON document instead of lines" },
  { name: "list", kind: "boolean", help: "print every audit's id, level and title, and run nothing" },
  { name: "help", kind: "boolean", help: "print this text" }
]

const REQUIRED = ["url", "user-token", "other-user-token", "client-token"] as const

export const usage = (): string => {
  const flags = OPTIONS.map((option) => [
    `--${option.name}${option.value === undefined ? "" : ` ${option.value}`}`,
    `${option.help}${option.env === undefined ? "" : ` (or ${option.env})`}`
  ])
  const width = Math.max(...flags.map(([flag = ""]) => flag.length))
  return [
    "Usage: accord-conformance --url URL --user-token TOKEN --other-user-token TOKEN --client-token TOKEN [options]",
    "",
    "Runs Accord's HTTP conformance audits against a running server and prints each audit's id with PASS, FAIL or",
    "SKIP. It changes only the two users' preferences and default payment methods and creates plan entries with",
    "unique emails (README.md). Exit code: 1 when a MUST audit fails, 2 for a usage error, 0 otherwise.",
    "",
    ...flags.map(([flag = "", help]) => `  ${flag.padEnd(width)}  ${help}`),
    ""
  ].join("\n")
}

interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>
  readonly out: (text: string) => void
  readonly err: (text: string) => void
}

class UsageError extends Error {}

const idList = (value: string | undefined): ReadonlyArray<string> | undefined =>
  value === undefined
    ? undefined
    : value
        .split(",")
        .map((id) => id.trim())
        .filter((id) => id !== "")

/** Every token the target holds, replaced in text the CLI prints (a failure reason may quote a request). */
const redactor = (target: AuditTarget): ((text: string) => string) => {
  const secrets: ReadonlyArray<readonly [string, string]> = [
    [target.userToken, "<user token>"],
    [target.otherUserToken, "<other user token>"],
    [target.clientToken, "<client token>"]
  ]
  return (text) => secrets.reduce((redacted, [secret, name]) => redacted.replaceAll(secret, name), text)
}

/**
 * What a terminal acts on instead of showing (docs/SECURITY.md, item 33): C0 but the line feed, DEL and C1
 * (`\p{Cc}`: escape sequences, carriage return, backspace), the line and paragraph separators, and the bidi marks,
 * embeddings, overrides and isolates that reorder what is shown. One character class: linear.
 */
const TERMINAL_CONTROLS = /[\p{Cc}\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/gu

const hex = (code: number, digits: number): string => code.toString(16).padStart(digits, "0")

/** For a terminal: each control as `\x1b` or `\u202e`; line feeds stay, as the caller indents every line. */
const escapedForTerminal = (text: string): string =>
  text.replace(TERMINAL_CONTROLS, (control) => {
    const code = control.charCodeAt(0)
    return control === "\n" ? control : code <= 0xff ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`
  })

/**
 * JSON text as `JSON.stringify` writes it, with DEL, C1 and the separators and bidi controls escaped too (it escapes
 * C0 only): the same value once parsed, and nothing a terminal acts on when the report is shown raw. Outside strings,
 * `JSON.stringify` writes ASCII only, so every match is inside a string; its own line feeds are layout.
 */
const escapedJson = (json: string): string =>
  json.replace(TERMINAL_CONTROLS, (control) => (control === "\n" ? control : `\\u${hex(control.charCodeAt(0), 4)}`))

/** A result's line, and its reason indented under it: no line a target writes can start like a result line. */
const line = (result: AuditResult, redact: (text: string) => string): string => {
  const head = `${result.status.toUpperCase().padEnd(4)}  ${result.level.padEnd(6)}  ${result.id}`
  return result.reason === undefined
    ? head
    : `${head}\n      ${escapedForTerminal(redact(result.reason)).replaceAll("\n", "\n      ")}`
}

/** A flag's value in milliseconds: a whole number above 0. */
const milliseconds = (name: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined
  const parsed = /^[0-9]{1,9}$/.test(value) ? Number(value) : 0
  if (parsed <= 0) throw new UsageError(`--${name} must be a whole number of milliseconds above 0, got ${value}`)
  return parsed
}

const parse = (argv: ReadonlyArray<string>) => {
  try {
    return parseArgs({
      args: [...argv],
      options: Object.fromEntries(OPTIONS.map((option) => [option.name, { type: option.kind }])),
      strict: true,
      allowPositionals: false
    }).values
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
}

/** Runs the CLI on `argv` (without `node` and the script); resolves with the exit code. */
export const runCli = async (argv: ReadonlyArray<string>, io: CliIo): Promise<number> => {
  try {
    const values = parse(argv)
    const flag = (name: string): string | undefined => {
      const value = values[name]
      if (typeof value === "string") return value
      const env = OPTIONS.find((option) => option.name === name)?.env
      return env === undefined ? undefined : io.env[env]
    }
    if (values["help"] === true) {
      io.out(usage())
      return 0
    }
    const only = idList(flag("only"))
    const unknown = (only ?? []).filter((id) => !httpAudits.some((audit) => audit.id === id))
    if (unknown.length > 0) throw new UsageError(`no audit has the id ${unknown.join(", ")}`)
    const audits = only === undefined ? httpAudits : httpAudits.filter((audit) => only.includes(audit.id))
    if (values["list"] === true) {
      io.out(audits.map((audit) => `${audit.level.padEnd(6)}  ${audit.id}  ${audit.title}\n`).join(""))
      return 0
    }
    const missing = REQUIRED.filter((name) => (flag(name) ?? "") === "")
    if (missing.length > 0) throw new UsageError(`missing ${missing.map((name) => `--${name}`).join(", ")}`)
    const auditTimeoutMs = milliseconds("audit-timeout-ms", flag("audit-timeout-ms"))
    const limits: RunLimits = {
      runTimeoutMs: milliseconds("timeout-ms", flag("timeout-ms")) ?? DEFAULT_RUN_TIMEOUT_MS,
      ...(auditTimeoutMs === undefined ? {} : { auditTimeoutMs })
    }
    const userPaymentMethods = idList(flag("user-payment-methods"))
    const otherUserPaymentMethods = idList(flag("other-user-payment-methods"))
    const corsOrigin = flag("cors-origin")
    let target: AuditTarget
    try {
      target = auditTarget({
        url: flag("url") ?? "",
        userToken: flag("user-token") ?? "",
        otherUserToken: flag("other-user-token") ?? "",
        clientToken: flag("client-token") ?? "",
        ...(userPaymentMethods === undefined ? {} : { userPaymentMethods }),
        ...(otherUserPaymentMethods === undefined ? {} : { otherUserPaymentMethods }),
        ...(corsOrigin === undefined || corsOrigin === "" ? {} : { corsOrigin })
      })
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error))
    }
    const redact = redactor(target)
    const json = values["json"] === true
    if (!json) io.out(`accord-conformance: ${audits.length} audits against ${target.url}\n`)
    const results = await runAudits(
      audits,
      target,
      (result) => {
        if (!json) io.out(`${line(result, redact)}\n`)
      },
      limits
    )
    const count = (status: AuditResult["status"], level?: AuditResult["level"]) =>
      results.filter((result) => result.status === status && (level === undefined || result.level === level)).length
    const summary = {
      passed: count("pass"),
      failed: count("fail"),
      mustFailed: count("fail", "MUST"),
      shouldFailed: count("fail", "SHOULD"),
      skipped: count("skip")
    }
    if (json) {
      const redacted = results.map((result) =>
        result.reason === undefined ? result : { ...result, reason: redact(result.reason) }
      )
      io.out(`${escapedJson(JSON.stringify({ url: target.url, summary, results: redacted }, null, 2))}\n`)
    } else {
      io.out(
        `${summary.passed} passed, ${summary.failed} failed (${summary.mustFailed} MUST, ${summary.shouldFailed} ` +
          `SHOULD), ${summary.skipped} skipped\n`
      )
    }
    return summary.mustFailed > 0 ? 1 : 0
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    io.err(`accord-conformance: ${error.message}\n\n${usage()}`)
    return 2
  }
}

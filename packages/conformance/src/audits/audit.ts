import type { OperationId } from "@accord/contract"
import { setMaxListeners } from "node:events"
import { fetchSend, type Fetch } from "../fetch-send.js"
import { apiPaths, randomSuffix, type ApiPaths } from "../paths.js"
import { send, type RawRequest, type RawResponse } from "../raw-http.js"
import { DEFAULT_QUIET_MS, exchange, type Exchanged } from "../raw-socket.js"
import { AuditFailure, AuditSkipped } from "./assert.js"

/** RFC 2119: a MUST failure breaks the contract (docs/api.md); a SHOULD failure is a recommendation not followed. */
export type AuditLevel = "MUST" | "SHOULD"

/**
 * What an audit needs beyond a base URL, three tokens and the payment method ids of two users:
 * - `wire`: bytes on a socket that no HTTP client sends (two Authorization headers, `Transfer-Encoding: gzip,
 *   chunked`): `node:net`/`node:tls`, which every Node runner has;
 * - `raw-http`: HTTP/1.1 framing that a fetch leaves to its runtime: a declared length never sent, chunk boundaries,
 *   a body on GET or HEAD, the Content-Length of an answer. `send` over `node:http` has it, and any `send` a runner
 *   gives; a target built on a `fetch` has not;
 * - `seeded`: a store the runner seeded itself (`SeededFacts`): users no request has used yet, a user without
 *   payment methods, a 512-character token. A deployment has none of these, so the CLI skips these audits;
 * - `cors`: an origin the server's CORS allows (`corsOrigin`): CORS is off by default, and only the runner knows
 *   which origins a deployment lets in.
 */
export type AuditNeed = "wire" | "raw-http" | "seeded" | "cors"

/** An audit: a rule of docs/api.md checked from outside over HTTP, with an id that never changes. */
export interface Audit {
  /** `ACC-` and a readable slug; stable across releases (a changed rule gets a new id). */
  readonly id: string
  readonly level: AuditLevel
  readonly title: string
  readonly needs: ReadonlyArray<AuditNeed>
  /**
   * The operations of the contract whose behaviour it checks, by operationId (none: a rule of every answer, or of
   * what is not an operation); a coverage test fails when an operation has no audit of its own.
   */
  readonly operations: ReadonlyArray<OperationId>
  /** Its deadline, when the audit takes longer than most (default `DEFAULT_AUDIT_TIMEOUT_MS`, 30 s). */
  readonly timeoutMs?: number
  /** Resolves when the target conforms; throws an `AuditFailure` with the reason when it does not. */
  readonly run: (target: AuditTarget) => Promise<void>
}

/** What a runner that seeded the store itself knows (`makeAuditFixture`); never a deployment's users. */
export interface SeededFacts {
  /** Users no request has used yet: the first GET, the first PUT `{}`, the first PUT with values. */
  readonly newUserForGet: string
  readonly newUserForEmptyPut: string
  readonly newUserForPut: string
  /** A user no request has used yet, its payment methods as seeded in code-point order, and its seeded default. */
  readonly listUser: {
    readonly token: string
    readonly paymentMethods: ReadonlyArray<string>
    readonly defaultPaymentMethod: string
  }
  readonly userWithoutPaymentMethods: string
  /** A user whose token is 512 characters followed by `==`. */
  readonly paddedTokenUser: string
}

/** Where and as whom the audits run. Tokens are bearer tokens of the deployment under audit. */
export interface AuditTargetOptions {
  /** The API's base URL, mount prefix included: `http://127.0.0.1:3000/api`. */
  readonly url: string
  readonly userToken: string
  readonly otherUserToken: string
  readonly clientToken: string
  /** Every payment method id of the user, at least two; default seed.json's `pm_1`, `pm_2`. */
  readonly userPaymentMethods?: ReadonlyArray<string>
  /** Every payment method id of the other user, at least one; default seed.json's `pm_3`. */
  readonly otherUserPaymentMethods?: ReadonlyArray<string>
  /** Makes this run's plan entry emails and unknown ids its own; default random. */
  readonly run?: string
  readonly seeded?: SeededFacts
  /** The transport, default `send` over `node:http`/`node:https`; it must honour every field of `RawRequest`. */
  readonly send?: (request: RawRequest) => Promise<RawResponse>
  /**
   * Any fetch instead (the runtime's, or a fetch handler called in process): the audits' requests go
   * through it, against the URL's origin. Without a `send` and an `exchange` of its own, such a target meets neither
   * `raw-http` nor `wire`: those audits are skipped with the reason.
   */
  readonly fetch?: Fetch
  /**
   * Raw bytes on a fresh connection (the `wire` need), default `node:net`/`node:tls`; `false` where there is none.
   * `signal` aborts it when the audit's deadline passes.
   */
  readonly exchange?: ((bytes: string, signal?: AbortSignal) => Promise<Exchanged>) | false
  /**
   * An origin the server's CORS allows (the `cors` need): one of its `--cors-origin` list, any origin under `*`
   * (`https://app.example.com`). Without it the CORS audits are skipped.
   */
  readonly corsOrigin?: string
}

export interface AuditTarget {
  readonly url: string
  /** The contract's paths under the URL's prefix, and the prefix itself (`/api`). */
  readonly prefix: string
  readonly paths: ApiPaths
  readonly userToken: string
  readonly otherUserToken: string
  readonly clientToken: string
  /** In code-point order, as the API lists them. */
  readonly userPaymentMethods: ReadonlyArray<string>
  readonly otherUserPaymentMethods: ReadonlyArray<string>
  readonly run: string
  readonly seeded: SeededFacts | undefined
  readonly send: (request: RawRequest) => Promise<RawResponse>
  /** Whether `send` honours every field of `RawRequest` (the `raw-http` need): false when it is a fetch's. */
  readonly rawHttp: boolean
  readonly exchange: ((bytes: string, signal?: AbortSignal) => Promise<Exchanged>) | undefined
  readonly corsOrigin: string | undefined
}

/** seed.json's payment methods: the defaults of the CLI's `--user-payment-methods` and `--other-user-payment-methods`. */
export const SEED_JSON_USER_PAYMENT_METHODS: ReadonlyArray<string> = ["pm_1", "pm_2"]
export const SEED_JSON_OTHER_USER_PAYMENT_METHODS: ReadonlyArray<string> = ["pm_3"]

/** docs/api.md, "Precise rules": lists are ordered by id in code-point order (never a locale collation). */
export const codePointOrder = (ids: ReadonlyArray<string>): ReadonlyArray<string> =>
  [...ids].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))

export const auditTarget = (options: AuditTargetOptions): AuditTarget => {
  const url = new URL(options.url)
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new Error(`the URL must be http: or https:, got ${url.protocol}`)
  const prefix = url.pathname.replace(/\/+$/, "")
  const userPaymentMethods = codePointOrder(options.userPaymentMethods ?? SEED_JSON_USER_PAYMENT_METHODS)
  const otherUserPaymentMethods = codePointOrder(
    options.otherUserPaymentMethods ?? SEED_JSON_OTHER_USER_PAYMENT_METHODS
  )
  if (userPaymentMethods.length < 2) throw new Error("the user needs at least two payment methods")
  if (otherUserPaymentMethods.length < 1) throw new Error("the other user needs at least one payment method")
  const base = url.href
  const viaFetch = options.send === undefined && options.fetch !== undefined
  return {
    url: base,
    prefix,
    paths: apiPaths(prefix),
    userToken: options.userToken,
    otherUserToken: options.otherUserToken,
    clientToken: options.clientToken,
    userPaymentMethods,
    otherUserPaymentMethods,
    run: options.run ?? randomSuffix(),
    seeded: options.seeded,
    send:
      options.send ?? (options.fetch === undefined ? (request) => send(base, request) : fetchSend(base, options.fetch)),
    rawHttp: !viaFetch,
    // An audit reads one response per exchange: it ends once that response is complete, whether or not the server
    // closes (the requests say `Connection: close`); the quiet time only bounds one that never completes.
    exchange:
      options.exchange === false || (viaFetch && options.exchange === undefined)
        ? undefined
        : (options.exchange ??
          ((bytes, signal) =>
            exchange(base, bytes, DEFAULT_QUIET_MS, { endAtResponse: true, ...(signal !== undefined && { signal }) }))),
    corsOrigin: options.corsOrigin
  }
}

export const audit = (
  definition: Omit<Audit, "needs" | "operations"> & {
    readonly needs?: ReadonlyArray<AuditNeed>
    readonly operations?: ReadonlyArray<OperationId>
  }
): Audit => ({
  ...definition,
  needs: definition.needs ?? [],
  operations: definition.operations ?? []
})

/** The needs `target` cannot meet, as a reason to skip; undefined when the audit can run. */
export const unmetNeeds = (item: Audit, target: AuditTarget): string | undefined => {
  const reasons = item.needs.flatMap((need) => {
    if (need === "seeded" && target.seeded === undefined)
      return [
        "needs a store the runner seeded itself (new users, a user without payment methods, a 512-character token)"
      ]
    if (need === "wire" && target.exchange === undefined) return ["needs raw socket access (node:net)"]
    if (need === "raw-http" && !target.rawHttp)
      return [
        "needs HTTP/1.1 framing a fetch leaves to its runtime (a declared length never sent, chunk boundaries, a body on GET or HEAD, an answer's Content-Length)"
      ]
    if (need === "cors" && target.corsOrigin === undefined)
      return ["needs an origin the server's CORS allows (--cors-origin)"]
    return []
  })
  return reasons.length === 0 ? undefined : reasons.join("; ")
}

export type AuditStatus = "pass" | "fail" | "skip"

export interface AuditResult {
  readonly id: string
  readonly level: AuditLevel
  readonly title: string
  readonly status: AuditStatus
  /** Why it failed or was skipped. */
  readonly reason?: string
  readonly durationMs: number
}

/** An audit's deadline when it names none (`Audit.timeoutMs`). */
export const DEFAULT_AUDIT_TIMEOUT_MS = 30_000

/**
 * The target an audit runs against: every request and exchange carries `signal`, and fails at once once it is aborted,
 * whether or not the transport honours it, so an audit past its deadline stops where it is and holds no connection.
 */
const guardedTarget = (target: AuditTarget, signal: AbortSignal): AuditTarget => {
  const { exchange } = target
  return {
    ...target,
    send: async (request) => {
      signal.throwIfAborted()
      return target.send({ ...request, signal })
    },
    exchange:
      exchange &&
      (async (bytes) => {
        signal.throwIfAborted()
        return exchange(bytes, signal)
      })
  }
}

const resultOf = (item: Audit, started: number, status: AuditStatus, reason?: string): AuditResult => ({
  id: item.id,
  level: item.level,
  title: item.title,
  status,
  ...(reason === undefined ? {} : { reason }),
  durationMs: Math.round(performance.now() - started)
})

/** `runAudit` with the deadline and the words of its failure given (`runAudits` cuts an audit at the run's limit). */
const runWithin = async (
  item: Audit,
  target: AuditTarget,
  timeoutMs: number,
  timedOutReason: string
): Promise<AuditResult> => {
  const started = performance.now()
  const unmet = unmetNeeds(item, target)
  if (unmet !== undefined) return resultOf(item, started, "skip", unmet)
  const timedOut = new AuditFailure(timedOutReason)
  const controller = new AbortController()
  // Every request of the audit listens to the signal, 200 at once in the concurrency audit: that is no leak.
  setMaxListeners(0, controller.signal)
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut), timeoutMs)
  })
  try {
    await Promise.race([item.run(guardedTarget(target, controller.signal)), deadline])
    return resultOf(item, started, "pass")
  } catch (error) {
    if (error instanceof AuditSkipped) return resultOf(item, started, "skip", error.message)
    return resultOf(item, started, "fail", error instanceof Error ? error.message : String(error))
  } finally {
    clearTimeout(timer)
    // Past the deadline, whatever the audit still has in flight fails at once (nothing is left after a result).
    controller.abort(timedOut)
  }
}

/**
 * Runs one audit; anything it throws is a failure with that message (a request that gets no answer fails too). Past
 * its deadline (`timeoutMs`: the audit's own, default 30 s) it fails with "timed out after N ms", and what it has in
 * flight is aborted: connections closed, timers cleared (docs/SECURITY.md, item 32).
 */
export const runAudit = (
  item: Audit,
  target: AuditTarget,
  { timeoutMs = item.timeoutMs ?? DEFAULT_AUDIT_TIMEOUT_MS }: { readonly timeoutMs?: number } = {}
): Promise<AuditResult> => runWithin(item, target, timeoutMs, `timed out after ${timeoutMs} ms`)

/** Deadlines for `runAudits` (docs/SECURITY.md, item 32). */
export interface RunLimits {
  /** Every audit's deadline instead of its own `timeoutMs` (a quick run, a test). */
  readonly auditTimeoutMs?: number
  /** The whole run's: the audit running then fails, and every audit not started yet fails without running. */
  readonly runTimeoutMs?: number
}

/**
 * Runs `audits` one after another (they share the target's users), reporting each result as it comes, each within
 * its deadline (`runAudit`). Past `limits.runTimeoutMs` the audits not started fail, so that a run cut short cannot
 * pass what it never checked; they are reported too, and a run always ends with every audit accounted for.
 */
export const runAudits = async (
  audits: ReadonlyArray<Audit>,
  target: AuditTarget,
  onResult: (result: AuditResult) => void = () => undefined,
  { auditTimeoutMs, runTimeoutMs }: RunLimits = {}
): Promise<ReadonlyArray<AuditResult>> => {
  const runEnds = performance.now() + (runTimeoutMs ?? Infinity)
  const cutShort = `the run's time limit of ${runTimeoutMs} ms was reached`
  const results: Array<AuditResult> = []
  for (const item of audits) {
    const started = performance.now()
    const ownTimeoutMs = auditTimeoutMs ?? item.timeoutMs ?? DEFAULT_AUDIT_TIMEOUT_MS
    const leftMs = Math.round(runEnds - started)
    // An audit the target cannot run is still a skip with its own reason: nothing was cut short.
    const result =
      leftMs <= 0 && unmetNeeds(item, target) === undefined
        ? resultOf(item, started, "fail", `not started: ${cutShort}`)
        : leftMs < ownTimeoutMs
          ? await runWithin(item, target, leftMs, `timed out after ${leftMs} ms: ${cutShort}`)
          : await runWithin(item, target, ownTimeoutMs, `timed out after ${ownTimeoutMs} ms`)
    onResult(result)
    results.push(result)
  }
  return results
}

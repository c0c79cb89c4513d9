import type { RunningServer } from "@accord/node/server"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { Agent } from "node:http"
import type { StartServer } from "../http-conformance.js"
import { comparable, type ComparableResponse } from "../parity.js"
import { exchange, paths, send, type RawRequest } from "@accord/conformance"
import {
  bodyLength,
  fuzzCase,
  isWireMethod,
  makeFuzzFixture,
  type FuzzCase,
  type FuzzFixture,
  type FuzzUser
} from "./generators.js"
import {
  applyToModel,
  checkList,
  checkResult,
  isPreferences,
  listOf,
  type FuzzModels,
  type FuzzResult,
  type UserModel
} from "./oracle.js"

/**
 * The fuzz's runner: sends generated batches to several servers (each user's requests in order on a lane of its
 * own), checks every answer with the oracle and each server's stored data against the model, compares the servers'
 * answers, and as `runHttpFuzz` does all that as a vitest suite under fast-check.
 */

// ---------------------------------------------------------------------------------------------------------------
// Sending

const toRawRequest = (fuzz: FuzzCase): RawRequest => {
  const headers: Record<string, string> = {}
  if (fuzz.authorization !== undefined) headers["Authorization"] = fuzz.authorization
  if (fuzz.contentType !== undefined) headers["Content-Type"] = fuzz.contentType
  if (fuzz.requestId !== undefined) headers["X-Request-Id"] = fuzz.requestId
  return fuzz.body === undefined
    ? { method: fuzz.method, path: fuzz.path, headers }
    : { method: fuzz.method, path: fuzz.path, headers, body: fuzz.body }
}

const wireBytes = (fuzz: FuzzCase): Buffer => {
  const lines = [`${fuzz.method} ${fuzz.path} HTTP/1.1`, "Host: fuzz"]
  const request = toRawRequest(fuzz)
  for (const [name, value] of Object.entries(request.headers ?? {})) lines.push(`${name}: ${value}`)
  const body =
    fuzz.body === undefined
      ? undefined
      : typeof fuzz.body === "string"
        ? Buffer.from(fuzz.body, "utf8")
        : Buffer.from(fuzz.body)
  if (body !== undefined) lines.push(`Content-Length: ${body.length}`)
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), body ?? Buffer.alloc(0)])
}

const sendFuzzCase = async (baseUrl: string, agent: Agent, fuzz: FuzzCase): Promise<FuzzResult> => {
  if (isWireMethod(fuzz.method)) {
    // The server closes the connection after its answer; the quiet time only bounds a server that never answers.
    const { wire, closed } = await exchange(baseUrl, wireBytes(fuzz))
    return { kind: "wire", wire, closed }
  }
  try {
    return { kind: "http", response: await send(baseUrl, toRawRequest(fuzz), agent) }
  } catch (error) {
    return { kind: "error", message: error instanceof Error ? error.message : String(error) }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Batches

const getJson = async (baseUrl: string, agent: Agent, path: string, token: string): Promise<unknown> => {
  const response = await send(baseUrl, { method: "GET", path, headers: { Authorization: `Bearer ${token}` } }, agent)
  if (response.status !== 200)
    throw new Error(`GET ${path}: ${response.status} ${response.body.toString("utf8").slice(0, 300)}`)
  return JSON.parse(response.body.toString("utf8"))
}

const readUser = async (
  baseUrl: string,
  agent: Agent,
  user: FuzzUser
): Promise<{ readonly preferences: unknown; readonly list: unknown }> => ({
  preferences: await getJson(baseUrl, agent, paths.preferences, user.token),
  list: await getJson(baseUrl, agent, paths.paymentMethods, user.token)
})

/** Reads both users' data through the API: the model a batch starts from. */
export const snapshotModels = async (baseUrl: string, agent: Agent, fixture: FuzzFixture): Promise<FuzzModels> => {
  const model = async (user: FuzzUser): Promise<UserModel> => {
    const { preferences, list } = await readUser(baseUrl, agent, user)
    const methods = listOf(list)
    if (!isPreferences(preferences) || methods === undefined)
      throw new Error(`snapshot of ${user.id}: unexpected bodies`)
    return { preferences, methods }
  }
  return { a: await model(fixture.a), b: await model(fixture.b) }
}

/** The final check of a batch: both users' data read back equals the model. */
const checkModels = async (
  baseUrl: string,
  agent: Agent,
  fixture: FuzzFixture,
  models: FuzzModels
): Promise<ReadonlyArray<string>> => {
  const problems: Array<string> = []
  for (const [name, user] of [
    ["a", fixture.a],
    ["b", fixture.b]
  ] as const) {
    const model = models[name]
    const { preferences, list } = await readUser(baseUrl, agent, user)
    if (JSON.stringify(preferences) !== JSON.stringify(model.preferences)) {
      problems.push(
        `user ${name}: preferences ${JSON.stringify(preferences)}, expected ${JSON.stringify(model.preferences)}`
      )
    }
    const listed = listOf(list)
    if (listed === undefined) problems.push(`user ${name}: the list is not a list`)
    else problems.push(...checkList(model, listed, `user ${name}`))
  }
  return problems
}

/**
 * Sends a batch: each user's requests in order on a lane of its own (so their effects follow one another, and the
 * model and the answers do not depend on timing), everything else `concurrency` at a time.
 */
const sendBatch = async (
  baseUrl: string,
  agent: Agent,
  cases: ReadonlyArray<FuzzCase>,
  concurrency: number
): Promise<ReadonlyArray<FuzzResult>> => {
  const results: Array<FuzzResult> = cases.map(() => ({ kind: "error", message: "not sent" }))
  const lanes: Record<"a" | "b" | "free", Array<number>> = { a: [], b: [], free: [] }
  cases.forEach((fuzz, index) =>
    (fuzz.actor === "a" || fuzz.actor === "b" ? lanes[fuzz.actor] : lanes.free).push(index)
  )
  const sendAt = async (index: number) => {
    const fuzz = cases[index]
    if (fuzz !== undefined) results[index] = await sendFuzzCase(baseUrl, agent, fuzz)
  }
  const inOrder = async (indices: ReadonlyArray<number>) => {
    for (const index of indices) await sendAt(index)
  }
  let next = 0
  const worker = async () => {
    while (next < lanes.free.length) await sendAt(lanes.free[next++] ?? -1)
  }
  await Promise.all([
    inOrder(lanes.a),
    inOrder(lanes.b),
    ...Array.from({ length: Math.max(1, concurrency - 2) }, worker)
  ])
  return results
}

export interface BatchOutcome {
  readonly results: ReadonlyArray<FuzzResult>
  /** Every violation, each prefixed with the index of its case. */
  readonly problems: ReadonlyArray<string>
}

/**
 * Sends `cases` to one server and checks every answer, then both users' stored data against the model the 2xx
 * answers built from `models` (mutated to the new state), then that health still answers 200.
 */
export const runFuzzBatch = async (
  baseUrl: string,
  agent: Agent,
  fixture: FuzzFixture,
  models: FuzzModels,
  cases: ReadonlyArray<FuzzCase>,
  concurrency: number
): Promise<BatchOutcome> => {
  const results = await sendBatch(baseUrl, agent, cases, concurrency)
  const problems: Array<string> = []
  results.forEach((result, index) => {
    const fuzz = cases[index]
    if (fuzz === undefined) return
    for (const problem of checkResult(fixture, fuzz, result)) problems.push(`#${index}: ${problem}`)
    if ((fuzz.actor === "a" || fuzz.actor === "b") && result.kind === "http") {
      for (const problem of applyToModel(fixture, models[fuzz.actor], fuzz, result.response))
        problems.push(`#${index}: ${problem}`)
    }
  })
  problems.push(...(await checkModels(baseUrl, agent, fixture, models)))
  try {
    const health = await send(baseUrl, { method: "GET", path: paths.health }, agent)
    if (health.status !== 200) problems.push(`health after the batch: ${health.status}`)
  } catch (error) {
    problems.push(`health after the batch: ${error instanceof Error ? error.message : String(error)}`)
  }
  return { results, problems }
}

/** A result reduced to what every adapter must answer alike (parity.ts's `comparable`; wire answers as they are). */
const comparableResult = (fuzz: FuzzCase, index: number, result: FuzzResult): ComparableResponse | string => {
  if (result.kind === "http") return comparable({ name: `#${index}`, request: toRawRequest(fuzz) }, result.response)
  // Date and the (always new) request id are the only values that may differ.
  if (result.kind === "wire")
    return `#${index} wire ${result.closed ? "closed" : "open"}: ${result.wire.replace(/^(Date|x-request-id): .*\r\n/gim, "")}`
  return `#${index} no response`
}

/** A short description of a case for failure messages. */
const describeCase = (fuzz: FuzzCase): string => {
  const body =
    fuzz.body === undefined
      ? "no body"
      : typeof fuzz.body === "string"
        ? JSON.stringify(fuzz.body.slice(0, 200))
        : `bytes ${Buffer.from(fuzz.body.slice(0, 100)).toString("hex")}`
  return `${fuzz.method.slice(0, 40)} ${fuzz.path.slice(0, 120)} actor=${fuzz.actor} authorization=${JSON.stringify(fuzz.authorization?.slice(0, 80))} content-type=${JSON.stringify(fuzz.contentType)} verdict=${fuzz.verdict} request-id=${JSON.stringify(fuzz.requestId?.slice(0, 40))} body(${bodyLength(fuzz.body)} bytes)=${body}`
}

export const keepAliveAgent = (sockets: number): Agent => new Agent({ keepAlive: true, maxSockets: sockets })

// ---------------------------------------------------------------------------------------------------------------
// The suite

/** The default seed: fixed, so CI is reproducible; FUZZ_SEED overrides it. */
const DEFAULT_FUZZ_SEED = 20_261_121

/** Runs of `DEFAULT_FUZZ_BATCH` requests each: 5000 requests per server; FUZZ_RUNS overrides it. */
const DEFAULT_FUZZ_RUNS = 200

const DEFAULT_FUZZ_BATCH = 25

export interface HttpFuzzOptions {
  /** Default: FUZZ_SEED, else DEFAULT_FUZZ_SEED. */
  readonly seed?: number
  /** fast-check runs, each a batch of `batchSize` requests. Default: FUZZ_RUNS, else DEFAULT_FUZZ_RUNS. */
  readonly numRuns?: number
  readonly batchSize?: number
  /** Requests in flight per server (each user's lane counts one). Default 8. */
  readonly concurrency?: number
}

const fromEnv = (name: string): number | undefined => {
  const value = process.env[name]
  if (value === undefined || value.trim() === "") return undefined
  const number = Number(value)
  if (!Number.isSafeInteger(number)) throw new Error(`${name} must be an integer, got ${JSON.stringify(value)}`)
  return number
}

interface FuzzSettings {
  readonly seed: number
  readonly numRuns: number
  readonly batchSize: number
  readonly concurrency: number
}

const fuzzSettings = (options: HttpFuzzOptions = {}): FuzzSettings => ({
  seed: options.seed ?? fromEnv("FUZZ_SEED") ?? DEFAULT_FUZZ_SEED,
  numRuns: options.numRuns ?? fromEnv("FUZZ_RUNS") ?? DEFAULT_FUZZ_RUNS,
  batchSize: options.batchSize ?? DEFAULT_FUZZ_BATCH,
  concurrency: options.concurrency ?? 8
})

interface Running {
  readonly name: string
  readonly server: RunningServer
  readonly agent: Agent
  models: FuzzModels | undefined
  sent: number
}

/**
 * The fuzz as a vitest suite: every server in `servers` (name and a `StartServer`, e.g. `startWith(startKoaServer)`)
 * gets the same generated batches on a fresh store of its own; each answer must conform (`checkResult`), each
 * server's stored data may change only through 2xx answers, health must stay 200, and with two or more servers
 * every answer must equal the first server's (status, contract headers, request-id behaviour, body). Prints the
 * seed; replay a failure with FUZZ_SEED (and the path fast-check prints).
 */
export const runHttpFuzz = (
  suite: string,
  servers: ReadonlyArray<readonly [name: string, start: StartServer]>,
  options: HttpFuzzOptions = {}
): void => {
  const settings = fuzzSettings(options)
  const fixture = makeFuzzFixture(`fuzz-${settings.seed}`)

  describe(`HTTP fuzz: ${suite}`, () => {
    const running: Array<Running> = []
    beforeAll(async () => {
      for (const [name, start] of servers) {
        const server = await start(fixture.seed)
        running.push({ name, server, agent: keepAliveAgent(settings.concurrency), models: undefined, sent: 0 })
      }
    })
    afterAll(async () => {
      for (const { server, agent } of running) {
        agent.destroy()
        await server.close()
      }
    })

    const requests = settings.numRuns * settings.batchSize
    it(
      `${requests} generated requests per server conform, change stored data only by 2xx, and answer alike (seed ${settings.seed})`,
      async () => {
        // The seed is what replays a failure.
        console.info(
          `[fuzz] ${suite}: seed ${settings.seed}, ${settings.numRuns} runs of ${settings.batchSize} requests per server (FUZZ_SEED, FUZZ_RUNS)`
        )
        const started = performance.now()
        const property = fc.asyncProperty(
          fc.array(fuzzCase(fixture), { minLength: settings.batchSize, maxLength: settings.batchSize }),
          async (cases) => {
            const outcomes = await Promise.all(
              running.map(async (target) => {
                // After a failed run the model may be behind: read it again.
                target.models ??= await snapshotModels(target.server.url, target.agent, fixture)
                const models = target.models
                target.models = undefined
                const outcome = await runFuzzBatch(
                  target.server.url,
                  target.agent,
                  fixture,
                  models,
                  cases,
                  settings.concurrency
                )
                target.sent += cases.length
                if (outcome.problems.length === 0) target.models = models
                return outcome
              })
            )
            const problems: Array<string> = []
            outcomes.forEach((outcome, index) =>
              problems.push(...outcome.problems.map((problem) => `${running[index]?.name}: ${problem}`))
            )
            const reference = outcomes[0]
            outcomes.slice(1).forEach((outcome, index) => {
              cases.forEach((fuzz, at) => {
                const expected = reference?.results[at]
                const actual = outcome.results[at]
                if (expected === undefined || actual === undefined) return
                const a = comparableResult(fuzz, at, expected)
                const b = comparableResult(fuzz, at, actual)
                if (JSON.stringify(a) !== JSON.stringify(b)) {
                  problems.push(
                    `parity ${running[0]?.name} / ${running[index + 1]?.name}: ${JSON.stringify(a)} versus ${JSON.stringify(b)}`
                  )
                }
              })
            })
            if (problems.length > 0) {
              const cited = new Set(
                problems.flatMap((problem) => [...problem.matchAll(/#(\d+)/g)].map((match) => Number(match[1])))
              )
              const described = [...cited]
                .sort((x, y) => x - y)
                .map((index) => `  #${index}: ${describeCase(cases[index] as FuzzCase)}`)
              throw new Error(`${problems.slice(0, 20).join("\n")}\ncases:\n${described.join("\n")}`)
            }
          }
        )
        await fc.assert(property, { seed: settings.seed, numRuns: settings.numRuns })
        console.info(
          `[fuzz] ${suite}: ${running.map((target) => `${target.name} ${target.sent}`).join(", ")} requests in ${Math.round(performance.now() - started)} ms`
        )
        for (const target of running)
          expect(target.sent, `${target.name}: requests sent`).toBeGreaterThanOrEqual(requests)
      },
      Math.max(120_000, settings.numRuns * 2_000)
    )
  })
}

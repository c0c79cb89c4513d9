import type { RunningServer } from "@accord/node/server"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { Agent } from "node:http"
import type { StartServer } from "../http-conformance.js"
import { comparable, type ComparableResponse } from "../parity.js"
import { exchange, operationPath, parseWire, paths, send, type RawRequest } from "@accord/conformance"
import { makeFuzzFixture, type FuzzFixture, type FuzzUser } from "./fixture.js"
import { bodyLength, isWireMethod, type FuzzCase } from "./fuzz-case.js"
import { fuzzCase } from "./generators.js"
import { applyToModel, checkRead, modelFrom, recordRead, type FuzzModels, type UserModel } from "./models.js"
import { checkResult, judgeCase, type FuzzResult, type Judged } from "./oracle.js"
import { PREFIX, USER_READS } from "./targets.js"

/**
 * The fuzz's runner: sends generated batches to several servers (each user's requests in order on a lane of its
 * own), checks every answer with the oracle and each server's stored data against the model, compares the servers'
 * answers, and as `runHttpFuzz` does all that as a vitest suite under fast-check.
 */

// ---------------------------------------------------------------------------------------------------------------
// Sending

const headersOf = (fuzz: FuzzCase): Record<string, string> => {
  const headers: Record<string, string> = {}
  if (fuzz.authorization !== undefined) headers["Authorization"] = fuzz.authorization
  if (fuzz.contentType !== undefined) headers["Content-Type"] = fuzz.contentType
  if (fuzz.requestId !== undefined) headers["X-Request-Id"] = fuzz.requestId
  return headers
}

const bodyBytes = (body: FuzzCase["body"]): Buffer =>
  body === undefined ? Buffer.alloc(0) : typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body)

/** The body in two chunks (a chunked body is read as it arrives, whatever its cuts). */
const chunksOf = (body: FuzzCase["body"]): ReadonlyArray<Uint8Array> => {
  const all = bodyBytes(body)
  const half = Math.ceil(all.length / 2)
  return [all.subarray(0, half), all.subarray(half)]
}

const toRawRequest = (fuzz: FuzzCase): RawRequest => {
  const request = { method: fuzz.method, path: fuzz.path, headers: headersOf(fuzz) }
  if (fuzz.transferEncoding !== undefined) return { ...request, chunks: chunksOf(fuzz.body) }
  return fuzz.body === undefined ? request : { ...request, body: fuzz.body }
}

/**
 * The request as bytes, for a raw socket: with its Transfer-Encoding and the body chunked, or with a Content-Length,
 * and `Connection: close` so that the server ends the exchange.
 */
const wireBytes = (fuzz: FuzzCase): Buffer => {
  const lines = [`${fuzz.method} ${fuzz.path} HTTP/1.1`, "Host: fuzz", "Connection: close"]
  for (const [name, value] of Object.entries(headersOf(fuzz))) lines.push(`${name}: ${value}`)
  const body = bodyBytes(fuzz.body)
  let framed: Buffer = body
  if (fuzz.transferEncoding !== undefined) {
    lines.push(`Transfer-Encoding: ${fuzz.transferEncoding}`)
    const chunks = chunksOf(fuzz.body).filter((chunk) => chunk.length > 0)
    framed = Buffer.concat([
      ...chunks.flatMap((chunk) => [Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]),
      Buffer.from("0\r\n\r\n")
    ])
  } else if (fuzz.body !== undefined) lines.push(`Content-Length: ${body.length}`)
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), framed])
}

/** A Transfer-Encoding `send` cannot write as given: anything but `chunked` itself goes on a raw socket. */
const onRawSocket = (fuzz: FuzzCase): boolean =>
  fuzz.transferEncoding !== undefined && fuzz.transferEncoding !== "chunked"

const sendFuzzCase = async (baseUrl: string, agent: Agent, fuzz: FuzzCase): Promise<FuzzResult> => {
  try {
    if (isWireMethod(fuzz.method)) {
      // The server closes the connection after its answer; the quiet time only bounds a server that never answers.
      const { wire, closed } = await exchange(baseUrl, wireBytes(fuzz))
      return { kind: "wire", wire, closed }
    }
    if (onRawSocket(fuzz)) {
      const { wire } = await exchange(baseUrl, wireBytes(fuzz), undefined, { endAtResponse: true })
      const response = parseWire(wire)
      return response === undefined
        ? { kind: "error", message: `not an HTTP response: ${JSON.stringify(wire.slice(0, 200))}` }
        : { kind: "http", response }
    }
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

/** What each of the user's reads answers now, by the record it reads. */
const readUser = async (baseUrl: string, agent: Agent, user: FuzzUser): Promise<Record<string, unknown>> => {
  const reads: Record<string, unknown> = {}
  for (const read of USER_READS)
    reads[recordRead(read) ?? read.operationId] = await getJson(
      baseUrl,
      agent,
      operationPath(PREFIX, read.operationId),
      user.token
    )
  return reads
}

/** One user's model, read through the API; a list that holds records not the user's is a violation already. */
const snapshotUser = async (baseUrl: string, agent: Agent, fixture: FuzzFixture, user: FuzzUser) => {
  const { model, problems } = modelFrom(fixture, user, await readUser(baseUrl, agent, user))
  if (problems.length > 0) throw new Error(`what ${user.id} reads is not theirs:\n${problems.join("\n")}`)
  return model
}

/** Reads both users' data through the API (every user read of the contract): the model a batch starts from. */
export const snapshotModels = async (baseUrl: string, agent: Agent, fixture: FuzzFixture): Promise<FuzzModels> => ({
  a: await snapshotUser(baseUrl, agent, fixture, fixture.a),
  b: await snapshotUser(baseUrl, agent, fixture, fixture.b)
})

/** The final check of a batch: every read of both users answers what the model says. */
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
    const model: UserModel = models[name]
    for (const [record, body] of Object.entries(await readUser(baseUrl, agent, user)))
      problems.push(...checkRead(model, record, body, `user ${name}`))
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
    // Judged in each lane's order, with the caller's model as it stood when the request was sent.
    const model = fuzz.actor === "a" || fuzz.actor === "b" ? models[fuzz.actor] : undefined
    const judged: Judged = judgeCase(fixture, fuzz, model)
    for (const problem of checkResult(judged, result)) problems.push(`#${index}: ${problem}`)
    if (model !== undefined && result.kind === "http")
      for (const problem of applyToModel(judged, model, result.response)) problems.push(`#${index}: ${problem}`)
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
  return `${fuzz.method.slice(0, 40)} ${fuzz.path.slice(0, 120)} actor=${fuzz.actor} authorization=${JSON.stringify(fuzz.authorization?.slice(0, 80))} content-type=${JSON.stringify(fuzz.contentType)} transfer-encoding=${JSON.stringify(fuzz.transferEncoding)} syntax=${fuzz.syntax} request-id=${JSON.stringify(fuzz.requestId?.slice(0, 40))} body(${bodyLength(fuzz.body)} bytes)=${body}`
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

/** The options given, else FUZZ_SEED and FUZZ_RUNS (when `environment` says so), else the defaults. */
const fuzzSettings = (options: HttpFuzzOptions, environment: boolean): FuzzSettings => ({
  seed: options.seed ?? (environment ? fromEnv("FUZZ_SEED") : undefined) ?? DEFAULT_FUZZ_SEED,
  numRuns: options.numRuns ?? (environment ? fromEnv("FUZZ_RUNS") : undefined) ?? DEFAULT_FUZZ_RUNS,
  batchSize: options.batchSize ?? DEFAULT_FUZZ_BATCH,
  concurrency: options.concurrency ?? 8
})

/** The fixture of a run: its ids and tokens derived from the seed. */
const fixtureOf = (settings: FuzzSettings): FuzzFixture => makeFuzzFixture(`fuzz-${settings.seed}`)

/** One run's requests: a batch of `batchSize` cases. */
const batchArb = (fixture: FuzzFixture, settings: FuzzSettings): fc.Arbitrary<ReadonlyArray<FuzzCase>> =>
  fc.array(fuzzCase(fixture), { minLength: settings.batchSize, maxLength: settings.batchSize })

/**
 * The requests `runHttpFuzz` sends with the same options (by default its fixed seed, 200 runs of 25; FUZZ_SEED and
 * FUZZ_RUNS are not read), generated without a server, each judged by the oracle: what the coverage test counts.
 */
export const sampleFuzzCases = (options: HttpFuzzOptions = {}): ReadonlyArray<Judged> => {
  const settings = fuzzSettings(options, false)
  const fixture = fixtureOf(settings)
  return fc
    .sample(batchArb(fixture, settings), { seed: settings.seed, numRuns: settings.numRuns })
    .flatMap((cases) => cases.map((fuzz) => judgeCase(fixture, fuzz)))
}

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
  const settings = fuzzSettings(options, true)
  const fixture = fixtureOf(settings)

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
        const property = fc.asyncProperty(batchArb(fixture, settings), async (cases) => {
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
        })
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

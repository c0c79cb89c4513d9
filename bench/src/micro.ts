import {
  type AccordServices,
  Authenticator,
  createPublicPlanEntry,
  Email,
  PaymentMethodId,
  setDefaultPaymentMethod,
  updateLanguagePreferences,
  type UserId
} from "@accord/domain"
import { decodePreferencesPatch, PreferencesPatchBody } from "@accord/contract"
import { type AccordRuntime, type HttpRequest, makeHttpHandler, readJson } from "@accord/core"
import { productionScryptCost, ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { Cause, Effect, Exit, Layer, ManagedRuntime, Redacted, Schema } from "effect"
import { Bench } from "tinybench"
import {
  benchHeaders,
  decodeSeed,
  LANGUAGE_PATH,
  PAYMENT_METHOD_PATH,
  paymentMethodIds,
  seedInput,
  userId,
  userToken
} from "./fixtures.js"
import type { ChildMessage, MicroResult } from "./protocol.js"

/**
 * In-process micro benchmarks (a child of the bench, so nothing else shares its heap or event loop): the three use
 * cases through the core on store-memory, and the transport-neutral handler called directly, without a socket.
 */

const timeMs = Number(process.env["BENCH_MICRO_TIME"] ?? 1000)
const users = Number(process.env["BENCH_USERS"] ?? 1000)

const runtimeWith = (cost: { N: number; r: number; p: number }): AccordRuntime =>
  ManagedRuntime.make(Layer.merge(makeMemoryStore(decodeSeed(seedInput(users))), ScryptPasswordHasherLive(cost)))

const main = async (): Promise<void> => {
  const runtime = runtimeWith(testScryptCost)
  const productionRuntime = runtimeWith(productionScryptCost)
  const user = userId(0) as UserId
  const [first, second] = paymentMethodIds(0)
  const patches = [
    { language: "en-US", timezone: 60, mfa_enabled: true },
    { language: "fr", timezone: -120, mfa_enabled: false }
  ]
  // The use cases take checked values: decoded once here, as the handler decodes each request's body.
  const typedPatches = patches.map((patch) => Effect.runSync(decodePreferencesPatch(patch)))
  const methodIds = [PaymentMethodId.make(first), PaymentMethodId.make(second)]
  const newEntry = (email: string) => ({ email: Email.make(email), password: Redacted.make("correct horse battery") })
  let turn = 0
  let emails = 0

  const handler = makeHttpHandler({ runtime })
  /** As the Node adapters hand over a request whose small body came with the headers (`arrived`), or is still due. */
  const request = (path: string, body: string, arrived = true): HttpRequest => {
    const bytes = new TextEncoder().encode(body)
    const read = { _tag: "Read" as const, bytes }
    const later = Promise.resolve(read)
    const headers = { ...benchHeaders, "content-length": String(bytes.length) }
    return arrived
      ? { method: "PUT", path, headers, readBody: () => later, readBodyNow: () => read }
      : { method: "PUT", path, headers, readBody: () => later }
  }
  const languageRequests = [
    request(LANGUAGE_PATH, JSON.stringify(patches[0])),
    request(LANGUAGE_PATH, JSON.stringify(patches[1]))
  ]
  const laterRequests = [
    request(LANGUAGE_PATH, JSON.stringify(patches[0]), false),
    request(LANGUAGE_PATH, JSON.stringify(patches[1]), false)
  ]
  const paymentRequests = [
    request(PAYMENT_METHOD_PATH(first), '{"is_default":true}'),
    request(PAYMENT_METHOD_PATH(second), "{}")
  ]
  const unauthenticated: HttpRequest = {
    method: "PUT",
    path: LANGUAGE_PATH,
    headers: { "content-type": "application/json" }
  }

  /** Runs a use case the way the handler does (a fiber started and finished at once) and insists that it succeeded. */
  const runSync = <A, E>(program: Effect.Effect<A, E, AccordServices>): A => {
    const exit = runtime.runFork(program).pollUnsafe()
    if (exit === undefined) throw new Error("the benchmarked program waited for something")
    if (Exit.isFailure(exit)) throw new Error(`the benchmarked program failed: ${Cause.pretty(exit.cause)}`)
    return exit.value
  }
  // As `decoderFor` runs it: every field checked, unknown fields refused.
  const decodePatch = Schema.decodeUnknownExit(PreferencesPatchBody, { errors: "all", onExcessProperty: "error" })
  const token = userToken(0)
  const bodyBytes = new TextEncoder().encode(JSON.stringify(patches[0]))

  const bench = new Bench({ time: timeMs, warmupTime: Math.min(500, timeMs), warmupIterations: 5, throws: true })
  bench
    .add("use case: updateLanguagePreferences", () =>
      runSync(updateLanguagePreferences(user, typedPatches[turn++ & 1] ?? {}))
    )
    .add("use case: setDefaultPaymentMethod", () =>
      runSync(setDefaultPaymentMethod(user, methodIds[turn++ & 1] ?? PaymentMethodId.make(first)))
    )
    .add(`use case: createPublicPlanEntry (test scrypt N=2^${Math.log2(testScryptCost.N)})`, () =>
      runtime.runPromise(createPublicPlanEntry(newEntry(`user${emails++}@example.com`)))
    )
    .add(`use case: createPublicPlanEntry (production scrypt N=2^15, r=8, p=3)`, () =>
      productionRuntime.runPromise(createPublicPlanEntry(newEntry(`user${emails++}@example.com`)))
    )
    .add("handler: PUT language", () => handler(languageRequests[turn++ & 1] ?? unauthenticated))
    .add("handler: PUT language, body awaited", () => handler(laterRequests[turn++ & 1] ?? unauthenticated))
    .add("handler: PUT payment method", () => handler(paymentRequests[turn++ & 1] ?? unauthenticated))
    .add("handler: 401 without credentials", () => handler(unauthenticated))
    // What the handler's time is made of (see remaining-costs.md).
    .add("part: one fiber (runtime.runFork of a trivial program)", () =>
      runSync(Effect.map(Effect.succeed(turn++), (n) => n + 1))
    )
    .add("part: authenticate a token (store-memory, one fiber)", () =>
      runSync(Effect.flatMap(Authenticator, (authenticator) => authenticator.authenticate(token)))
    )
    .add("part: decode the PUT language body (Schema)", () => decodePatch(patches[turn++ & 1]))
    .add("part: strict JSON read of the body (readJson)", () => readJson(bodyBytes))
  await bench.warmup()
  await bench.run()

  const results: Array<MicroResult> = bench.tasks.map((task) => {
    if (task.result === undefined) throw new Error(`${task.name}: no result`)
    return {
      name: task.name,
      opsPerSecond: task.result.hz,
      meanMicros: task.result.mean * 1000,
      p99Micros: task.result.p99 * 1000,
      samples: task.result.samples.length
    }
  })
  await runtime.dispose()
  await productionRuntime.dispose()
  const message: ChildMessage = { type: "micro", results }
  process.send?.(message, () => process.exit(0))
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})

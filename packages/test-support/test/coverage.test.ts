import { operationAt } from "@accord/conformance"
import { apiRoutes, operations, type OperationId } from "@accord/contract"
import { makeParityFixture, parityCorpus, sampleFuzzCases, type Judged, type ParityCase } from "@accord/test-support"
import { describe, expect, it } from "@effect/vitest"

// issue 28: a test fails when an operation of the contract has no parity case or no fuzz coverage. A parity case
// covers the operation its method and path name (`operationAt`, from the contract's routes), whatever it answers; a
// fuzz case the operation the oracle finds for it (`judgeCase`).

const OPERATION_IDS: ReadonlyArray<OperationId> = Object.values(operations).map((operation) => operation.operationId)

/** The operations no case of `corpus` sends a request to. */
const uncovered = (corpus: ReadonlyArray<ParityCase>): ReadonlyArray<OperationId> => {
  const covered = new Set(corpus.map(({ request }) => operationAt("/api", request.method, request.path)))
  return OPERATION_IDS.filter((id) => !covered.has(id))
}

describe("coverage of the contract's operations by the project's own suites", () => {
  it("every operation has a parity case (parityCorpus)", () => {
    const corpus = parityCorpus(makeParityFixture())
    expect(uncovered(corpus)).toEqual([])
    // The check can fail: without the cases of the list, it names the list.
    const withoutList = corpus.filter(({ name }) => !name.includes("list"))
    expect(uncovered(withoutList)).toEqual(["listPaymentMethods"])
  })

  it("every operation is fuzzed: enough requests, some that its use case answers, and every route hit", () => {
    const cases = sampleFuzzCases()
    expect(cases.length).toBe(FUZZ_REQUESTS)
    expect(fuzzGaps(cases)).toEqual([])
    // The check can fail: without the requests to the liveness probe's path, it names the operation and its route.
    const withoutLiveness = cases.filter(
      ({ target }) => target.kind !== "route" || target.route.path !== operations.liveness.path
    )
    expect(fuzzGaps(withoutLiveness)).toEqual([
      "liveness: 0 requests, fewer than 20",
      "liveness: no request passes every check",
      "/health/live: no request hits the route"
    ])
    // Nor can a body operation do with requests its checks refuse, nor with bodiless ones.
    const refusedOnly = cases.filter(
      ({ operation, reachesUseCase, fuzz }) =>
        operation?.operationId !== "setDefaultPaymentMethod" || !reachesUseCase || fuzz.body === undefined
    )
    expect(fuzzGaps(refusedOnly)).toEqual(["setDefaultPaymentMethod: no request with a body passes every check"])
  })
})

/** The requests the fuzz sends to each server (200 runs of 25, its fixed seed). */
const FUZZ_REQUESTS = 5000

/** The fewest requests an operation may get out of 5000, whatever they are answered. */
const MIN_REQUESTS = 20

/** A body that the request sends: what a use case with a body must be run with, besides none at all. */
const sendsBody = ({ fuzz }: Judged): boolean => fuzz.body !== undefined && fuzz.body.length > 0

/**
 * What the fuzz's cases miss: an operation with fewer than MIN_REQUESTS requests, or none that passes every check (so
 * that its use case runs; with a body, when it reads one), and a route of the contract no request's path names.
 */
const fuzzGaps = (cases: ReadonlyArray<Judged>): ReadonlyArray<string> => {
  const gaps: Array<string> = []
  for (const operation of Object.values(operations)) {
    const aimed = cases.filter((judged) => judged.operation === operation)
    if (aimed.length < MIN_REQUESTS)
      gaps.push(`${operation.operationId}: ${aimed.length} requests, fewer than ${MIN_REQUESTS}`)
    const ran = aimed.filter(({ reachesUseCase }) => reachesUseCase)
    if (ran.length === 0) gaps.push(`${operation.operationId}: no request passes every check`)
    else if (operation.body !== undefined && !ran.some(sendsBody))
      gaps.push(`${operation.operationId}: no request with a body passes every check`)
  }
  for (const route of apiRoutes)
    if (!cases.some(({ target }) => target.kind === "route" && target.route.path === route.path))
      gaps.push(`${route.path}: no request hits the route`)
  return gaps
}

import fc from "fast-check"
import { METHODS } from "node:http"
import { anyBodyArb, operationBodyArb, type BodyChoice } from "./bodies.js"
import type { FuzzFixture } from "./fixture.js"
import { isWireMethod, type Actor, type FuzzCase } from "./fuzz-case.js"
import { contentTypeArb, credentialArb, requestIdArb, transferEncodingArb, type CredentialChoice } from "./headers.js"
import { anyPathArb, documentPathArb, routePathArb } from "./paths.js"
import { ROUTES, type FuzzRoute } from "./targets.js"

/**
 * The fuzz's generators: `fuzzCase(fixture)` makes hostile requests (methods, paths, credentials, media types,
 * transfer codings, bodies, request ids), each part from a module of its own (bodies.ts, headers.ts, paths.ts). Their
 * targets are the contract's routes (targets.ts). A case says what its body's JSON text is (`syntax`), never what the
 * contract answers: that is the oracle's (oracle.ts), and sending them the runner's.
 */

/** CONNECT is a tunnel request Node answers by closing the connection (no listener): not an API request. */
const PARSER_METHODS: ReadonlyArray<string> = METHODS.filter((method) => method !== "CONNECT")

const COMMON_METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"] as const

const methodArb = (primary: ReadonlyArray<string>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...primary) },
    { weight: 2, arbitrary: fc.constantFrom(...COMMON_METHODS) },
    { weight: 1, arbitrary: fc.constantFrom(...PARSER_METHODS) }
  )

const wireMethodArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("get", "put", "post", "Get", "options", "head", "PUT-X", "GETS"),
  fc.stringMatching(/^[A-Z]{2,12}$/).filter(isWireMethod),
  fc.integer({ min: 50, max: 300 }).map((length) => "X".repeat(length))
)

const caseArb = (parts: {
  readonly method: fc.Arbitrary<string>
  readonly credential: fc.Arbitrary<CredentialChoice>
  /** The path, for the caller the credential names. */
  readonly path: (actor: Actor) => fc.Arbitrary<string>
  readonly body: fc.Arbitrary<BodyChoice>
}): fc.Arbitrary<FuzzCase> =>
  fc
    .record({
      method: parts.method,
      credential: parts.credential,
      contentType: contentTypeArb,
      transferEncoding: transferEncodingArb,
      body: parts.body,
      requestId: requestIdArb
    })
    .chain((chosen) => parts.path(chosen.credential.actor).map((path) => ({ ...chosen, path })))
    .map(({ method, path, credential, contentType, transferEncoding, body, requestId }): FuzzCase => ({
      method,
      path,
      actor: credential.actor,
      authorization: credential.authorization,
      contentType: contentType.contentType,
      json: contentType.json,
      body: body.body,
      transferEncoding,
      syntax: body.syntax,
      requestId,
      secrets: body.secrets
    }))

const USER_WEIGHTS = { a: 6, b: 2, client: 1, none: 1, malformed: 1, unknown: 1, random: 1 } as const

/**
 * The requests aimed at one route: its methods mostly, credentials for its access (an application's often where one
 * is accepted, anyone's on a public route), path parameters for the caller, and its operation's bodies.
 */
const routeCaseArb = (fixture: FuzzFixture, route: FuzzRoute): fc.Arbitrary<FuzzCase> => {
  const methods = route.operations.flatMap((operation) => [
    operation.method,
    ...(operation.body === undefined ? [] : [operation.method]),
    ...(operation.method === "GET" ? ["HEAD"] : [])
  ])
  const accesses = route.operations.map((operation) => operation.access)
  const weights = accesses.every((access) => access === "public")
    ? {}
    : accesses.includes("anyCredential")
      ? { ...USER_WEIGHTS, client: 4 }
      : USER_WEIGHTS
  const reader = route.operations.find((operation) => operation.body !== undefined)
  return caseArb({
    method: methodArb(methods),
    credential: credentialArb(fixture, weights),
    path: (actor) => routePathArb(fixture, route, actor === "a" ? fixture.a : actor === "b" ? fixture.b : undefined),
    body: reader === undefined ? anyBodyArb : operationBodyArb(reader)
  })
}

/** How often a route is aimed at: more for what checks more (a credential, a body, path parameters). */
const routeWeight = (route: FuzzRoute): number =>
  route.operations.some((operation) => operation.access !== "public")
    ? 2 +
      (route.operations.some((operation) => operation.body !== undefined) ? 1 : 0) +
      (route.path.includes("{") ? 1 : 0)
    : 1

/**
 * One hostile request. Mostly aimed at one route of the contract at a time (so that requests its operations accept
 * happen too), some at the documents, some with everything random, some that Node's parser refuses.
 */
export const fuzzCase = (fixture: FuzzFixture): fc.Arbitrary<FuzzCase> => {
  const anyPath = anyPathArb(fixture)
  const anyone = credentialArb(fixture, {})
  return fc.oneof(
    ...ROUTES.map((route) => ({ weight: routeWeight(route), arbitrary: routeCaseArb(fixture, route) })),
    {
      weight: 1,
      arbitrary: caseArb({
        method: methodArb(["GET", "HEAD", "OPTIONS"]),
        credential: anyone,
        path: () => documentPathArb,
        body: anyBodyArb
      })
    },
    {
      weight: 3,
      arbitrary: caseArb({
        method: fc.constantFrom(...PARSER_METHODS),
        credential: anyone,
        path: () => anyPath,
        body: anyBodyArb
      })
    },
    {
      weight: 1,
      arbitrary: caseArb({ method: wireMethodArb, credential: anyone, path: () => anyPath, body: anyBodyArb })
    }
  )
}

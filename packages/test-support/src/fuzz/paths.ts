import fc from "fast-check"
import { operationPath, withoutSlash } from "@accord/conformance"
import type { FuzzFixture, FuzzUser } from "./fixture.js"
import {
  DOCS_FILES,
  DOCUMENTS,
  docsOf,
  idsOwnedBy,
  MAX_PATH_LENGTH,
  PREFIX,
  ROUTES,
  type ContractOperation,
  type FuzzRoute
} from "./targets.js"

// The paths the fuzz sends: each route's with its parameters filled from the fixture, the documents', near misses of
// both, and paths over the limit. Which route a path names is the oracle's to find (targets.ts, `targetOf`).

const querySuffixArb = fc.oneof(
  fc.constantFrom("?", "?a=1&b", "#frag", "?x=%zz", `?${"q".repeat(3000)}`),
  fc.stringMatching(/^\?[A-Za-z0-9=&%._~-]{0,40}$/)
)

/** The path as given, or without its trailing slash (a route that is not exact), maybe with a query or a fragment. */
const decorated = (path: string, slashOptional: boolean): fc.Arbitrary<string> => {
  const forms = slashOptional && path.endsWith("/") ? [path, withoutSlash(path)] : [path]
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...forms) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...forms), querySuffixArb).map(([form, query]) => form + query) }
  )
}

const percentEncoded = (id: string): string =>
  [...Buffer.from(id, "utf8")].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("")

/** Segments no id is made of: other characters, escapes (malformed ones too), dot segments, over any length. */
const ODD_SEGMENTS = [
  "pm.1",
  "%zz",
  "pm%201",
  "%C3%A9",
  "%00",
  "a".repeat(101),
  "..",
  ".",
  "%2F",
  "~x",
  "%2e%2e",
  "a%2Fb"
] as const

/** The operation that names the route's path (any: they share it). */
const firstOf = (route: FuzzRoute): ContractOperation => {
  const [first] = route.operations
  if (first === undefined) throw new Error(`the route ${route.path} has no operation`)
  return first
}

/** The route's path under the prefix with each parameter given its value, sent as is. */
const filled = (route: FuzzRoute, values: Readonly<Record<string, string>>): string =>
  operationPath(PREFIX, firstOf(route).operationId, values)

/** The names of the route's path parameters: the fields of its parameters' Schema, one per `{name}`. */
const parameterNames = (route: FuzzRoute): ReadonlyArray<string> =>
  Object.keys(route.operations.find((operation) => operation.params !== undefined)?.params?.fields ?? {})

/** The example of a path parameter in the docs of the route's operations. */
const parameterExample = (route: FuzzRoute, name: string): string | undefined =>
  route.operations.map((operation) => docsOf(operation).params?.[name]?.example).find((value) => value !== undefined)

/**
 * A value for a path parameter, made from the fixture: mostly an id of the caller's own records, also another user's,
 * the docs' example, one percent-encoded, an unknown one, and segments no id is made of. Which of them the parameter's
 * Schema accepts, and what the use case answers, is the oracle's to say.
 */
const parameterValueArb = (fixture: FuzzFixture, caller: FuzzUser | undefined, example: string | undefined) => {
  const users = [fixture.a, fixture.b]
  // A caller who is no user owns nothing: the first user's ids are then the ones most worth trying.
  const owner = caller ?? fixture.a
  const own = idsOwnedBy(fixture.seed, owner.id)
  const others = users.filter((user) => user !== owner).flatMap((user) => idsOwnedBy(fixture.seed, user.id))
  const known = users.flatMap((user) => idsOwnedBy(fixture.seed, user.id))
  const choices: Array<fc.WeightedArbitrary<string>> = [
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/).filter((id) => !known.includes(id)),
        fc.constantFrom("z".repeat(100))
      )
    },
    { weight: 1, arbitrary: fc.constantFrom(...ODD_SEGMENTS) }
  ]
  if (own.length > 0)
    choices.push(
      { weight: 6, arbitrary: fc.constantFrom(...own) },
      { weight: 1, arbitrary: fc.constantFrom(...own).map(percentEncoded) }
    )
  if (others.length > 0) choices.push({ weight: 2, arbitrary: fc.constantFrom(...others) })
  if (example !== undefined) choices.push({ weight: 1, arbitrary: fc.constant(example) })
  return fc.oneof(...choices)
}

/** A path of `route`, each parameter filled for `caller` (a user, or undefined for anyone else). */
export const routePathArb = (
  fixture: FuzzFixture,
  route: FuzzRoute,
  caller: FuzzUser | undefined
): fc.Arbitrary<string> => {
  const names = parameterNames(route)
  return fc
    .tuple(...names.map((name) => parameterValueArb(fixture, caller, parameterExample(route, name))))
    .chain((values) =>
      decorated(
        filled(route, Object.fromEntries(names.map((name, index) => [name, values[index] ?? ""]))),
        !route.exact
      )
    )
}

/** Each document's path: the reference page's files it has (`DOCS_FILES`), and one it has not. */
const DOCUMENT_PATHS: ReadonlyArray<string> = DOCUMENTS.flatMap(({ path }) =>
  path.includes("{asset}")
    ? [...Object.keys(DOCS_FILES), "nope.js"].map((file) => PREFIX + path.replace("{asset}", file))
    : [PREFIX + path]
)

export const documentPathArb: fc.Arbitrary<string> = fc
  .constantFrom(...DOCUMENT_PATHS)
  .chain((path) => decorated(path, false))

/**
 * Paths near a known one: another case, a slash more or less, an extra or a missing segment, a letter percent-encoded,
 * dot segments, another prefix or none. Most name no route (404); the oracle finds the ones that do.
 */
const nearMissesOf = (path: string): ReadonlyArray<string> => {
  const bare = withoutSlash(path)
  const relative = path.slice(PREFIX.length)
  const last = bare.lastIndexOf("/")
  return [
    `${bare}//`,
    `${bare}/x/`,
    `${path}/`,
    bare.toUpperCase(),
    bare.slice(0, last + 1) + bare.charAt(last + 1).toUpperCase() + bare.slice(last + 2),
    bare.slice(0, last + 1) + percentEncoded(bare.charAt(last + 1)) + bare.slice(last + 2),
    bare.slice(0, last + 1),
    `${bare}%2F`,
    `${PREFIX}x${relative}`,
    `${PREFIX}/${relative}`,
    `${PREFIX}/.${relative}`,
    `${PREFIX}/..${PREFIX}${relative}`,
    relative
  ]
}

/** Paths no route was written for, most of them near one that was. */
const NEAR_MISSES: ReadonlyArray<string> = [
  ...new Set([
    ...ROUTES.flatMap((route) =>
      nearMissesOf(filled(route, Object.fromEntries(parameterNames(route).map((name) => [name, "x"]))))
    ),
    ...DOCUMENT_PATHS.flatMap(nearMissesOf),
    "/",
    PREFIX,
    `${PREFIX}/`,
    `${PREFIX}/nope`,
    "/favicon.ico",
    "*"
  ])
]

const unknownPathArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...NEAR_MISSES),
  fc.webSegment().map((segment) => `/${segment}`),
  fc.webSegment().map((segment) => `${PREFIX}/${segment}`)
)

/** Paths over the limit: under the prefix, in a route, or elsewhere. */
const tooLongPathArb: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(`${PREFIX}/`, ...ROUTES.map((route) => PREFIX + (route.path.split("{")[0] ?? "")), "/elsewhere/"),
    fc.integer({ min: MAX_PATH_LENGTH + 1, max: MAX_PATH_LENGTH + 1000 })
  )
  .map(([start, length]) => start + "a".repeat(length - start.length))

/** Any path: a route's (for any caller), a document's, a near miss, one too long. */
export const anyPathArb = (fixture: FuzzFixture): fc.Arbitrary<string> =>
  fc.oneof(
    {
      weight: ROUTES.length,
      arbitrary: fc.constantFrom(...ROUTES).chain((route) => routePathArb(fixture, route, undefined))
    },
    { weight: 2, arbitrary: documentPathArb },
    { weight: 3, arbitrary: unknownPathArb },
    { weight: 1, arbitrary: tooLongPathArb }
  )

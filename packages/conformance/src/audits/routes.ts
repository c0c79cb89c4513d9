import {
  allowedMethods,
  allowHeader,
  apiRoutes,
  OPERATION_DOCS,
  type ErasedOperationDocs,
  type OperationId
} from "@accord/contract"
import { operationPath, withoutSlash } from "../paths.js"
import type { RawRequest } from "../raw-http.js"
import { AuditSkipped, equal } from "./assert.js"
import { audit, type Audit, type AuditTarget } from "./audit.js"
import {
  bearer,
  expectCommonHeaders,
  expectJsonSuccess,
  expectProblem,
  expectStatus,
  jsonHeaders,
  NOT_FOUND,
  notAllowed,
  postPlanEntry,
  text,
  UNAUTHENTICATED,
  unknownId
} from "./responses.js"

// docs/api.md, "Routes" and "Precise rules": 404, 405 with Allow, OPTIONS, HEAD, the trailing slash, the id's charset.

/** Near misses of the routes under the prefix: each a 404 problem. */
const unknownPathsInside = (t: AuditTarget): ReadonlyArray<string> => {
  const p = t.prefix
  return [
    ...(p === "" ? [] : [p]),
    `${p}/`,
    `${p}/nope`,
    `${p}/health/`,
    `${p}/health/live/`,
    `${p}/health/ready/`,
    `${p}/health/started`,
    `${p}/openapi.json/`,
    `${p}/users/v1/preferences/language/extra/`,
    `${p}/users/v1/preferences/`,
    `${p}/payments/v1/payment-methods/a/b/`,
    `${p}/plans/v1/subscription-plans/`,
    `${p}/plans/v1/subscription-plans/public/x/`,
    // The spec's alias (`/v1/payment-methods/{id}/`, docs/api.md "Versioning") is a route; one segment more is not.
    `${p}/v1/payment-methods/pm_1/x/`,
    `${p}/v1/payment-methods/`,
    `${p}/users/v2/preferences/language/`
  ]
}

/** Paths outside the prefix: the root, health without the prefix, a longer prefix, the prefix in upper case. */
const unknownPathsOutside = (t: AuditTarget): ReadonlyArray<string> => {
  const p = t.prefix
  const upper = p.toUpperCase()
  return ["/", "/health", `${p}x/health`, ...(upper === p ? [] : [`${upper}/health`])]
}

const expectNotFoundForAnyone = async (t: AuditTarget, path: string): Promise<void> => {
  expectProblem(`GET ${path}`, await t.send({ method: "GET", path }), NOT_FOUND)
  expectProblem(`GET ${path} as a user`, await t.send({ method: "GET", path, headers: bearer(t.userToken) }), NOT_FOUND)
  expectProblem(
    `DELETE ${path} with a bad token`,
    await t.send({ method: "DELETE", path, headers: { Authorization: "Bearer $" } }),
    NOT_FOUND
  )
}

/** The methods an audit tries on a path: every method an operation may have, and HEAD. */
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const

/** A path the API serves, as the route table says: the methods it serves (`allowedMethods`) and its `Allow`. */
interface ServedPath {
  readonly path: string
  readonly served: ReadonlyArray<string>
  readonly allow: string
  /** The same path with a parameter the route still matches (any one segment) but no Schema accepts; none without. */
  readonly outside: string | undefined
}

/**
 * Every path of the route table (`apiRoutes`), each parameter at its docs' example, in both slash forms unless exact,
 * and the two documents; each with the methods its operations have.
 */
const servedPaths = (t: AuditTarget): ReadonlyArray<ServedPath> => [
  ...apiRoutes.flatMap((route) => {
    const methods = route.operations.map((operation) => operation.method)
    const [first] = route.operations
    if (first === undefined) return []
    const names = [...route.path.matchAll(/\{([^}]+)\}/g)].map(([, name = ""]) => name)
    const docs = OPERATION_DOCS[first.operationId as OperationId] as ErasedOperationDocs
    const values = Object.fromEntries(names.map((name) => [name, docs.params?.[name]?.example ?? "x"]))
    const path = operationPath(t.prefix, first.operationId as OperationId, values)
    const forms = route.exact || !path.endsWith("/") ? [path] : [path, withoutSlash(path)]
    const outside =
      names.length === 0
        ? undefined
        : operationPath(t.prefix, first.operationId as OperationId, { ...values, [names[0] ?? ""]: "a.b" })
    return forms.map((form) => ({ path: form, served: allowedMethods(methods), allow: allowHeader(methods), outside }))
  }),
  ...[t.paths.openapi, t.paths.docs].map((path) => ({
    path,
    served: allowedMethods(["GET"]),
    allow: allowHeader(["GET"]),
    outside: undefined
  }))
]

export const routeAudits: ReadonlyArray<Audit> = [
  audit({
    id: "ACC-routes-unknown-404",
    level: "MUST",
    title: "every other path under the prefix is a 404 problem whatever the credentials",
    run: async (t) => {
      for (const path of unknownPathsInside(t)) await expectNotFoundForAnyone(t, path)
      // Only GET: the contract lets docs serve files under docs/, so another method there may be 405.
      const missingAsset = `${t.paths.docs}/missing-${t.run}.js`
      expectProblem(`GET ${missingAsset}`, await t.send({ method: "GET", path: missingAsset }), NOT_FOUND)
      const nope = `${t.prefix}/nope`
      expectProblem(
        `POST ${nope} with a body`,
        await t.send({ method: "POST", path: nope, headers: { "Content-Type": "text/plain" }, body: "x" }),
        NOT_FOUND
      )
    }
  }),

  // A standalone server answers every path; a host that mounts Accord owns the paths outside its prefix (docs/api.md,
  // "Routes"), hence SHOULD.
  audit({
    id: "ACC-routes-outside-prefix-404",
    level: "SHOULD",
    title: "paths outside the mount prefix are 404 problems whatever the credentials (a standalone server)",
    run: async (t) => {
      if (t.prefix === "") throw new AuditSkipped("the API is mounted at the root: no path is outside its prefix")
      for (const path of unknownPathsOutside(t)) await expectNotFoundForAnyone(t, path)
    }
  }),

  audit({
    id: "ACC-routes-405-allow",
    level: "MUST",
    title:
      "a wrong method on a known path is 405 with Allow (sorted, HEAD and OPTIONS included), whatever the credentials",
    run: async (t) => {
      for (const { path, served, allow, outside } of servedPaths(t)) {
        for (const verb of METHODS.filter((method) => !served.includes(method))) {
          const head = verb === "HEAD"
          expectProblem(`${verb} ${path}`, await t.send({ method: verb, path }), notAllowed(allow, head))
          expectProblem(
            `${verb} ${path} as a client`,
            await t.send({ method: verb, path, headers: bearer(t.clientToken) }),
            notAllowed(allow, head)
          )
        }
        // A parameter is any one segment to the route: a value its Schema refuses still names the path.
        if (outside !== undefined && path.endsWith("/")) {
          const verb = METHODS.find((method) => !served.includes(method)) ?? "DELETE"
          expectProblem(
            `${verb} ${outside} (a parameter value outside its charset)`,
            await t.send({ method: verb, path: outside }),
            notAllowed(allow, verb === "HEAD")
          )
        }
      }
    }
  }),

  audit({
    id: "ACC-routes-options-204",
    level: "MUST",
    title: "OPTIONS on a known path is 204 with Allow and no body, whatever the credentials",
    run: async (t) => {
      const headerSets: ReadonlyArray<[string, Record<string, string>]> = [
        ["no credentials", {}],
        ["a malformed token", { Authorization: "Bearer $" }],
        ["Basic", { Authorization: "Basic eDp5" }],
        ["a client", bearer(t.clientToken)],
        ["a user", bearer(t.userToken)]
      ]
      for (const { path, allow } of servedPaths(t)) {
        for (const [who, headers] of headerSets) {
          const res = await t.send({ method: "OPTIONS", path, headers })
          const label = `OPTIONS ${path}, ${who}`
          expectStatus(label, res, 204)
          expectCommonHeaders(label, res)
          equal(res.headers["allow"], allow, `${label}: Allow`)
          equal(res.body.length, 0, `${label}: no body`)
        }
      }
      const nope = `${t.prefix}/nope`
      expectProblem("OPTIONS on an unknown path", await t.send({ method: "OPTIONS", path: nope }), NOT_FOUND)
    }
  }),

  audit({
    id: "ACC-routes-head-like-get",
    level: "MUST",
    title: "HEAD is answered wherever GET is, with the same status and headers and no body",
    operations: ["getLanguagePreferences", "listPaymentMethods"],
    run: async (t) => {
      const cases: ReadonlyArray<[string, string, Record<string, string>, number]> = [
        ["the user", t.paths.preferences, bearer(t.userToken), 200],
        ["the user", withoutSlash(t.paths.preferences), bearer(t.userToken), 200],
        ["the other user", t.paths.paymentMethods, bearer(t.otherUserToken), 200],
        ["nothing", t.paths.preferences, {}, 401],
        ["a malformed token", t.paths.preferences, { Authorization: "Bearer $" }, 401],
        ["the client", t.paths.paymentMethods, bearer(t.clientToken), 403]
      ]
      for (const [who, path, headers, status] of cases) {
        const get = await t.send({ method: "GET", path, headers })
        const head = await t.send({ method: "HEAD", path, headers })
        const label = `HEAD ${path} with ${who}`
        expectStatus(`GET ${path}`, get, status)
        equal(head.status, status, `${label}: status`)
        expectCommonHeaders(label, head)
        equal(head.headers["content-type"], get.headers["content-type"], `${label}: Content-Type`)
        equal(head.headers["www-authenticate"], get.headers["www-authenticate"], `${label}: WWW-Authenticate`)
        equal(head.body.length, 0, `${label}: no body`)
      }
    }
  }),

  audit({
    id: "ACC-routes-trailing-slash",
    level: "MUST",
    title: "the operation paths answer identically with and without the trailing slash (no redirect)",
    operations: [
      "getLanguagePreferences",
      "updateLanguagePreferences",
      "listPaymentMethods",
      "setDefaultPaymentMethod",
      "createPublicPlanEntry"
    ],
    run: async (t) => {
      const user = t.userToken
      const other = t.otherUserToken
      const pairs: ReadonlyArray<[string, number, (path: string) => RawRequest]> = [
        [t.paths.preferences, 200, (path) => ({ method: "GET", path, headers: bearer(user) })],
        [
          t.paths.preferences,
          200,
          (path) => ({ method: "PUT", path, headers: jsonHeaders(user), body: '{"language":"pt-br"}' })
        ],
        [
          t.paths.preferences,
          400,
          (path) => ({ method: "PUT", path, headers: jsonHeaders(user), body: '{"timezone":7}' })
        ],
        [t.paths.preferences, 401, (path) => ({ method: "GET", path })],
        [t.paths.paymentMethods, 200, (path) => ({ method: "GET", path, headers: bearer(other) })],
        [
          t.paths.paymentMethod(t.otherUserPaymentMethods[0] ?? ""),
          200,
          (path) => ({ method: "PUT", path, headers: bearer(other) })
        ],
        [t.paths.paymentMethod(unknownId(t)), 404, (path) => ({ method: "PUT", path, headers: bearer(other) })],
        [t.paths.planEntries, 400, (path) => ({ method: "POST", path, headers: jsonHeaders(user), body: "{}" })]
      ]
      for (const [path, status, build] of pairs) {
        const slash = await t.send(build(path))
        const bare = await t.send(build(withoutSlash(path)))
        const label = `${build(path).method} ${withoutSlash(path)}(/)`
        expectStatus(label, slash, status)
        equal(bare.headers["location"], undefined, `${label}: no redirect`)
        expectStatus(`${label} without slash`, bare, slash.status)
        equal(bare.headers["content-type"], slash.headers["content-type"], `${label}: Content-Type`)
        equal(text(bare), text(slash), `${label}: body`)
      }
      const withSlash = await postPlanEntry(
        t,
        user,
        JSON.stringify({ email: `slash.${t.run}@example.com`, password: "password" })
      )
      const noSlash = await postPlanEntry(
        t,
        user,
        JSON.stringify({ email: `bare.${t.run}@example.com`, password: "password" }),
        withoutSlash(t.paths.planEntries)
      )
      expectJsonSuccess("POST plan entry with slash", withSlash, 201)
      expectJsonSuccess("POST plan entry without slash", noSlash, 201)
      equal(
        text(noSlash),
        JSON.stringify({ email: `bare.${t.run}@example.com`, password: "********" }),
        "POST plan entry without slash: body"
      )
    }
  }),

  audit({
    id: "ACC-routes-payment-method-id-charset",
    level: "MUST",
    title: "a payment method id outside [A-Za-z0-9_-]{1,100} is 404 after credentials (401 without them)",
    operations: ["setDefaultPaymentMethod"],
    run: async (t) => {
      for (const id of ["pm.1", "pm~1", "pm%201", "a".repeat(101), "%C3%A9"]) {
        expectProblem(
          `PUT ${id} as the owner`,
          await t.send({ method: "PUT", path: t.paths.paymentMethod(id), headers: bearer(t.userToken) }),
          NOT_FOUND
        )
        expectProblem(
          `PUT ${id} without credentials`,
          await t.send({ method: "PUT", path: t.paths.paymentMethod(id) }),
          UNAUTHENTICATED
        )
      }
      expectProblem(
        "PUT a well-formed 100-character id that does not exist",
        await t.send({ method: "PUT", path: t.paths.paymentMethod("a".repeat(100)), headers: bearer(t.userToken) }),
        NOT_FOUND
      )
    }
  })
]

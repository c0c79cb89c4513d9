import {
  allowedMethods,
  apiRoutes,
  OPERATION_DOCS,
  operations,
  PIPELINE,
  problemCodesOf,
  type ErasedOperationDocs,
  type Operation,
  type OperationId,
  type ProblemCode
} from "@accord/contract"
import { Exit, Schema } from "effect"
import { allowOnPathOf, operationPath, withoutSlash } from "../paths.js"
import type { RawRequest, RawResponse } from "../raw-http.js"
import { equal, includes } from "./assert.js"
import { audit, type Audit, type AuditTarget } from "./audit.js"
import { firstRefusal, type Refusal as RankedRefusal } from "./order.js"
import {
  bearer,
  BODY_LIMIT,
  comparableHeaders,
  expectCommonHeaders,
  expectProblem,
  expectStatus,
  FORBIDDEN,
  INVALID_BODY,
  INVALID_JSON,
  INVALID_TOKEN,
  NOT_FOUND,
  notAllowed,
  padded,
  TOO_LARGE,
  UNAUTHENTICATED,
  UNSUPPORTED,
  validation,
  type ProblemExpectation
} from "./responses.js"

// The pipeline's rules (docs/api.md, "Errors", "Routes", "Precise rules") audited on every operation of the contract,
// read from its data: the route, the access, whether it reads a body or has path parameters, its problem codes
// (`problemCodesOf`) and the order of checks (`PIPELINE`). A new operation is audited by these without a hand edit;
// each audit's id is `ACC-`, the operationId in kebab case, and the rule. What an operation does (its use case) is
// its hand-written audits' (`Audit.operations`).

/** An operation of the contract, with its id as the contract types it. */
type ContractOperation = Operation & { readonly operationId: OperationId }

const CONTRACT_OPERATIONS: ReadonlyArray<ContractOperation> = Object.values(operations)

/** `setDefaultPaymentMethod` -> `set-default-payment-method`: the operation's part of its audits' ids. */
const slugOf = (operationId: string): string => operationId.replace(/[A-Z]/g, (upper) => `-${upper.toLowerCase()}`)

const docsOf = (operation: ContractOperation): ErasedOperationDocs => OPERATION_DOCS[operation.operationId]

/** The methods of the operations on the operation's path. */
const pathMethods = (operation: Operation): ReadonlyArray<string> =>
  (apiRoutes.find((route) => route.path === operation.path)?.operations ?? [operation]).map((other) => other.method)

/** The methods the operation's path serves (`allowedMethods`: HEAD where GET is, and OPTIONS, sorted). */
const methodsServed = (operation: Operation): ReadonlyArray<string> => allowedMethods(pathMethods(operation))

/** `Allow` on the operation's path (docs/api.md, "Routes"). */
const allowOf = (operation: ContractOperation): string => allowOnPathOf(operation.operationId)

/** The methods an audit tries on a path: every method an operation may have, and HEAD. */
const METHODS = ["DELETE", "GET", "HEAD", "PATCH", "POST", "PUT"] as const

/** The codes an answer to the operation may carry: its own (`problemCodesOf`), and the route's (404, 405). */
const declaredCodes = (operation: Operation): ReadonlySet<ProblemCode> =>
  new Set<ProblemCode>([
    ...problemCodesOf(operation),
    ...PIPELINE.flatMap((check): ReadonlyArray<ProblemCode> => (check.perOperation ? [] : check.codes))
  ])

/**
 * `expectProblem`, and the code is one the contract declares for the operation (docs/api.md, "Errors"): its status
 * is the problem table's already (`expectProblem` reads it there).
 */
const expectRefusal = (operation: Operation, label: string, res: RawResponse, expected: ProblemExpectation): void => {
  includes(
    [...declaredCodes(operation)],
    expected.code,
    `${label}: a code the contract declares for ${operation.operationId}`
  )
  expectProblem(label, res, expected)
}

/** A value of each path parameter the parameter accepts: its example in the operation's docs. */
const validParams = (operation: ContractOperation): Readonly<Record<string, string>> =>
  Object.fromEntries(Object.entries(docsOf(operation).params ?? {}).map(([name, docs]) => [name, docs.example]))

/**
 * Values a path parameter may refuse, each the same whether percent-decoded or not (so the audit holds whichever the
 * server checks): a character outside an id's charset, and a value longer than any id.
 */
const REFUSAL_CANDIDATES = ["a.b", "a~b", "a".repeat(1025)] as const

/** For each path parameter, a value its Schema refuses (the others at their valid values); none when it takes any. */
const refusedParams = (operation: ContractOperation): ReadonlyArray<readonly [name: string, value: string]> => {
  const schema = operation.params
  if (schema === undefined) return []
  const valid = validParams(operation)
  const refuses = (name: string, value: string): boolean =>
    Exit.isFailure(Schema.decodeUnknownExit(schema)({ ...valid, [name]: value }))
  return Object.keys(schema.fields).flatMap((name) => {
    const value = REFUSAL_CANDIDATES.find((candidate) => refuses(name, candidate))
    return value === undefined ? [] : [[name, value] as const]
  })
}

/** What a request is made of: the parts a refusal changes. */
interface RequestParts {
  readonly method: string
  readonly params: Readonly<Record<string, string>>
  readonly authorization: string | undefined
  readonly contentType: string | undefined
  readonly body: string | undefined
}

/**
 * The request the operation would answer with success, as the audited caller: its method, its path with valid
 * parameters, the user's credential where one is needed, and the body of its docs' request example. The audits below
 * send it as is to a read only (HEAD like GET); every other request changes a part of it into a refusal, so that none
 * reaches a use case and nothing is written.
 */
const baseParts = (t: AuditTarget, operation: ContractOperation): RequestParts => {
  const example = docsOf(operation).requestExample
  return {
    method: operation.method,
    params: validParams(operation),
    authorization: operation.access === "public" ? undefined : `Bearer ${t.userToken}`,
    contentType: operation.body === undefined ? undefined : "application/json",
    body: operation.body === undefined ? undefined : JSON.stringify(example ?? {})
  }
}

const toRequest = (t: AuditTarget, operation: ContractOperation, parts: RequestParts): RawRequest => {
  const headers: Record<string, string> = {}
  if (parts.authorization !== undefined) headers["Authorization"] = parts.authorization
  if (parts.contentType !== undefined) headers["Content-Type"] = parts.contentType
  const path = operationPath(t.prefix, operation.operationId, parts.params)
  return parts.body === undefined
    ? { method: parts.method, path, headers }
    : { method: parts.method, path, headers, body: parts.body }
}

/** What a refusal changes in a request; two refusals that change the same part cannot be sent together. */
type Part = "method" | "credential" | "media type" | "body" | "path parameter"

/** One way to make the operation refuse a request, at one check of the contract's order. */
interface Refusal extends RankedRefusal {
  readonly label: string
  readonly part: Part
  readonly apply: (parts: RequestParts, t: AuditTarget) => RequestParts
}

/** A field no body has: the docs' example with it is refused by the fields' check. */
const UNKNOWN_FIELD = "not_a_field"

/** The refusals a black box can provoke on `operation`, each only where the contract applies its check. */
const refusalsOf = (operation: ContractOperation): ReadonlyArray<Refusal> => {
  const refusals: Array<Refusal> = []
  const allow = allowOf(operation)
  const wrongMethod = ["DELETE", "PATCH", "PUT", "POST"].find((method) => !methodsServed(operation).includes(method))
  if (wrongMethod !== undefined)
    refusals.push({
      label: `${wrongMethod} on its path`,
      check: "route",
      expected: notAllowed(allow),
      part: "method",
      apply: (parts) => ({ ...parts, method: wrongMethod })
    })
  if (operation.access !== "public")
    refusals.push(
      {
        label: "no credential",
        check: "credential",
        expected: UNAUTHENTICATED,
        part: "credential",
        apply: (parts) => ({ ...parts, authorization: undefined })
      },
      {
        label: "a malformed token",
        check: "credential",
        expected: INVALID_TOKEN,
        part: "credential",
        apply: (parts) => ({ ...parts, authorization: "Bearer $" })
      }
    )
  if (operation.access === "user")
    refusals.push({
      label: "an application's credential",
      check: "scope",
      expected: FORBIDDEN,
      part: "credential",
      apply: (parts, t) => ({ ...parts, authorization: `Bearer ${t.clientToken}` })
    })
  if (operation.body !== undefined)
    refusals.push(
      {
        label: "text/plain",
        check: "body-headers",
        expected: UNSUPPORTED,
        part: "media type",
        apply: (parts) => ({ ...parts, contentType: "text/plain" })
      },
      {
        // Not JSON either: the size decides first (docs/api.md, "Errors").
        label: `${BODY_LIMIT + 1} bytes`,
        check: "body-headers",
        expected: TOO_LARGE,
        part: "body",
        apply: (parts) => ({ ...parts, body: padded("{", "", BODY_LIMIT + 1) })
      },
      {
        label: "invalid JSON",
        check: "body",
        expected: INVALID_JSON,
        part: "body",
        apply: (parts) => ({ ...parts, body: "{" })
      },
      {
        label: "a JSON array",
        check: "body",
        expected: INVALID_BODY,
        part: "body",
        apply: (parts) => ({ ...parts, body: "[]" })
      },
      {
        label: "an unknown field",
        check: "fields",
        expected: validation([[`/${UNKNOWN_FIELD}`, "unknown_field"]]),
        part: "body",
        apply: (parts) => ({ ...parts, body: withUnknownField(parts.body) })
      }
    )
  for (const [name, value] of refusedParams(operation))
    refusals.push({
      label: `the path parameter ${name} ${value.length > 20 ? `of ${value.length} characters` : JSON.stringify(value)}`,
      check: "path-parameters",
      expected: NOT_FOUND,
      part: "path parameter",
      apply: (parts) => ({ ...parts, params: { ...parts.params, [name]: value } })
    })
  return refusals
}

/** The example's JSON object with the unknown field added last. */
const withUnknownField = (body: string | undefined): string => {
  const example = body === undefined || body.trim() === "{}" ? "{" : `${body.trim().slice(0, -1)},`
  return `${example}"${UNKNOWN_FIELD}":1}`
}

/** The operation's path, and without its trailing slash unless the route is exact. */
const pathForms = (t: AuditTarget, operation: ContractOperation): ReadonlyArray<string> => {
  const path = operationPath(t.prefix, operation.operationId, validParams(operation))
  return operation.exact || !path.endsWith("/") ? [path] : [path, withoutSlash(path)]
}

/** One rule of the pipeline, audited on each operation it applies to. */
interface OperationRule {
  /** The rule's part of the id. */
  readonly rule: string
  readonly appliesTo: (operation: ContractOperation) => boolean
  readonly title: (operation: ContractOperation) => string
  readonly run: (t: AuditTarget, operation: ContractOperation) => Promise<void>
}

const RULES: ReadonlyArray<OperationRule> = [
  {
    rule: "credential-401",
    appliesTo: (operation) => operation.access !== "public",
    title: () =>
      "no credential, an empty one or another scheme is 401 unauthenticated; a malformed or unknown token 401 invalid_token",
    run: async (t, operation) => {
      const cases: ReadonlyArray<readonly [string, string | undefined, ProblemExpectation]> = [
        ["no credential", undefined, UNAUTHENTICATED],
        ["an empty Authorization", "", UNAUTHENTICATED],
        ["Basic", "Basic dXNlcjpwYXNz", UNAUTHENTICATED],
        ["a malformed token", "Bearer $", INVALID_TOKEN],
        ["an unknown token", `Bearer unknown-${t.run}`, INVALID_TOKEN]
      ]
      for (const [label, authorization, expected] of cases) {
        const request = toRequest(t, operation, { ...baseParts(t, operation), authorization })
        expectRefusal(operation, `${request.method} ${request.path}, ${label}`, await t.send(request), expected)
      }
    }
  },
  {
    rule: "client-403",
    appliesTo: (operation) => operation.access === "user",
    title: (operation) =>
      `an application's credential is 403 insufficient_scope${operation.body === undefined ? "" : ", before its body is looked at"}`,
    run: async (t, operation) => {
      const client = { ...baseParts(t, operation), authorization: `Bearer ${t.clientToken}` }
      const variants: ReadonlyArray<readonly [string, RequestParts]> =
        operation.body === undefined
          ? [["", client]]
          : [
              ["", client],
              [", text/plain", { ...client, contentType: "text/plain", body: "not json" }]
            ]
      for (const [label, parts] of variants) {
        const request = toRequest(t, operation, parts)
        expectRefusal(
          operation,
          `${request.method} ${request.path} as a client${label}`,
          await t.send(request),
          FORBIDDEN
        )
      }
    }
  },
  {
    rule: "405-allow",
    appliesTo: () => true,
    title: () =>
      "a method its path does not serve is 405 with Allow (sorted, HEAD and OPTIONS included), whatever the credential",
    run: async (t, operation) => {
      const allow = allowOf(operation)
      const wrong = METHODS.filter((method) => !methodsServed(operation).includes(method))
      for (const path of pathForms(t, operation))
        for (const method of wrong)
          for (const [who, headers] of [
            ["no credential", {}],
            ["the user", bearer(t.userToken)]
          ] as const) {
            const label = `${method} ${path}, ${who}`
            expectRefusal(
              operation,
              label,
              await t.send({ method, path, headers }),
              notAllowed(allow, method === "HEAD")
            )
          }
    }
  },
  {
    rule: "options-204",
    appliesTo: () => true,
    title: () => "OPTIONS on its path is 204 with Allow and no body, whatever the credential",
    run: async (t, operation) => {
      const allow = allowOf(operation)
      const headerSets: ReadonlyArray<readonly [string, Record<string, string>]> = [
        ["no credential", {}],
        ["a malformed token", { Authorization: "Bearer $" }],
        ["the client", bearer(t.clientToken)],
        ["the user", bearer(t.userToken)]
      ]
      for (const path of pathForms(t, operation))
        for (const [who, headers] of headerSets) {
          const label = `OPTIONS ${path}, ${who}`
          const res = await t.send({ method: "OPTIONS", path, headers })
          expectStatus(label, res, 204)
          expectCommonHeaders(label, res)
          equal(res.headers["allow"], allow, `${label}: Allow`)
          equal(res.body.length, 0, `${label}: no body`)
        }
    }
  },
  {
    rule: "head-like-get",
    appliesTo: (operation) => operation.method === "GET",
    title: () => "HEAD answers with GET's status and headers, the length of GET's body, and no body",
    run: async (t, operation) => {
      const base = baseParts(t, operation)
      const callers: ReadonlyArray<readonly [string, RequestParts]> =
        base.authorization === undefined
          ? [["no credential", base]]
          : [
              ["the user", base],
              ["no credential", { ...base, authorization: undefined }]
            ]
      for (const [who, parts] of callers) {
        const request = toRequest(t, operation, parts)
        const label = `HEAD ${request.path}, ${who}`
        const get = await t.send(request)
        const head = await t.send({ ...request, method: "HEAD" })
        equal(head.status, get.status, `${label}: GET's status`)
        // The framing apart: a handler called in process leaves GET's to its runtime, while HEAD's Content-Length is
        // the contract's (GET's body's length), checked next.
        const unframed = { framing: false }
        equal(
          comparableHeaders(head.headers, unframed),
          comparableHeaders(get.headers, unframed),
          `${label}: GET's headers`
        )
        equal(head.headers["content-length"], String(get.body.length), `${label}: Content-Length, GET's body's`)
        equal(head.body.length, 0, `${label}: no body`)
      }
    }
  },
  {
    rule: "body-refusals",
    appliesTo: (operation) => operation.body !== undefined,
    title: () =>
      `a body not sent as JSON is 415, over ${BODY_LIMIT} bytes 413, not JSON 400 invalid_json, not an object 400 invalid_body, with an unknown field 400 validation_failed`,
    run: async (t, operation) => {
      const base = baseParts(t, operation)
      const cases: ReadonlyArray<readonly [string, RequestParts, ProblemExpectation]> = [
        ["text/plain", { ...base, contentType: "text/plain" }, UNSUPPORTED],
        ["charset latin1", { ...base, contentType: "application/json; charset=latin1" }, UNSUPPORTED],
        ["no Content-Type", { ...base, contentType: undefined }, UNSUPPORTED],
        [
          `${BODY_LIMIT + 1} bytes of valid JSON`,
          { ...base, body: padded((base.body ?? "{}").slice(0, -1), "}", BODY_LIMIT + 1) },
          TOO_LARGE
        ],
        ["invalid JSON", { ...base, body: "{" }, INVALID_JSON],
        ["a JSON array", { ...base, body: "[]" }, INVALID_BODY],
        [
          "an unknown field",
          { ...base, body: withUnknownField(base.body) },
          validation([[`/${UNKNOWN_FIELD}`, "unknown_field"]])
        ]
      ]
      for (const [label, parts, expected] of cases) {
        const request = toRequest(t, operation, parts)
        expectRefusal(operation, `${request.method} ${request.path}, ${label}`, await t.send(request), expected)
      }
    }
  },
  {
    rule: "path-parameter-404",
    appliesTo: (operation) => refusedParams(operation).length > 0,
    title: () => "a path parameter its Schema refuses is 404 not_found after the credential (401 without one)",
    run: async (t, operation) => {
      for (const [name, value] of refusedParams(operation)) {
        const parts = { ...baseParts(t, operation), params: { ...validParams(operation), [name]: value } }
        const request = toRequest(t, operation, parts)
        const label = `${request.method} ${request.path.slice(0, 120)}`
        expectRefusal(operation, label, await t.send(request), NOT_FOUND)
        if (operation.access !== "public") {
          const anonymous = toRequest(t, operation, { ...parts, authorization: undefined })
          expectRefusal(operation, `${label} without a credential`, await t.send(anonymous), UNAUTHENTICATED)
        }
      }
    }
  },
  {
    rule: "order",
    appliesTo: (operation) => new Set(refusalsOf(operation).map((refusal) => refusal.part)).size > 1,
    title: () =>
      "each refusal alone answers its code; two together answer the code of the earlier check in the contract's order (PIPELINE)",
    run: async (t, operation) => {
      const refusals = refusalsOf(operation)
      const send = async (chosen: readonly [Refusal, ...ReadonlyArray<Refusal>]): Promise<void> => {
        const parts = chosen.reduce((request, refusal) => refusal.apply(request, t), baseParts(t, operation))
        const request = toRequest(t, operation, parts)
        const label = `${request.method} ${request.path.slice(0, 120)} with ${chosen.map((refusal) => refusal.label).join(" and ")}`
        expectRefusal(operation, label, await t.send(request), firstRefusal(chosen).expected)
      }
      for (const refusal of refusals) await send([refusal])
      for (const [index, first] of refusals.entries())
        for (const second of refusals.slice(index + 1)) if (first.part !== second.part) await send([first, second])
    }
  }
]

/**
 * The pipeline's rules on every operation of the contract, grouped by operation in the contract's order: for each,
 * the rules that apply to it (its access, body, path parameters), each a MUST with the id
 * `ACC-<operationId in kebab case>-<rule>`.
 */
export const operationAudits: ReadonlyArray<Audit> = CONTRACT_OPERATIONS.flatMap((operation) =>
  RULES.filter((rule) => rule.appliesTo(operation)).map((rule) =>
    audit({
      id: `ACC-${slugOf(operation.operationId)}-${rule.rule}`,
      level: "MUST",
      title: `${operation.operationId} (${operation.method} ${operation.path}): ${rule.title(operation)}`,
      operations: [operation.operationId],
      run: (t) => rule.run(t, operation)
    })
  )
)

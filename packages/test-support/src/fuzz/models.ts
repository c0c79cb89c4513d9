import type { OperationId } from "@accord/contract"
import type { RawResponse } from "@accord/conformance"
import type { Decision, FuzzRequest, Judged } from "./oracle.js"
import { isRecord, rawQuery, USER_READS } from "./targets.js"

/**
 * The model of stored data: only a 2xx write changes it (docs/SECURITY.md, item 1). The generic part covers every
 * operation: each user's reads (`USER_READS`: every GET a user calls without a path parameter) must answer what they
 * answered last, unless a write of that user got a 2xx since. Where an operation's effect is known precisely, a hook
 * keyed by its operationId (`OPERATION_MODELS`) says what the use case answers, what its success body holds beyond its
 * Schema, and what a 2xx write makes the reads show; a write without a hook only makes its caller's reads unknown
 * until read again.
 */

/** What the fuzz knows of one user's stored data: the body each of the user's reads answered last, by operationId. */
export interface UserModel {
  /** `undefined` anywhere inside a body: not known (a write changed it and nothing says to what); matches anything. */
  readonly reads: Record<string, unknown>
}

export interface FuzzModels {
  readonly a: UserModel
  readonly b: UserModel
}

/** Whether `actual` is what the model expects: the same JSON (keys in order), where `undefined` matches anything. */
export const matches = (expected: unknown, actual: unknown): boolean => {
  if (expected === undefined) return true
  if (Array.isArray(expected))
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((item: unknown, index) => matches(item, actual[index]))
    )
  if (isRecord(expected))
    return (
      isRecord(actual) &&
      JSON.stringify(Object.keys(actual)) === JSON.stringify(Object.keys(expected)) &&
      Object.keys(expected).every((name) => matches(expected[name], actual[name]))
    )
  return expected === actual
}

/** Compares what a read answered with the model, then learns it (what was not known is known now). */
export const checkRead = (
  model: UserModel,
  operationId: string,
  body: unknown,
  label: string
): ReadonlyArray<string> => {
  const expected = model.reads[operationId]
  model.reads[operationId] = body
  return matches(expected, body)
    ? []
    : [`${label}: ${operationId} answered ${JSON.stringify(body)}, expected ${JSON.stringify(expected)}`]
}

/** What an operation does, where the fuzz knows it precisely. */
interface OperationModel {
  /** The use case's answer to a request that passed every check, where the fixture decides it. */
  readonly outcome?: (request: FuzzRequest) => Decision
  /** What its success body holds beyond its Schema. */
  readonly success?: (judged: Judged, body: unknown) => ReadonlyArray<string>
  /** A 2xx of this write, applied to its caller's model; where the answer contradicts the model. */
  readonly write?: (judged: Judged, model: UserModel, body: unknown) => ReadonlyArray<string>
}

/** The preferences' values; the other fields of the record are the server's (docs/api.md, "Precise rules"). */
const PREFERENCE_VALUES = ["language", "timezone", "mfa_enabled"] as const

/** The JSON object a request's body held (it got a 2xx, so it was one, or none: `{}`). */
const sentObject = (judged: Judged): Readonly<Record<string, unknown>> => {
  const { body } = judged.fuzz
  if (body === undefined || body.length === 0) return {}
  try {
    const value: unknown = JSON.parse(typeof body === "string" ? body : Buffer.from(body).toString("utf8"))
    return isRecord(value) ? value : {}
  } catch {
    return {}
  }
}

const isMethodList = (value: unknown): value is { readonly data: ReadonlyArray<Readonly<Record<string, unknown>>> } =>
  isRecord(value) && Array.isArray(value["data"]) && value["data"].every(isRecord)

/** The caller's own payment methods, as the fixture seeded them (ordered by id in code-point order). */
const ownMethods = (request: FuzzRequest): ReadonlyArray<string> => request.caller?.methods ?? []

export const OPERATION_MODELS: { readonly [Id in OperationId]?: OperationModel } = {
  // A plan entry is nobody's user data: no read of its caller changes.
  createPublicPlanEntry: { write: () => [] },
  updateLanguagePreferences: {
    // Merge semantics: what the body leaves out keeps its value; id and created_at never change; updated_at moves
    // forward, and only when a value changes (docs/api.md, "Precise rules").
    write: (judged, model, body) => {
      const before = model.reads["getLanguagePreferences"]
      model.reads["getLanguagePreferences"] = body
      if (!isRecord(before) || !isRecord(body)) return []
      const problems: Array<string> = []
      if (body["id"] !== before["id"] || body["created_at"] !== before["created_at"])
        problems.push("preferences: id or created_at changed")
      const sent = sentObject(judged)
      for (const name of PREFERENCE_VALUES)
        if (!(name in sent) && before[name] !== undefined && body[name] !== before[name])
          problems.push(`preferences: ${name} changed though the body did not send it`)
      const changed = PREFERENCE_VALUES.some((name) => body[name] !== before[name])
      if (!changed && before["updated_at"] !== undefined && body["updated_at"] !== before["updated_at"])
        problems.push("preferences: updated_at changed though no value did")
      if (changed && String(body["updated_at"]) < String(before["updated_at"]))
        problems.push("preferences: updated_at went back")
      return problems
    }
  },
  listPaymentMethods: {
    // The caller's own methods, all of them, ordered by id; at most one default.
    success: (judged, body) => {
      if (!isMethodList(body)) return []
      const ids = body.data.map((method) => method["id"])
      const own = ownMethods(judged)
      const problems: Array<string> = []
      if (JSON.stringify(ids) !== JSON.stringify(own))
        problems.push(`list: ids ${JSON.stringify(ids)}, expected the caller's own ${JSON.stringify(own)}`)
      if (body.data.filter((method) => method["is_default"] === true).length > 1)
        problems.push("list: more than one default")
      return problems
    }
  },
  setDefaultPaymentMethod: {
    // One of the caller's own methods: 200; another user's or an unknown one: 404 (the fuzz sends no If-Match).
    outcome: (request) => {
      const id = request.target.kind === "route" ? request.target.params["id"] : undefined
      return id !== undefined && ownMethods(request).includes(id)
        ? { answers: [], passes: true }
        : { answers: [{ status: 404, code: "not_found" }], passes: false }
    },
    success: (judged, body) => {
      const id = judged.target.kind === "route" ? judged.target.params["id"] : undefined
      return isRecord(body) && body["id"] === id && body["is_default"] === true
        ? []
        : ["set default: expected the method named in the path, with is_default true"]
    },
    // The method becomes the default, the previous default loses it (its updated_at then unknown), nothing else
    // changes; repeating it changes nothing.
    write: (judged, model, body) => {
      const list = model.reads["listPaymentMethods"]
      if (!isRecord(body)) return []
      if (!ownMethods(judged).includes(String(body["id"])))
        return [`set default answered 2xx for ${String(body["id"])}, which is not the caller's`]
      if (!isMethodList(list)) return []
      const current = list.data.find((method) => method["id"] === body["id"])
      if (current === undefined) return [`set default: ${String(body["id"])} is not in the model`]
      const problems: Array<string> = []
      if (current["created_at"] !== body["created_at"]) problems.push("set default: created_at changed")
      if (
        current["is_default"] === true &&
        current["updated_at"] !== undefined &&
        current["updated_at"] !== body["updated_at"]
      )
        problems.push("set default: repeating it changed updated_at")
      model.reads["listPaymentMethods"] = {
        data: list.data.map((method) =>
          method["id"] === body["id"]
            ? body
            : method["is_default"] === true
              ? { ...method, is_default: false, updated_at: undefined }
              : method
        )
      }
      return problems
    }
  }
}

/** Forgets what the user's reads answered: a write without a model may have changed any of them. */
const forgetReads = (model: UserModel): void => {
  for (const read of USER_READS) model.reads[read.operationId] = undefined
}

/**
 * Applies one answered request of a user's lane to that user's model, in the lane's order, and reports where the API
 * contradicts it: a read that shows a change no 2xx made, a 2xx write that changes what it must not.
 */
export const applyToModel = (judged: Judged, model: UserModel, response: RawResponse): ReadonlyArray<string> => {
  const { operation, fuzz } = judged
  if (operation === undefined || response.status < 200 || response.status > 299) return []
  if (fuzz.method === "HEAD" || response.status === 204) return []
  let body: unknown
  try {
    body = JSON.parse(response.body.toString("utf8"))
  } catch {
    return []
  }
  if (USER_READS.includes(operation)) {
    // A page other than the first (a query) answers other events: the model knows the first page only.
    if (operation.query !== undefined && (rawQuery(fuzz.path) ?? "") !== "") return []
    return checkRead(model, operation.operationId, body, "read")
  }
  if (operation.method === "GET") return []
  const write = OPERATION_MODELS[operation.operationId]?.write
  if (write !== undefined) {
    // A write may record an event (docs/api.md, "Events"): the feeds are not known until read again.
    for (const feed of USER_READS) if (feed.query !== undefined) model.reads[feed.operationId] = undefined
    return write(judged, model, body)
  }
  forgetReads(model)
  return []
}

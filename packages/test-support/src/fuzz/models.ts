import type { RecordsTouched } from "@accord/contract"
import type { RawResponse } from "@accord/conformance"
import type { FuzzFixture, FuzzUser } from "./fixture.js"
import type { Decision, FuzzRequest, Judged } from "./oracle.js"
import {
  CONTRACT_OPERATIONS,
  fieldsOf,
  flaggedFieldsOf,
  idsOwnedBy,
  isRecord,
  rawQuery,
  USER_READS,
  type ContractOperation
} from "./targets.js"

/**
 * The model of stored data, derived from what each operation declares it does to records (`records` in its contract
 * entry): only a 2xx write changes it (docs/SECURITY.md, item 1). Each user's reads (`USER_READS`) must answer what
 * the model says, which starts from what they answered first and follows the user's 2xx writes, as their declarations
 * say: a merge keeps what the body leaves out, an update changes its item (and, `exclusive`, takes what it `sets` from
 * the caller's other items), a delete removes it, a create makes a list unknown until read again. An update or delete
 * of an item the caller does not have is 404, and a list holds the caller's own records only. A record no operation
 * writes (the events) is unknown after any write; the timestamps follow the contract's one rule (docs/api.md, "Precise
 * rules"): `created_at` never changes, `updated_at` moves forward when, and only when, a value does.
 */

/** What the fuzz knows of one user's stored data: the body each of the user's reads answered last, by record. */
export interface UserModel {
  /** `undefined` anywhere inside a body: not known (a write changed it and nothing says to what); matches anything. */
  readonly records: Record<string, unknown>
}

export interface FuzzModels {
  readonly a: UserModel
  readonly b: UserModel
}

/** An operation's declared effect on records, as one shape: what it does, to which record, and how. */
type Touch = Exclude<RecordsTouched, "none">

/** The record an operation reads or lists, if any. */
export const recordRead = (operation: ContractOperation): string | undefined => {
  const touched: RecordsTouched = operation.records
  if (touched === "none") return undefined
  return "reads" in touched ? touched.reads : "lists" in touched ? touched.lists : undefined
}

/** The record an operation writes (creates, merges, updates or deletes), if any. */
const recordWritten = (touched: RecordsTouched): string | undefined => {
  if (touched === "none") return undefined
  if ("creates" in touched) return touched.creates
  if ("merges" in touched) return touched.merges
  if ("updates" in touched) return touched.updates
  return "deletes" in touched ? touched.deletes : undefined
}

/** Records some operation writes: the others (the events) change with every write. */
const WRITTEN: ReadonlySet<string> = new Set(
  CONTRACT_OPERATIONS.flatMap((operation) => recordWritten(operation.records) ?? [])
)

/** A read's, an update's or a delete's item: the record and the path parameter naming it. */
const itemOf = (touched: RecordsTouched): { readonly record: string; readonly param: string } | undefined => {
  if (touched === "none") return undefined
  if ("reads" in touched) return touched.item === undefined ? undefined : { record: touched.reads, param: touched.item }
  if ("updates" in touched) return { record: touched.updates, param: touched.item }
  return "deletes" in touched ? { record: touched.deletes, param: touched.item } : undefined
}

/** What an update sets on its item, and whether the caller's other items then lose it (`exclusive`). */
const setsOf = (touched: Touch): { readonly sets: Readonly<Record<string, boolean>>; readonly exclusive: boolean } =>
  "updates" in touched
    ? { sets: touched.sets ?? {}, exclusive: touched.exclusive === true }
    : { sets: {}, exclusive: false }

/** The fields that at most one of a caller's records may hold `true` (what an exclusive update sets), by record. */
const EXCLUSIVE: ReadonlyMap<string, ReadonlyArray<string>> = new Map(
  CONTRACT_OPERATIONS.flatMap((operation) => {
    const touched: RecordsTouched = operation.records
    if (touched === "none" || !("updates" in touched) || touched.exclusive !== true) return []
    return [[touched.updates, Object.keys(touched.sets ?? {})] as const]
  })
)

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
export const checkRead = (model: UserModel, record: string, body: unknown, label: string): ReadonlyArray<string> => {
  const expected = model.records[record]
  model.records[record] = body
  return matches(expected, body)
    ? []
    : [`${label}: ${record} answered ${JSON.stringify(body)}, expected ${JSON.stringify(expected)}`]
}

type Item = Readonly<Record<string, unknown>>

const isList = (value: unknown): value is { readonly data: ReadonlyArray<Item> } =>
  isRecord(value) && Array.isArray(value["data"]) && value["data"].every(isRecord)

/** The key field of a list's items: the path parameter that names one (`id`). */
const KEY = "id"

/** The ids of the caller's records of `record`: the model's list where it knows it, else the seed's (a fresh store). */
const idsOf = (
  fixture: FuzzFixture,
  caller: FuzzUser | undefined,
  record: string,
  model: UserModel | undefined
): ReadonlyArray<unknown> | undefined => {
  if (caller === undefined) return []
  if (model === undefined) return idsOwnedBy(fixture.seed, caller.id, record)
  const list = model.records[record]
  return isList(list) ? list.data.map((item) => item[KEY]) : undefined
}

const PASS: Decision = { answers: [], passes: true }
const NOT_FOUND: Decision = { answers: [{ status: 404, code: "not_found" }], passes: false }

/**
 * The use case's answer where the declaration decides it: a read, update or delete of an item the caller has passes, of
 * one they have not (another user's, none, one deleted) is 404; both when the model does not know the caller's list.
 * Undefined: the declaration decides nothing. Either way, the operation's other declared errors may also answer (a
 * default that may not be deleted): the oracle adds them.
 */
export const declaredOutcome = (request: FuzzRequest, model: UserModel | undefined): Decision | undefined => {
  const { operation, target } = request
  const item = operation === undefined ? undefined : itemOf(operation.records)
  if (operation === undefined || item === undefined || !operation.errors.includes("NotFound")) return undefined
  const id = target.kind === "route" ? target.params[item.param] : undefined
  const ids = idsOf(request.fixture, request.caller, item.record, model)
  if (ids === undefined) return { answers: NOT_FOUND.answers, passes: true }
  return id !== undefined && ids.includes(id) ? PASS : NOT_FOUND
}

/** What a success body holds beyond its Schema, as the operation's declaration says (and the model, for an item read). */
export const declaredSuccess = (judged: Judged, body: unknown): ReadonlyArray<string> => {
  const { operation, caller, fixture, target } = judged
  if (operation === undefined) return []
  const touched: RecordsTouched = operation.records
  const label = operation.operationId
  if (touched === "none") return []
  if ("lists" in touched) {
    if (!isList(body)) return []
    const problems: Array<string> = []
    // The caller's own records only, whatever became of them since the seed.
    const own = caller === undefined ? [] : idsOwnedBy(fixture.seed, caller.id, touched.lists)
    const seeded = Object.hasOwn(fixture.seed, touched.lists)
    const foreign = body.data.map((item) => item[KEY]).filter((id) => seeded && !own.includes(String(id)))
    if (foreign.length > 0) problems.push(`${label}: lists ${JSON.stringify(foreign)}, not the caller's`)
    for (const field of EXCLUSIVE.get(touched.lists) ?? [])
      if (body.data.filter((item) => item[field] === true).length > 1)
        problems.push(`${label}: more than one record with ${field}`)
    return problems
  }
  const item = itemOf(touched)
  if (item === undefined || !isRecord(body)) return []
  const id = target.kind === "route" ? target.params[item.param] : undefined
  const problems: Array<string> = []
  if (body[KEY] !== id) problems.push(`${label}: answered ${String(body[KEY])}, not the item named in the path`)
  // A read of one item shows it as the caller's list does.
  const list = "reads" in touched ? judged.model?.records[item.record] : undefined
  const listed = isList(list) ? list.data.find((entry) => entry[KEY] === id) : undefined
  if (listed !== undefined && !matches(listed, body))
    problems.push(`${label}: answered ${JSON.stringify(body)}, the list shows ${JSON.stringify(listed)}`)
  for (const [field, value] of Object.entries(setsOf(touched).sets))
    if (body[field] !== value) problems.push(`${label}: ${field} is not ${String(value)}`)
  return problems
}

/** The JSON object a request's body held (it got a 2xx, so it was one, or none: `{}`). */
const sentObject = (judged: Judged): Item => {
  const { body } = judged.fuzz
  if (body === undefined || body.length === 0) return {}
  try {
    const value: unknown = JSON.parse(typeof body === "string" ? body : Buffer.from(body).toString("utf8"))
    return isRecord(value) ? value : {}
  } catch {
    return {}
  }
}

/**
 * What the contract's timestamps allow between `before` and `after` of one record: `created_at` and every field the
 * write may not set (`fixed`) unchanged, and `updated_at` moved forward when a value changed, left when none did.
 */
const timestampProblems = (
  label: string,
  before: Item,
  after: Item,
  values: ReadonlyArray<string>
): ReadonlyArray<string> => {
  const problems: Array<string> = []
  for (const field of Object.keys(before))
    if (
      !values.includes(field) &&
      field !== "updated_at" &&
      before[field] !== undefined &&
      after[field] !== before[field]
    )
      problems.push(`${label}: ${field} changed`)
  const changed = values.some((field) => after[field] !== before[field])
  if (!changed && before["updated_at"] !== undefined && after["updated_at"] !== before["updated_at"])
    problems.push(`${label}: updated_at changed though no value did`)
  if (changed && before["updated_at"] !== undefined && String(after["updated_at"]) < String(before["updated_at"]))
    problems.push(`${label}: updated_at went back`)
  return problems
}

/** A 2xx merge of the caller's one record: what the body leaves out keeps its value. */
const applyMerge = (judged: Judged, model: UserModel, record: string, body: unknown): ReadonlyArray<string> => {
  const before = model.records[record]
  model.records[record] = body
  const schema = judged.operation?.body?.schema
  if (!isRecord(before) || !isRecord(body) || schema === undefined) return []
  const label = judged.operation?.operationId ?? record
  const readOnly = flaggedFieldsOf(schema, "readOnly")
  const values = fieldsOf(schema).filter((field) => !readOnly.includes(field))
  const sent = sentObject(judged)
  const problems = [...timestampProblems(label, before, body, values)]
  for (const field of values)
    if (!(field in sent) && before[field] !== undefined && body[field] !== before[field])
      problems.push(`${label}: ${field} changed though the body did not send it`)
  return problems
}

/** A 2xx update of one item of the caller's list: it becomes the answer; `exclusive`, the others lose what it sets. */
const applyUpdate = (judged: Judged, model: UserModel, touched: Touch, body: unknown): ReadonlyArray<string> => {
  const item = itemOf(touched)
  const list = item === undefined ? undefined : model.records[item.record]
  if (item === undefined || !isRecord(body)) return []
  const label = judged.operation?.operationId ?? item.record
  if (!isList(list)) return []
  const current = list.data.find((entry) => entry[KEY] === body[KEY])
  if (current === undefined) return [`${label}: a 2xx for ${String(body[KEY])}, which the caller does not have`]
  const { sets, exclusive } = setsOf(touched)
  const problems = timestampProblems(label, current, body, Object.keys(sets))
  const taken = (entry: Item): boolean =>
    exclusive && Object.entries(sets).some(([field, value]) => entry[field] === value)
  model.records[item.record] = {
    ...list,
    data: list.data.map((entry) =>
      entry[KEY] === body[KEY]
        ? body
        : taken(entry)
          ? {
              ...entry,
              ...Object.fromEntries(Object.entries(sets).map(([field, value]) => [field, !value])),
              updated_at: undefined
            }
          : entry
    )
  }
  return problems
}

/** A 2xx delete of one item of the caller's list: it is gone (a second delete, or an update, is then 404). */
const applyDelete = (judged: Judged, model: UserModel, touched: Touch): ReadonlyArray<string> => {
  const item = itemOf(touched)
  const list = item === undefined ? undefined : model.records[item.record]
  if (item === undefined || !isList(list) || judged.target.kind !== "route") return []
  const id = judged.target.params[item.param]
  if (!list.data.some((entry) => entry[KEY] === id))
    return [`${judged.operation?.operationId ?? item.record}: a 2xx for ${String(id)}, which the caller does not have`]
  model.records[item.record] = { ...list, data: list.data.filter((entry) => entry[KEY] !== id) }
  return []
}

const parsed = (response: RawResponse): unknown => {
  if (response.body.length === 0) return undefined
  try {
    return JSON.parse(response.body.toString("utf8"))
  } catch {
    return undefined
  }
}

/**
 * Applies one answered request of a user's lane to that user's model, in the lane's order, and reports where the API
 * contradicts it: a read that shows a change no 2xx made, a 2xx write that changes what it must not.
 */
export const applyToModel = (judged: Judged, model: UserModel, response: RawResponse): ReadonlyArray<string> => {
  const { operation, fuzz } = judged
  if (operation === undefined || response.status < 200 || response.status > 299 || fuzz.method === "HEAD") return []
  const body = parsed(response)
  const read = recordRead(operation)
  if (USER_READS.includes(operation) && read !== undefined) {
    // A page other than the first (a query) answers other records: the model knows the first page only.
    if (operation.query !== undefined && (rawQuery(fuzz.path) ?? "") !== "") return []
    return body === undefined ? [] : checkRead(model, read, body, "read")
  }
  if (operation.method === "GET") return []
  // A write may record an event (docs/api.md, "Events"): what no operation writes is unknown until read again.
  for (const name of Object.keys(model.records)) if (!WRITTEN.has(name)) model.records[name] = undefined
  const touched: RecordsTouched = operation.records
  if (touched === "none") return []
  if ("merges" in touched) return applyMerge(judged, model, touched.merges, body)
  if ("updates" in touched) return applyUpdate(judged, model, touched, body)
  if ("deletes" in touched) return applyDelete(judged, model, touched)
  // A new record of the caller's: a list of them shows it somewhere, known again once read.
  if ("creates" in touched && touched.creates in model.records) model.records[touched.creates] = undefined
  return []
}

/**
 * The model a batch starts from: what each of the user's reads answered (`reads`, by record), and where the API
 * contradicts the seed already (a list holding records that are not the caller's).
 */
export const modelFrom = (
  fixture: FuzzFixture,
  user: FuzzUser,
  reads: Readonly<Record<string, unknown>>
): { readonly model: UserModel; readonly problems: ReadonlyArray<string> } => {
  const problems: Array<string> = []
  for (const [record, body] of Object.entries(reads)) {
    const own = idsOwnedBy(fixture.seed, user.id, record)
    if (isList(body) && Object.hasOwn(fixture.seed, record))
      for (const entry of body.data)
        if (!own.includes(String(entry[KEY]))) problems.push(`${record}: ${String(entry[KEY])} is not ${user.id}'s`)
  }
  return { model: { records: { ...reads } }, problems }
}

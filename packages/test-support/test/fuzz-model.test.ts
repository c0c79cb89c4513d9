import { allowHeader, defineOperation, operations } from "@accord/contract"
import type { RawResponse } from "@accord/conformance"
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { makeFuzzFixture } from "../src/fuzz/fixture.js"
import type { FuzzCase } from "../src/fuzz/fuzz-case.js"
import { applyToModel, declaredOutcome, declaredSuccess, type UserModel } from "../src/fuzz/models.js"
import type { Judged } from "../src/fuzz/oracle.js"
import type { ContractOperation, FuzzRoute } from "../src/fuzz/targets.js"

// Issue 38: the fuzz's model of stored data follows from what each operation declares it does to records (`records`),
// not from code written per operation. These cases feed it answers directly, a DELETE and a read of one item
// included, which the contract does not have yet: what a new operation of either shape gets without a hand edit.

const fixture = makeFuzzFixture("fuzz-model")
const user = fixture.a
const [first = "", second = "", third = ""] = user.methods

/** The shapes the contract does not have, declared as an operation would be. */
const deleteMethod = defineOperation({
  operationId: "deletePaymentMethod",
  method: "DELETE",
  path: "/payments/v1/payment-methods/{id}/",
  access: "user",
  params: Schema.Struct({ id: Schema.String }),
  success: { status: 204 },
  errors: ["NotFound"],
  records: { deletes: "payment_methods", item: "id" }
}) as unknown as ContractOperation
const readMethod = defineOperation({
  operationId: "getPaymentMethod",
  method: "GET",
  path: "/payments/v1/payment-methods/{id}/",
  access: "user",
  params: Schema.Struct({ id: Schema.String }),
  success: { status: 200, schema: Schema.Struct({ id: Schema.String, is_default: Schema.Boolean }) },
  errors: ["NotFound"],
  records: { reads: "payment_methods", item: "id" }
}) as unknown as ContractOperation
const setDefault = operations.setDefaultPaymentMethod as ContractOperation
const updatePreferences = operations.updateLanguagePreferences as ContractOperation

const route = (operation: ContractOperation): FuzzRoute => ({
  path: operation.path,
  exact: false,
  operations: [operation],
  allow: allowHeader([operation.method])
})

/** A request of user A to `operation`, its path parameter `id` (when it has one), with `body`, as the oracle reads it. */
const judged = (operation: ContractOperation, model: UserModel, id?: string, body?: unknown): Judged => {
  const fuzz: FuzzCase = {
    method: operation.method,
    path: `/api${operation.path.replace("{id}", id ?? "")}`,
    actor: "a",
    authorization: `Bearer ${user.token}`,
    contentType: "application/json",
    json: true,
    body: body === undefined ? undefined : JSON.stringify(body),
    transferEncoding: undefined,
    syntax: "object",
    requestId: undefined,
    secrets: []
  }
  return {
    fixture,
    fuzz,
    target: { kind: "route", route: route(operation), params: id === undefined ? {} : { id } },
    operation,
    caller: user,
    model,
    outcomes: [],
    reachesUseCase: true
  }
}

const answer = (status: number, body?: unknown): RawResponse => ({
  status,
  headers: {},
  body: Buffer.from(body === undefined ? "" : JSON.stringify(body))
})

const method = (id: string, isDefault: boolean, updatedAt = "2030-01-01T00:00:00.000Z") => ({
  id,
  is_default: isDefault,
  created_at: "2030-01-01T00:00:00.000Z",
  updated_at: updatedAt
})

const modelWith = (...methods: ReadonlyArray<ReturnType<typeof method>>): UserModel => ({
  records: { payment_methods: { data: methods } }
})

describe("the fuzz's model, derived from the operations' declared records", () => {
  it("a delete of one of the caller's items passes, then that item is gone: deleting or reading it again is 404", () => {
    const model = modelWith(method(first, true), method(second, false))
    const request = judged(deleteMethod, model, first)
    expect(declaredOutcome(request, model)).toStrictEqual({ answers: [], passes: true })
    expect(applyToModel(request, model, answer(204))).toStrictEqual([])
    expect(model.records["payment_methods"]).toStrictEqual({ data: [method(second, false)] })
    for (const operation of [deleteMethod, readMethod, setDefault])
      expect(declaredOutcome(judged(operation, model, first), model), operation.operationId).toStrictEqual({
        answers: [{ status: 404, code: "not_found" }],
        passes: false
      })
  })

  it("another user's item, or none, is 404; an unknown list allows either; no model is the seed's", () => {
    const model = modelWith(method(first, true))
    const notFound = { answers: [{ status: 404, code: "not_found" }], passes: false }
    expect(declaredOutcome(judged(deleteMethod, model, fixture.b.methods[0]), model)).toStrictEqual(notFound)
    expect(declaredOutcome(judged(deleteMethod, model, "nobody's"), model)).toStrictEqual(notFound)
    const unknown: UserModel = { records: { payment_methods: undefined } }
    expect(declaredOutcome(judged(deleteMethod, unknown, first), unknown)).toStrictEqual({
      answers: [{ status: 404, code: "not_found" }],
      passes: true
    })
    expect(declaredOutcome(judged(deleteMethod, model, third), undefined)).toStrictEqual({ answers: [], passes: true })
  })

  it("a 2xx delete of an item the model says the caller does not have is a violation", () => {
    const model = modelWith(method(second, false))
    expect(applyToModel(judged(deleteMethod, model, first), model, answer(204))).toStrictEqual([
      `deletePaymentMethod: a 2xx for ${first}, which the caller does not have`
    ])
  })

  it("a read of one item answers that item, as the caller's list shows it", () => {
    const model = modelWith(method(first, true), method(second, false))
    expect(declaredSuccess(judged(readMethod, model, second), method(second, false))).toStrictEqual([])
    expect(declaredSuccess(judged(readMethod, model, second), method(first, true)).join("\n")).toMatch(
      /answered .* not the item named in the path/
    )
    expect(declaredSuccess(judged(readMethod, model, second), method(second, true)).join("\n")).toMatch(
      /the list shows/
    )
  })

  it("an exclusive update takes what it sets from the caller's other items; repeating it changes nothing", () => {
    const model = modelWith(method(first, true), method(second, false))
    const chosen = method(second, true, "2030-01-01T00:00:05.000Z")
    expect(applyToModel(judged(setDefault, model, second), model, answer(200, chosen))).toStrictEqual([])
    expect(model.records["payment_methods"]).toStrictEqual({
      data: [{ ...method(first, false), updated_at: undefined }, chosen]
    })
    const moved = { ...chosen, updated_at: "2030-01-01T00:00:09.000Z" }
    expect(applyToModel(judged(setDefault, model, second), model, answer(200, moved))).toStrictEqual([
      "setDefaultPaymentMethod: updated_at changed though no value did"
    ])
    expect(declaredSuccess(judged(setDefault, model, second), { ...chosen, is_default: false })).toStrictEqual([
      "setDefaultPaymentMethod: is_default is not true"
    ])
  })

  it("a merge keeps what the body leaves out, and the record's id and created_at", () => {
    const before = {
      id: 1,
      language: "en",
      timezone: 0,
      mfa_enabled: false,
      created_at: "2030-01-01T00:00:00.000Z",
      updated_at: "2030-01-01T00:00:00.000Z"
    }
    const model: UserModel = { records: { preferences: before } }
    const after = { ...before, timezone: 60, mfa_enabled: true, updated_at: "2030-01-01T00:00:01.000Z" }
    expect(
      applyToModel(judged(updatePreferences, model, undefined, { timezone: 60 }), model, answer(200, after))
    ).toStrictEqual(["updateLanguagePreferences: mfa_enabled changed though the body did not send it"])
    expect(model.records["preferences"]).toStrictEqual(after)
    const renumbered = { ...after, id: 2, timezone: 30, updated_at: "2030-01-01T00:00:02.000Z" }
    expect(
      applyToModel(judged(updatePreferences, model, undefined, { timezone: 30 }), model, answer(200, renumbered))
    ).toStrictEqual(["updateLanguagePreferences: id changed"])
  })

  it("a record no operation writes (the events) is unknown after any write", () => {
    const model: UserModel = { records: { ...modelWith(method(first, true)).records, events: { data: [] } } }
    applyToModel(judged(deleteMethod, model, first), model, answer(204))
    expect(model.records["events"]).toBeUndefined()
  })
})

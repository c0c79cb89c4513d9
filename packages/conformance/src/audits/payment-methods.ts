import { withoutSlash } from "../paths.js"
import type { RawRequest } from "../raw-http.js"
import { equal, isTrue } from "./assert.js"
import { audit, codePointOrder, type Audit } from "./audit.js"
import {
  bearer,
  defaults,
  expectJsonSuccess,
  expectPaymentMethodList,
  expectProblem,
  INVALID_JSON,
  jsonHeaders,
  listPaymentMethods,
  NOT_FOUND,
  pause,
  paymentMethod,
  setDefault,
  text,
  unknownId,
  validation,
  type FieldErrors
} from "./responses.js"

// docs/api.md, "Set default payment method (PUT)" and the list. The audits that depend on which method is the
// default make one the default first, so they hold whatever ran before them.

export const paymentMethodAudits: ReadonlyArray<Audit> = [
  audit({
    id: "ACC-payment-methods-list-order",
    level: "MUST",
    title: "the list holds exactly the user's methods in code-point order of id, at most one of them the default",
    operations: ["listPaymentMethods"],
    run: async (t) => {
      const list = expectPaymentMethodList("GET list", await listPaymentMethods(t, t.userToken))
      equal(
        list.map((method) => method.id),
        t.userPaymentMethods,
        "GET list: the user's ids in code-point order"
      )
      isTrue(defaults(list).length <= 1, `GET list: at most one default, got ${JSON.stringify(defaults(list))}`)
    }
  }),

  audit({
    id: "ACC-payment-methods-seeded-default",
    level: "MUST",
    title: "a new user's list holds its seeded methods in code-point order, with the seeded default",
    needs: ["seeded"],
    operations: ["listPaymentMethods"],
    run: async (t) => {
      const listUser = t.seeded?.listUser
      const list = expectPaymentMethodList("GET list", await listPaymentMethods(t, listUser?.token ?? ""))
      equal(
        list.map((method) => method.id),
        listUser?.paymentMethods,
        "GET list: the seeded ids in code-point order"
      )
      equal(defaults(list), [listUser?.defaultPaymentMethod], "GET list: the seeded default")
    }
  }),

  audit({
    id: "ACC-payment-methods-set-default",
    level: "MUST",
    title: "setting a default: 200 with is_default true; the previous default loses it and gets a new updated_at",
    operations: ["setDefaultPaymentMethod", "listPaymentMethods"],
    run: async (t) => {
      const user = t.userToken
      const previous = t.userPaymentMethods[0] ?? ""
      const target = t.userPaymentMethods.at(-1) ?? ""
      expectJsonSuccess("PUT the first method as the default", await setDefault(t, user, previous), 200)
      const before = expectPaymentMethodList("list before", await listPaymentMethods(t, user))
      await pause(5)
      const res = await setDefault(t, user, target)
      const set = paymentMethod("PUT without a body", expectJsonSuccess("PUT without a body", res, 200))
      const targetBefore = before.find((method) => method.id === target)
      equal(set.id, target, "PUT without a body: id")
      equal(set.is_default, true, "PUT without a body: is_default")
      equal(set.created_at, targetBefore?.created_at, "PUT without a body: created_at")
      const after = expectPaymentMethodList("list after", await listPaymentMethods(t, user))
      equal(
        after.map((method) => method.id),
        t.userPaymentMethods,
        "list after: ids"
      )
      equal(defaults(after), [target], "list after: the default")
      equal(
        after.find((method) => method.id === target),
        set,
        "list after: the method as PUT returned it"
      )
      const previousBefore = before.find((method) => method.id === previous)
      const previousAfter = after.find((method) => method.id === previous)
      equal(previousAfter?.is_default, false, "the previous default: is_default")
      equal(previousAfter?.created_at, previousBefore?.created_at, "the previous default: created_at")
      isTrue(
        (previousAfter?.updated_at ?? "") > (previousBefore?.updated_at ?? ""),
        "the previous default's updated_at moved"
      )
      for (const id of t.userPaymentMethods.filter((id) => id !== target && id !== previous)) {
        equal(
          after.find((method) => method.id === id),
          before.find((method) => method.id === id),
          `${id} unchanged`
        )
      }
    }
  }),

  audit({
    id: "ACC-payment-methods-set-default-repeat",
    level: "MUST",
    title: "repeating set-default is a no-op with the same body, for every accepted body form and both path forms",
    needs: ["raw-http"],
    operations: ["setDefaultPaymentMethod", "listPaymentMethods"],
    run: async (t) => {
      const user = t.userToken
      const target = t.userPaymentMethods.at(-1) ?? ""
      const path = t.paths.paymentMethod(target)
      const first = await setDefault(t, user, target)
      expectJsonSuccess("PUT again", first, 200)
      const forms: ReadonlyArray<[string, RawRequest]> = [
        ["{}", { method: "PUT", path, headers: jsonHeaders(user), body: "{}" }],
        ['{"is_default":true}', { method: "PUT", path, headers: jsonHeaders(user), body: '{"is_default":true}' }],
        [
          "charset and spaces",
          {
            method: "PUT",
            path,
            headers: jsonHeaders(user, "application/json; charset=utf-8"),
            body: ' { "is_default" : true } '
          }
        ],
        ["zero bytes, application/json", { method: "PUT", path, headers: jsonHeaders(user), body: "" }],
        ["zero bytes, text/plain", { method: "PUT", path, headers: jsonHeaders(user, "text/plain"), body: "" }],
        ["zero bytes, no Content-Type", { method: "PUT", path, headers: bearer(user), body: "" }],
        ["chunked {}", { method: "PUT", path, headers: jsonHeaders(user), chunks: ["{", "}"] }],
        ["no trailing slash", { method: "PUT", path: withoutSlash(path), headers: bearer(user) }],
        ["Token scheme", { method: "PUT", path, headers: { Authorization: `Token ${user}` } }]
      ]
      for (const [label, request] of forms) {
        const res = await t.send(request)
        expectJsonSuccess(`PUT ${label}`, res, 200)
        equal(text(res), text(first), `PUT ${label}: same body`)
      }
      const list = expectPaymentMethodList("list", await listPaymentMethods(t, user))
      equal(defaults(list), [target], "list: the default")
    }
  }),

  audit({
    id: "ACC-payment-methods-field-errors",
    level: "MUST",
    title: "field errors on set-default leave the default where it was",
    operations: ["setDefaultPaymentMethod", "listPaymentMethods"],
    run: async (t) => {
      const user = t.userToken
      const path = t.paths.paymentMethod(t.userPaymentMethods[1] ?? "")
      const before = await listPaymentMethods(t, user)
      const cases: ReadonlyArray<[string, FieldErrors]> = [
        ['{"is_default":false}', [["/is_default", "not_allowed"]]],
        ['{"is_default":"true"}', [["/is_default", "invalid_type"]]],
        ['{"is_default":null}', [["/is_default", "invalid_type"]]],
        ['{"is_default":1}', [["/is_default", "invalid_type"]]],
        ['{"other":1}', [["/other", "unknown_field"]]],
        ['{"is_default":true,"id":"x"}', [["/id", "unknown_field"]]],
        [
          '{"z":1,"is_default":false}',
          [
            ["/is_default", "not_allowed"],
            ["/z", "unknown_field"]
          ]
        ]
      ]
      for (const [body, errors] of cases) {
        expectProblem(
          `PUT ${body}`,
          await t.send({ method: "PUT", path, headers: jsonHeaders(user), body }),
          validation(errors)
        )
      }
      expectProblem(
        "PUT with invalid JSON",
        await t.send({ method: "PUT", path, headers: jsonHeaders(user), body: '{"is_default":true' }),
        INVALID_JSON
      )
      equal(text(await listPaymentMethods(t, user)), text(before), "list unchanged")
    }
  }),

  audit({
    id: "ACC-payment-methods-ownership",
    level: "MUST",
    title: "another user's method or an unknown one is 404 not_found and nothing changes",
    operations: ["setDefaultPaymentMethod", "listPaymentMethods"],
    run: async (t) => {
      const [otherDefault = ""] = t.otherUserPaymentMethods
      expectJsonSuccess(
        "the other user makes its first method the default",
        await setDefault(t, t.otherUserToken, otherDefault),
        200
      )
      const userBefore = await listPaymentMethods(t, t.userToken)
      const otherBefore = await listPaymentMethods(t, t.otherUserToken)
      for (const id of t.userPaymentMethods) {
        expectProblem(`the other user PUTs the user's ${id}`, await setDefault(t, t.otherUserToken, id), NOT_FOUND)
      }
      for (const id of t.otherUserPaymentMethods) {
        expectProblem(`the user PUTs the other user's ${id}`, await setDefault(t, t.userToken, id), NOT_FOUND)
      }
      expectProblem(
        "the user PUTs an unknown method",
        await t.send({
          method: "PUT",
          path: t.paths.paymentMethod(unknownId(t)),
          headers: jsonHeaders(t.userToken),
          body: '{"is_default":true}'
        }),
        NOT_FOUND
      )
      equal(text(await listPaymentMethods(t, t.userToken)), text(userBefore), "the user's list unchanged")
      equal(text(await listPaymentMethods(t, t.otherUserToken)), text(otherBefore), "the other user's list unchanged")
      const otherList = expectPaymentMethodList("the other user's list", otherBefore)
      equal(
        otherList.map((method) => [method.id, method.is_default]),
        t.otherUserPaymentMethods.map((id) => [id, id === otherDefault]),
        "the other user's list"
      )
    }
  }),

  audit({
    id: "ACC-payment-methods-empty-list",
    level: "MUST",
    title: 'a user without payment methods gets {"data":[]}',
    needs: ["seeded"],
    operations: ["listPaymentMethods"],
    run: async (t) => {
      const user = t.seeded?.userWithoutPaymentMethods ?? ""
      const list = expectPaymentMethodList("empty list", await listPaymentMethods(t, user))
      equal(list, [], "empty list")
      equal(text(await listPaymentMethods(t, user)), '{"data":[]}', "empty list: body")
    }
  }),

  audit({
    id: "ACC-payment-methods-one-default-under-concurrency",
    level: "MUST",
    title: "200 concurrent set-default requests over the user's methods: all 200, then exactly one default",
    timeoutMs: 30_000,
    operations: ["setDefaultPaymentMethod", "listPaymentMethods"],
    run: async (t) => {
      const user = t.userToken
      const methods = t.userPaymentMethods
      const requests = Array.from({ length: 200 }, (_, index) => {
        const id = methods[index % methods.length] ?? ""
        const path = t.paths.paymentMethod(id)
        const request: RawRequest =
          index % 2 === 0
            ? { method: "PUT", path, headers: bearer(user), timeoutMs: 15_000 }
            : { method: "PUT", path, headers: jsonHeaders(user), body: '{"is_default":true}', timeoutMs: 15_000 }
        return { id, request }
      })
      const responses = await Promise.all(requests.map(({ request }) => t.send(request)))
      responses.forEach((res, index) => {
        const id = requests[index]?.id ?? ""
        const method = paymentMethod(
          `concurrent PUT ${id}`,
          expectJsonSuccess(`concurrent PUT ${id} #${index}`, res, 200)
        )
        equal(method.id, id, `concurrent PUT ${id} #${index}: id`)
        equal(method.is_default, true, `concurrent PUT ${id} #${index}: is_default`)
      })
      const list = expectPaymentMethodList("list after the burst", await listPaymentMethods(t, user))
      equal(
        list.map((method) => method.id),
        codePointOrder(methods),
        "list after the burst: ids"
      )
      equal(defaults(list).length, 1, "exactly one default")
    }
  })
]

import type { SeedInput } from "@accord/domain"
import { randomBytes } from "node:crypto"
import { randomSuffix, randomToken } from "../paths.js"
import { auditTarget, type AuditTarget, type AuditTargetOptions } from "./audit.js"

/**
 * A seed for a store the runner starts itself, and the target (with its `SeededFacts`) once the server listens. The
 * server must do CORS for `corsOrigin` (`corsOrigins: "*"`, or a list holding it), which the CORS audits call from.
 */
export interface AuditFixture {
  readonly seed: SeedInput
  readonly corsOrigin: string
  /**
   * `url`: the API's base URL, mount prefix included; `transport`: how to reach it, when not over `node:http` (a
   * `fetch`, such as a fetch handler called in process, or a `send` over HTTP/2).
   */
  readonly target: (url: string, transport?: Pick<AuditTargetOptions, "send" | "fetch" | "exchange">) => AuditTarget
}

/** The page origin the CORS audits call from, in a fixture's target (a reserved name: RFC 2606). */
const AUDIT_CORS_ORIGIN = "https://app.example"

interface Credential {
  readonly id: string
  readonly token: string
}

/**
 * Users, a client and payment methods for one run of the audits, every id and token random so that runs also share
 * a database. Payment method ids start with characters whose code-point order a locale collation would not give
 * ("-" < "0" < "9" < "A" < "B" < "Z" < "_" < "a": a collation puts "a" before "B" and ignores "-" and "_"), and are
 * seeded out of order: the list must sort, not echo insertion order.
 */
export const makeAuditFixture = (): AuditFixture => {
  const run = randomSuffix()
  const credential = (name: string): Credential => ({ id: `conf_${name}_${run}`, token: randomToken(`${name}-${run}`) })
  const user = credential("user")
  const other = credential("other")
  const client = credential("client")
  const newForGet = credential("new-get")
  const newForEmptyPut = credential("new-put-empty")
  const newForPut = credential("new-put")
  const listUser = credential("list")
  const withoutMethods = credential("bare")
  // 512 characters, the longest token the grammar allows, then padding that belongs to the token.
  const padded = { id: `conf_padded_${run}`, token: `${randomBytes(384).toString("base64url")}==` }
  // Ten methods: the concurrency audit spreads 200 requests over them.
  const userMethods = ["-", "0", "9", "A", "B", "Z", "_", "a", "m", "z"].map((first) => `${first}u${run}`)
  const listMethods = ["-", "0", "B", "_", "a"].map((first) => `${first}l${run}`)
  const listDefault = `Bl${run}`
  const otherMethod = `o${run}`
  const methodsOf = (owner: Credential, ids: ReadonlyArray<string>, defaultId: string) =>
    [...ids].reverse().map((id) => ({ id, user_id: owner.id, is_default: id === defaultId }))
  const seed: SeedInput = {
    users: [user, other, newForGet, newForEmptyPut, newForPut, listUser, withoutMethods, padded].map(
      ({ id, token }) => ({ id, token })
    ),
    clients: [client],
    payment_methods: [
      ...methodsOf(user, userMethods, `Bu${run}`),
      ...methodsOf(listUser, listMethods, listDefault),
      { id: otherMethod, user_id: other.id, is_default: true }
    ]
  }
  return {
    seed,
    corsOrigin: AUDIT_CORS_ORIGIN,
    target: (url, transport = {}) =>
      auditTarget({
        ...transport,
        url,
        userToken: user.token,
        otherUserToken: other.token,
        clientToken: client.token,
        userPaymentMethods: userMethods,
        otherUserPaymentMethods: [otherMethod],
        run,
        corsOrigin: AUDIT_CORS_ORIGIN,
        seeded: {
          newUserForGet: newForGet.token,
          newUserForEmptyPut: newForEmptyPut.token,
          newUserForPut: newForPut.token,
          listUser: { token: listUser.token, paymentMethods: listMethods, defaultPaymentMethod: listDefault },
          userWithoutPaymentMethods: withoutMethods.token,
          paddedTokenUser: padded.token
        }
      })
  }
}

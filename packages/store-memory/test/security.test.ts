import { createHash, timingSafeEqual } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
// vi from "vitest" itself: vitest hoists vi.mock only when it comes from there.
import { vi } from "vitest"
import { Effect, HashMap, Layer, Redacted, Ref, Schema } from "effect"
import { createPublicPlanEntry, Email, PasswordHasher, PlanEntries, Seed, Unauthenticated } from "@accord/domain"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { makeAuthenticator } from "../src/authenticator.js"
import { makePlanEntries } from "../src/plan-entries.js"
import { makeMemoryState, type MemoryState } from "../src/state.js"
import { loadSeedInto } from "../src/store-admin.js"

// The store's only constant-time primitive, spied on (and still doing its work) to see that authentication uses it.
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>()
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) }
})

// docs/SECURITY.md: what the memory store keeps of credentials and passwords, read from its state directly.

const userToken = "security-user-token.4f2a9c"
const clientToken = "security-client-token.8e1b07"
const seed = Schema.decodeUnknownSync(Seed)({
  users: [{ id: "u_security", token: userToken }],
  clients: [{ id: "security_client", token: clientToken }],
  payment_methods: [{ id: "pm_security", user_id: "u_security", is_default: true }]
})
const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

/** Every value the state holds, as JSON text: whatever a memory dump of the store would show. */
const dump = (state: MemoryState): string =>
  JSON.stringify(
    Effect.runSync(
      Effect.all({
        planEntries: Effect.map(Ref.get(state.planEntries), (map) => [...HashMap.entries(map)]),
        preferences: Effect.map(Ref.get(state.preferences), (value) => [...HashMap.entries(value.byUser)]),
        paymentMethods: Effect.map(Ref.get(state.paymentMethods), (value) => [
          ...HashMap.entries(value.byUser),
          ...HashMap.entries(value.owners)
        ]),
        credentials: Effect.map(Ref.get(state.credentials), (map) => [...HashMap.entries(map)])
      })
    )
  )

const seededState = (): MemoryState => {
  const state = Effect.runSync(makeMemoryState)
  Effect.runSync(loadSeedInto(state, seed))
  return state
}

describe("store-memory security", () => {
  it("keeps tokens only as SHA-256 digests: no seeded token anywhere in its state", () => {
    const state = seededState()
    const text = dump(state)
    for (const token of [userToken, clientToken]) {
      expect(text).not.toContain(token)
      expect(text).toContain(sha256(token))
    }
    const stored = [...HashMap.values(Effect.runSync(Ref.get(state.credentials)))]
    expect(stored.map((credential) => Object.keys(credential).sort())).toEqual([
      ["digest", "digestBytes", "principal"],
      ["digest", "digestBytes", "principal"]
    ])
    // The bytes are the digest itself, not the token.
    for (const credential of stored) expect(Buffer.from(credential.digestBytes).toString("hex")).toBe(credential.digest)
  })

  it("compares the stored digest with timingSafeEqual when a token is known", async () => {
    const authenticator = makeAuthenticator(seededState())
    const spy = vi.mocked(timingSafeEqual)
    spy.mockClear()
    const principal = await Effect.runPromise(authenticator.authenticate(userToken))
    expect(principal).toMatchObject({ _tag: "User", userId: "u_security" })
    expect(spy).toHaveBeenCalledTimes(1)
    const [left, right] = spy.mock.calls[0] ?? []
    expect([left?.byteLength, right?.byteLength]).toEqual([32, 32])
    // An unknown token's digest finds no entry: there is nothing to compare, and the answer is the same refusal.
    const refused = await Effect.runPromise(Effect.flip(authenticator.authenticate(`${userToken}x`)))
    expect(refused).toEqual(new Unauthenticated({ reason: "invalid_token" }))
  })

  it("stores passwords only as scrypt hashes, each with its own random salt", async () => {
    const state = seededState()
    const services = Layer.merge(
      Layer.succeed(PlanEntries, makePlanEntries(state)),
      ScryptPasswordHasherLive(testScryptCost)
    )
    const password = "the same password for both"
    const hashes = await Effect.runPromise(
      Effect.gen(function* () {
        yield* createPublicPlanEntry({ email: Email.make("first@example.com"), password: Redacted.make(password) })
        yield* createPublicPlanEntry({ email: Email.make("second@example.com"), password: Redacted.make(password) })
        const entries = [...HashMap.values(yield* Ref.get(state.planEntries))]
        const hasher = yield* PasswordHasher
        for (const entry of entries)
          expect(yield* hasher.verify(Redacted.make(password), entry.passwordHash)).toBe(true)
        return entries.map((entry) => entry.passwordHash)
      }).pipe(Effect.provide(services))
    )
    expect(hashes).toHaveLength(2)
    const parts = hashes.map((hash) => hash.split("$"))
    for (const [scheme, N, r, p, salt, key] of parts) {
      expect([scheme, N, r, p]).toEqual([
        "scrypt",
        String(testScryptCost.N),
        String(testScryptCost.r),
        String(testScryptCost.p)
      ])
      expect(Buffer.from(salt ?? "", "base64")).toHaveLength(16)
      expect(Buffer.from(key ?? "", "base64")).toHaveLength(32)
    }
    // Same password, different salts, so different keys: equal passwords cannot be spotted in a dump.
    expect(parts[0]?.[4]).not.toBe(parts[1]?.[4])
    expect(parts[0]?.[5]).not.toBe(parts[1]?.[5])
    expect(dump(state)).not.toContain(password)
  })
})

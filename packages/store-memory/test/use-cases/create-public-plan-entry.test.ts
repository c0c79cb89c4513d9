import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { PasswordHasher, PlanEntries, ValidationError } from "@accord/domain"
import { issuesOf, TestServices, type Issue, fromWire } from "./support.js"

const PASSWORD = "correct horse battery"

const create = (body: unknown) => fromWire.createPublicPlanEntry(body).pipe(Effect.provide(TestServices))

const storedFor = (emailKey: string) => Effect.flatMap(PlanEntries, (entries) => entries.findByEmailKey(emailKey))

/** 64-character local part, 189-character domain: 254 in all. */
const LOCAL_64 = "l".repeat(64)
const DOMAIN_189 = `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(61)}`
const EMAIL_254 = `${LOCAL_64}@${DOMAIN_189}`

describe("createPublicPlanEntry: email", () => {
  it.effect.each([
    ["John.Doe@EXAMPLE.Com", "John.Doe@example.com"],
    ["  ann@example.com\t\r\n", "ann@example.com"],
    ["\f\u0020x@y.io ", "x@y.io"],
    ["o'brien+tag!#$%&*/=?^_`{|}~-@mail.example.org", "o'brien+tag!#$%&*/=?^_`{|}~-@mail.example.org"],
    ["first.middle.last@sub-domain.Example.CO", "first.middle.last@sub-domain.example.co"],
    ["a@1.2.3a", "a@1.2.3a"],
    ["a@x.c0m", "a@x.c0m"],
    [EMAIL_254, EMAIL_254],
    [` ${EMAIL_254} `, EMAIL_254],
    [`a@${"d".repeat(63)}.com`, `a@${"d".repeat(63)}.com`]
  ])("accepts %j as %j (trimmed, domain lower-cased)", ([sent, expected]) =>
    Effect.gen(function* () {
      expect(yield* create({ email: sent, password: PASSWORD })).toEqual({ email: expected })
    })
  )

  const cases: ReadonlyArray<readonly [label: string, email: unknown, issue: Issue]> = [
    ["null", null, ["/email", "invalid_type"]],
    ["a number", 42, ["/email", "invalid_type"]],
    ["an array", ["a@b.co"], ["/email", "invalid_type"]],
    ["an object", { address: "a@b.co" }, ["/email", "invalid_type"]],
    ["empty", "", ["/email", "too_short"]],
    ["only ASCII whitespace", " \t\n", ["/email", "too_short"]],
    ["255 characters", `${LOCAL_64}@${DOMAIN_189}c`, ["/email", "too_long"]],
    ["255 characters of garbage", "@".repeat(255), ["/email", "too_long"]],
    ["a 65-character local part", `${"l".repeat(65)}@example.com`, ["/email", "invalid_format"]],
    ["no @", "example.com", ["/email", "invalid_format"]],
    ["two @", "a@b@example.com", ["/email", "invalid_format"]],
    ["an empty local part", "@example.com", ["/email", "invalid_format"]],
    ["a doubled dot", "a..b@example.com", ["/email", "invalid_format"]],
    ["a leading dot", ".ab@example.com", ["/email", "invalid_format"]],
    ["a trailing dot in the local part", "ab.@example.com", ["/email", "invalid_format"]],
    ["a quoted local part", '"john doe"@example.com', ["/email", "invalid_format"]],
    ["a quoted local part without spaces", '"john"@example.com', ["/email", "invalid_format"]],
    ["a space inside", "john doe@example.com", ["/email", "invalid_format"]],
    ["a single-label domain", "a@localhost", ["/email", "invalid_format"]],
    ["a trailing dot in the domain", "a@example.com.", ["/email", "invalid_format"]],
    ["an empty label", "a@example..com", ["/email", "invalid_format"]],
    ["a last label without a letter", "a@example.123", ["/email", "invalid_format"]],
    ["an IP literal", "a@[127.0.0.1]", ["/email", "invalid_format"]],
    ["a label starting with -", "a@-example.com", ["/email", "invalid_format"]],
    ["a label ending with -", "a@example-.com", ["/email", "invalid_format"]],
    ["a 64-character label", `a@${"d".repeat(64)}.com`, ["/email", "invalid_format"]],
    ["an underscore in the domain", "a@ex_ample.com", ["/email", "invalid_format"]],
    ["a non-ASCII local part", "jöhn@example.com", ["/email", "invalid_format"]],
    ["a non-ASCII domain", "a@exämple.com", ["/email", "invalid_format"]],
    ["a non-breaking space around it (not ASCII whitespace)", "\u00a0a@example.com", ["/email", "invalid_format"]]
  ]
  it.effect.each(cases)("rejects %s", ([, email, expected]) =>
    Effect.gen(function* () {
      expect(yield* issuesOf(create({ email, password: PASSWORD }))).toEqual([expected])
    })
  )
})

describe("createPublicPlanEntry: password", () => {
  it.effect.each([
    ["8 characters", "12345678"],
    ["128 characters", "p".repeat(128)],
    ["8 emoji (16 UTF-16 units)", "😀".repeat(8)],
    ["128 emoji (256 UTF-16 units)", "😀".repeat(128)],
    ["surrounding spaces (kept, not trimmed)", "  pass  "]
  ])("accepts %s", ([, password]) =>
    Effect.gen(function* () {
      expect(yield* create({ email: "a@example.com", password })).toEqual({ email: "a@example.com" })
    })
  )

  const cases: ReadonlyArray<readonly [label: string, password: unknown, issue: Issue]> = [
    ["null", null, ["/password", "invalid_type"]],
    ["a number", 12345678, ["/password", "invalid_type"]],
    ["a boolean", true, ["/password", "invalid_type"]],
    ["empty", "", ["/password", "too_short"]],
    ["7 characters", "1234567", ["/password", "too_short"]],
    ["7 emoji (14 UTF-16 units)", "😀".repeat(7), ["/password", "too_short"]],
    ["129 characters", "p".repeat(129), ["/password", "too_long"]],
    ["129 emoji", "😀".repeat(129), ["/password", "too_long"]]
  ]
  it.effect.each(cases)("rejects %s", ([, password, expected]) =>
    Effect.gen(function* () {
      expect(yield* issuesOf(create({ email: "a@example.com", password }))).toEqual([expected])
    })
  )

  it.effect("an error never carries the password", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(create({ email: "a@example.com", password: "s3cret!" }))
      expect(JSON.stringify(error)).not.toContain("s3cret!")
      expect(String(error)).not.toContain("s3cret!")
    })
  )
})

describe("createPublicPlanEntry: body", () => {
  it.effect("missing fields are required, one entry each, sorted by pointer", () =>
    Effect.gen(function* () {
      expect(yield* issuesOf(create({}))).toEqual([
        ["/email", "required"],
        ["/password", "required"]
      ])
    })
  )

  it.effect("unknown fields are rejected next to the field errors, sorted by pointer", () =>
    Effect.gen(function* () {
      expect(yield* issuesOf(create({ password: "short", zeta: 1, email: "bad", alpha: null }))).toEqual([
        ["/alpha", "unknown_field"],
        ["/email", "invalid_format"],
        ["/password", "too_short"],
        ["/zeta", "unknown_field"]
      ])
    })
  )

  it.effect("each issue has a human detail", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(create({ email: 1 }))
      expect(error).toBeInstanceOf(ValidationError)
      if (error instanceof ValidationError)
        for (const found of error.issues) expect(found.detail.length).toBeGreaterThan(0)
    })
  )
})

describe("createPublicPlanEntry: storage and no enumeration", () => {
  it.effect("stores a scrypt hash that verifies, never the password in clear", () =>
    Effect.gen(function* () {
      const created = yield* fromWire.createPublicPlanEntry({ email: "Ann@Example.com", password: PASSWORD })
      expect(created).toEqual({ email: "Ann@example.com" })
      const stored = yield* storedFor("ann@example.com")
      expect(stored?.email).toBe("Ann@example.com")
      const hash = stored?.passwordHash ?? ""
      expect(hash).toMatch(/^scrypt\$/)
      expect(hash).not.toContain(PASSWORD)
      expect(hash).not.toContain(Buffer.from(PASSWORD).toString("base64"))
      const hasher = yield* PasswordHasher
      if (stored === undefined) throw new Error("the entry was stored")
      expect(yield* hasher.verify(Redacted.make(PASSWORD), stored.passwordHash)).toBe(true)
      expect(yield* hasher.verify(Redacted.make(PASSWORD + "!"), stored.passwordHash)).toBe(false)
    }).pipe(Effect.provide(TestServices))
  )

  it.effect("two entries with one password get different salts", () =>
    Effect.gen(function* () {
      yield* fromWire.createPublicPlanEntry({ email: "one@example.com", password: PASSWORD })
      yield* fromWire.createPublicPlanEntry({ email: "two@example.com", password: PASSWORD })
      const one = yield* storedFor("one@example.com")
      const two = yield* storedFor("two@example.com")
      expect(one?.passwordHash).not.toBe(two?.passwordHash)
    }).pipe(Effect.provide(TestServices))
  )

  it.effect("a duplicate email (any case) gets the response a new one would, and the first password stays", () =>
    Effect.gen(function* () {
      const first = yield* fromWire.createPublicPlanEntry({ email: "Ann@Example.com", password: PASSWORD })
      const stored = yield* storedFor("ann@example.com")
      const second = yield* fromWire.createPublicPlanEntry({ email: " ANN@example.COM ", password: "another password" })
      expect(first).toEqual({ email: "Ann@example.com" })
      expect(second).toEqual({ email: "ANN@example.com" })
      const after = yield* storedFor("ann@example.com")
      expect(after).toEqual(stored)
      const hasher = yield* PasswordHasher
      if (after === undefined) throw new Error("the entry was stored")
      expect(yield* hasher.verify(Redacted.make(PASSWORD), after.passwordHash)).toBe(true)
      expect(yield* hasher.verify(Redacted.make("another password"), after.passwordHash)).toBe(false)
    }).pipe(Effect.provide(TestServices))
  )

  it.effect("a duplicate is hashed too (same work as a new entry, so timing does not tell them apart)", () =>
    Effect.gen(function* () {
      let hashes = 0
      const real = yield* PasswordHasher
      const counting = PasswordHasher.of({
        hash: (password) => Effect.tap(real.hash(password), () => Effect.sync(() => hashes++)),
        verify: real.verify
      })
      const run = (email: string) =>
        Effect.provideService(fromWire.createPublicPlanEntry({ email, password: PASSWORD }), PasswordHasher, counting)
      yield* run("dup@example.com")
      yield* run("DUP@example.com")
      expect(hashes).toBe(2)
    }).pipe(Effect.provide(TestServices))
  )

  it.effect("an invalid body stores nothing", () =>
    Effect.gen(function* () {
      yield* Effect.flip(fromWire.createPublicPlanEntry({ email: "kept@example.com", password: "short" }))
      expect(yield* storedFor("kept@example.com")).toBeUndefined()
    }).pipe(Effect.provide(TestServices))
  )
})

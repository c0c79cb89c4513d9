import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ConfigError } from "../src/config.js"
import { readSeedFile } from "../src/seed-file.js"

const SECRET = "sEcReT-t0ken_value"
let dir = ""

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "accord-seed-"))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

const writeSeed = async (name: string, text: string): Promise<string> => {
  const path = join(dir, name)
  await writeFile(path, text)
  return path
}

const seedError = async (path: string): Promise<ConfigError> => {
  const error = await readSeedFile(path).then(
    () => undefined,
    (error: unknown) => error
  )
  if (!(error instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${String(error)}`)
  expect(error.exitCode).toBe(2)
  expect(error.message).toContain(path)
  expect(error.message).not.toContain(SECRET)
  return error
}

const valid = {
  users: [
    { id: "u_1", token: "user-one-token" },
    { id: "u_2", token: "user-two-token" }
  ],
  clients: [{ id: "web", token: "web-client-token" }],
  payment_methods: [
    { id: "pm_1", user_id: "u_1", is_default: true },
    { id: "pm_2", user_id: "u_1" },
    { id: "pm_3", user_id: "u_2", is_default: false }
  ]
}

describe("readSeedFile", () => {
  it("reads a valid seed, defaulting is_default to false", async () => {
    const seed = await readSeedFile(await writeSeed("valid.json", JSON.stringify(valid)))
    expect(seed.users.map((user) => user.id)).toEqual(["u_1", "u_2"])
    expect(seed.clients).toEqual([{ id: "web", token: "web-client-token" }])
    expect(seed.payment_methods.map((method) => [method.id, method.is_default])).toEqual([
      ["pm_1", true],
      ["pm_2", false],
      ["pm_3", false]
    ])
  })

  it("accepts an empty object, a byte-order mark, and one user listed twice with two tokens", async () => {
    expect(await readSeedFile(await writeSeed("empty.json", "{}"))).toEqual({
      users: [],
      clients: [],
      payment_methods: []
    })
    expect((await readSeedFile(await writeSeed("bom.json", "\uFEFF{}"))).users).toEqual([])
    const twoTokens = {
      users: [
        { id: "u_1", token: "first-token" },
        { id: "u_1", token: "second-token" }
      ]
    }
    expect((await readSeedFile(await writeSeed("two-tokens.json", JSON.stringify(twoTokens)))).users).toHaveLength(2)
  })

  it("accepts the example seed.json at the repository root", async () => {
    const seed = await readSeedFile(new URL("../../../seed.json", import.meta.url).pathname)
    expect(seed.users.map((user) => user.id)).toEqual(["u_1", "u_2"])
    expect(seed.clients.map((client) => client.id)).toEqual(["web"])
    expect(seed.payment_methods.map((method) => [method.id, method.user_id, method.is_default])).toEqual([
      ["pm_1", "u_1", true],
      ["pm_2", "u_1", false],
      ["pm_3", "u_2", false]
    ])
  })

  it("reports a missing file", async () => {
    const error = await seedError(join(dir, "nope.json"))
    expect(error.message).toBe(`seed file ${join(dir, "nope.json")}: not found`)
  })

  it("reports a directory", async () => {
    expect((await seedError(dir)).message).toContain("is a directory")
  })

  it.skipIf(process.getuid?.() === 0)(
    "reports an unreadable file (skipped as root, who reads everything)",
    async () => {
      const path = await writeSeed("locked.json", "{}")
      await chmod(path, 0o000)
      expect((await seedError(path)).message).toContain("permission denied")
    }
  )

  it("reports an empty file", async () => {
    expect((await seedError(await writeSeed("blank.json", "  \n"))).message).toContain("is empty")
  })

  it("reports invalid JSON with line and column, without quoting the text (which may hold a token)", async () => {
    const path = await writeSeed("broken.json", `{\n  "users": [{"id": "u_1", "token": "${SECRET}"} oops]\n}`)
    const error = await seedError(path)
    expect(error.message).toMatch(/is not valid JSON \(line 2, column \d+\)/)
    expect(error.message).not.toContain("oops")
  })

  it("reports invalid JSON without a position, still without quoting it", async () => {
    const error = await seedError(await writeSeed("bare.json", `{"users": ${SECRET}}`))
    expect(error.message).toContain("is not valid JSON")
  })

  it.each([
    ["[]", "the top level: must be a JSON object"],
    [`{"users": {}}`, "users: must be an array of {id, token}"],
    [`{"user": []}`, "user: is not a known field"],
    [`{"users": [{"id": "u_1"}]}`, "users[0].token: is required"],
    [`{"users": [{"id": "", "token": "ok-token"}]}`, "users[0].id: must be a non-empty string"],
    [`{"users": [{"id": 7, "token": "ok-token"}]}`, "users[0].id: must be a string"],
    [`{"clients": [{"id": "web", "token": "${SECRET} with spaces"}]}`, "clients[0].token: a token must match"],
    [`{"clients": [{"id": "web", "token": 123456789}]}`, "clients[0].token: must be a string"],
    [`{"users": [{"id": "u_1", "token": "${SECRET}", "role": "admin"}]}`, "users[0].role: is not a known field"],
    [
      `{"payment_methods": [{"id": "pm 1", "user_id": "u_1"}]}`,
      "payment_methods[0].id: must be 1 to 100 characters of [A-Za-z0-9_-]"
    ],
    [
      `{"payment_methods": [{"id": "pm_1", "user_id": "u_1", "is_default": "yes"}]}`,
      "payment_methods[0].is_default: must be a boolean"
    ]
  ])("reports the field of a wrong shape: %s", async (text, message) => {
    const error = await seedError(await writeSeed("shape.json", text))
    expect(error.message).toContain(message)
    // Only the field itself is named, not its parents.
    expect(error.message.split("\n")).toHaveLength(2)
  })

  it("reports a user with two default payment methods", async () => {
    const seed = {
      ...valid,
      payment_methods: [...valid.payment_methods, { id: "pm_4", user_id: "u_1", is_default: true }]
    }
    const error = await seedError(await writeSeed("two-defaults.json", JSON.stringify(seed)))
    expect(error.message).toContain(
      'payment_methods[3].is_default: user "u_1" already has a default payment method (payment_methods[0])'
    )
  })

  it("reports a payment method of a user the file does not list", async () => {
    const seed = { ...valid, payment_methods: [{ id: "pm_9", user_id: "u_9" }] }
    const error = await seedError(await writeSeed("unknown-user.json", JSON.stringify(seed)))
    expect(error.message).toContain('payment_methods[0].user_id: user "u_9" is not listed in "users"')
  })

  it("reports a payment method id used twice", async () => {
    const seed = {
      ...valid,
      payment_methods: [
        { id: "pm_1", user_id: "u_1" },
        { id: "pm_1", user_id: "u_2" }
      ]
    }
    const error = await seedError(await writeSeed("duplicate-method.json", JSON.stringify(seed)))
    expect(error.message).toContain('payment_methods[1].id: "pm_1" is already payment_methods[0].id')
  })

  it("reports a token given twice without printing it", async () => {
    const seed = { users: [{ id: "u_1", token: SECRET }], clients: [{ id: "web", token: SECRET }] }
    const error = await seedError(await writeSeed("duplicate-token.json", JSON.stringify(seed)))
    expect(error.message).toContain("clients[0].token: the same token as users[0].token")
  })

  it("reports every problem of a file at once", async () => {
    const seed = {
      users: [
        { id: "u_1", token: SECRET },
        { id: "u_2", token: SECRET }
      ],
      payment_methods: [{ id: "pm_1", user_id: "nobody" }]
    }
    const lines = (await seedError(await writeSeed("many.json", JSON.stringify(seed)))).message.split("\n")
    expect(lines).toHaveLength(3)
  })
})

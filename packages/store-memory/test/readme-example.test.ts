import { readFileSync } from "node:fs"
import { describe, expect, it, vi } from "@effect/vitest"

// The README example prints its result; capture it instead of cluttering the test output.
const log = vi.spyOn(console, "log").mockImplementation(() => undefined)

// README:start
import { Effect, Layer, Schema } from "effect"
import { Seed, StoreAdmin, updateLanguagePreferences, UserId } from "@accord/domain"
import { decodePreferencesPatch, toPreferencesView } from "@accord/contract"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { MemoryStoreLive } from "@accord/store-memory"

// Everything the use cases need: the in-memory store and a password hasher (cheap cost: for examples and tests).
const AppLayer = Layer.mergeAll(MemoryStoreLive, ScryptPasswordHasherLive(testScryptCost))

const program = Effect.gen(function* () {
  const admin = yield* StoreAdmin
  yield* admin.loadSeed(Schema.decodeUnknownSync(Seed)({ users: [{ id: "u_1", token: "dev-token-u1" }] }))
  // Values from outside enter through the Schemas; the domain stores a tag's canonical form ("EN-us" -> "en-US").
  const patch = yield* decodePreferencesPatch({ language: "EN-us", timezone: 60 })
  const preferences = yield* updateLanguagePreferences(UserId.make("u_1"), patch)
  return toPreferencesView(preferences)
})

const view = await Effect.runPromise(program.pipe(Effect.provide(AppLayer)))
console.log(view)
// { id: 1, language: 'en-US', timezone: 60, mfa_enabled: false, created_at: '...', updated_at: '...' }
// README:end

const readme = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8")
const exampleInThisFile = (): string => {
  const source = readme("./readme-example.test.ts")
  const start = source.indexOf("// README:start\n") + "// README:start\n".length
  return source.slice(start, source.indexOf("// README:end"))
}

describe("README example", () => {
  it("runs and prints the canonicalised record", () => {
    expect(log).toHaveBeenCalledTimes(1)
    expect(log).toHaveBeenCalledWith({
      id: 1,
      language: "en-US",
      timezone: 60,
      mfa_enabled: false,
      created_at: view.created_at,
      updated_at: view.created_at
    })
    expect(view.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  })

  it.each(["../README.md", "../../domain/README.md"])("%s shows exactly this code", (path) => {
    expect(readme(path)).toContain("```ts\n" + exampleInThisFile() + "```\n")
  })
})

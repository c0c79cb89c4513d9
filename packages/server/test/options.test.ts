import { readFileSync } from "node:fs"
import { defaultText, describeOption, parseOptions, type OptionTable } from "@accord/cli-options"
import { describe, expect, it } from "@effect/vitest"
import { Redacted, Result } from "effect"
import { serverOptions, readmeWithOptions, usage } from "../src/options.js"

const entries = Object.entries(serverOptions)

/** A parse's outcome in comparable form: the one option's value (unredacted) and whether it counts as given, or the error. */
const outcome = (table: OptionTable, key: string, argv: ReadonlyArray<string>, env: Record<string, string>) => {
  const parsed = parseOptions(table, argv, env)
  if (Result.isFailure(parsed)) return { error: parsed.failure.message }
  if (parsed.success._tag === "Help") throw new Error("unexpected help")
  const value: unknown = (parsed.success.values as Readonly<Record<string, unknown>>)[key]
  return { value: Redacted.isRedacted(value) ? Redacted.value(value) : value, given: parsed.success.given.has(key) }
}

/** Texts every option is tried with: its default's text (valid), and texts most options refuse. */
const textsFor = (option: (typeof serverOptions)[keyof typeof serverOptions]): Array<string> => [
  ...(option.default === undefined ? [] : [String(option.default)]),
  "0",
  "2",
  "nonsense",
  "https://example.test",
  "postgres://db.test/accord",
  "redis://cache.test"
]

describe("the option table (options.ts)", () => {
  it("gives each option its own flag and its own environment variable", () => {
    const flags = entries.flatMap(([, option]) => (option.flag === undefined ? [] : [option.flag]))
    const variables = entries.map(([, option]) => option.env)
    expect(new Set(flags).size).toBe(flags.length)
    expect(new Set(variables).size).toBe(variables.length)
    expect(flags).not.toContain("help")
    for (const variable of variables) expect(variable).toMatch(/^[A-Z][A-Z0-9_]*$/)
    for (const flag of flags) expect(flag).toMatch(/^[a-z][a-z0-9-]*$/)
  })

  it.each(entries)("reads %s from its environment variable exactly as from its flag, and the flag wins", (key) => {
    const option = serverOptions[key as keyof typeof serverOptions]
    if (option.type.isSwitch) {
      // A switch's flag takes no value: `--x` is the variable's `true`, `--no-x` its `false`.
      for (const [flag, text] of [
        [`--${option.flag}`, "true"],
        [`--no-${option.flag}`, "false"]
      ] as const) {
        const fromEnv = outcome(serverOptions, key, [], { [option.env]: text })
        expect(fromEnv).toEqual({ value: text === "true", given: true })
        expect(outcome(serverOptions, key, [flag], { [option.env]: text === "true" ? "false" : "true" })).toEqual(
          fromEnv
        )
      }
      expect(outcome(serverOptions, key, [], { [option.env]: "nonsense" })).toHaveProperty("error")
      return
    }
    for (const text of textsFor(option)) {
      const fromEnv = outcome(serverOptions, key, [], { [option.env]: text })
      // The variable is read: the option is given, or refused by name.
      if ("error" in fromEnv) expect(fromEnv.error).toMatch(new RegExp(`^${escape(describeOption(option))} `, "m"))
      else expect(fromEnv.given).toBe(true)
      if (option.flag === undefined) continue
      expect(outcome(serverOptions, key, [`--${option.flag}=${text}`], {})).toEqual(fromEnv)
      expect(outcome(serverOptions, key, [`--${option.flag}`, text], { [option.env]: "nonsense-from-env" })).toEqual(
        fromEnv
      )
    }
  })

  it.each(entries.filter(([, option]) => option.default !== undefined))(
    "accepts the default the usage shows for %s, and reads it as the default",
    (key, option) => {
      expect(outcome(serverOptions, key, [], { [option.env]: String(option.default) })).toEqual({
        value: option.default,
        given: true
      })
    }
  )

  it.each(entries)("lists %s in the usage text with its variable and default", (_key, option) => {
    const name =
      option.flag === undefined
        ? `  ${option.env}=${option.placeholder ?? option.type.placeholder}`
        : option.type.isSwitch
          ? `  --[no-]${option.flag} `
          : `  --${option.flag} ${option.placeholder ?? option.type.placeholder}`
    expect(usage).toContain(name)
    const shown = defaultText(option)?.replaceAll("`", "")
    const bracket = [
      ...(option.flag === undefined ? [] : [option.env]),
      ...(shown === undefined ? [] : [`default ${shown}`])
    ]
    if (bracket.length > 0) expect(usage).toContain(`(${bracket.join(", ")})`)
  })

  it("keeps the README's option list as the table makes it (npm run generate rewrites it)", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")
    expect(readmeWithOptions(readme)).toBe(readme)
    for (const [, option] of entries) expect(readme).toContain(`\`${option.env}\``)
  })
})

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

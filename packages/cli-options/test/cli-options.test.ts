import {
  anyText,
  defaultValues,
  fromParse,
  fromSchema,
  integer,
  nonEmpty,
  oneOf,
  onOff,
  option,
  parseOptions,
  redacted,
  renderMarkdown,
  renderUsage,
  replaceBetween,
  type OptionTable,
  type OptionValues
} from "@accord/cli-options"
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Redacted, Result, Schema } from "effect"

const table = {
  port: option({
    group: "Main",
    flag: "port",
    env: "PORT",
    type: integer(0, 65535, "PORT"),
    default: 3000,
    help: "port"
  }),
  mode: option({
    group: "Main",
    flag: "mode",
    env: "MODE",
    type: oneOf(["fast", "safe"]),
    default: "safe",
    help: "mode"
  }),
  seed: option({ group: "Main", flag: "seed", env: "SEED_FILE", type: nonEmpty("FILE"), help: "seed file" }),
  verbose: option({ group: "Output", flag: "verbose", env: "VERBOSE", type: onOff, default: false, help: "log more" }),
  password: option({
    group: "Output",
    flag: "password",
    env: "PASSWORD",
    type: redacted(nonEmpty("TEXT")),
    secret: true,
    help: "a secret"
  }),
  cost: option({ group: "Output", env: "COST", type: integer(1, 9), default: 4, help: "environment only" })
}

const values = (argv: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const parsed = Result.getOrThrow(parseOptions(table, argv, env))
  if (parsed._tag !== "Values") throw new Error("expected values")
  return parsed
}
const failure = (argv: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const parsed = parseOptions(table, argv, env)
  if (Result.isSuccess(parsed)) throw new Error("expected a failure")
  return parsed.failure
}

describe("parseOptions", () => {
  it("takes --flag value and --flag=value, a flag over its variable over the default", () => {
    expect(values(["--port", "80", "--mode=fast"]).values).toMatchObject({ port: 80, mode: "fast" })
    expect(values([], { PORT: "81", MODE: "fast" }).values).toMatchObject({ port: 81, mode: "fast" })
    expect(values(["--port=82"], { PORT: "81" }).values.port).toBe(82)
    expect(values([]).values).toEqual({ port: 3000, mode: "safe", verbose: false, cost: 4 })
  })

  it("counts an empty variable as unset, but an empty flag value as given", () => {
    expect(values([], { PORT: "", SEED_FILE: "" }).values).toEqual(defaultValues(table))
    expect(failure(["--seed="]).message).toBe('--seed (SEED_FILE) must not be empty, got ""')
  })

  it("says which options were given (by flag or variable), not defaulted", () => {
    expect([...values(["--port", "80"], { COST: "2", MODE: "" }).given].sort()).toEqual(["cost", "port"])
  })

  it("reads a switch as --flag / --no-flag, and true / false from its variable", () => {
    expect(values(["--verbose"]).values.verbose).toBe(true)
    expect(values(["--no-verbose"], { VERBOSE: "true" }).values.verbose).toBe(false)
    expect(values([], { VERBOSE: "true" }).values.verbose).toBe(true)
    expect(failure([], { VERBOSE: "yes" }).message).toBe('--verbose (VERBOSE) must be true or false, got "yes"')
    expect(failure(["--verbose=yes"])).toMatchObject({
      _tag: "CommandLineError",
      message: "Option '--verbose' does not take an argument"
    })
  })

  it("reads an environment-only option from its variable; it has no flag", () => {
    expect(values([], { COST: "9" }).values.cost).toBe(9)
    expect(failure(["--cost", "9"])).toMatchObject({ _tag: "CommandLineError", message: "Unknown option '--cost'" })
  })

  it("reports every bad value at once, in table order, never echoing a secret", () => {
    expect(failure(["--mode", "slow", "--password="], { PORT: "http", COST: "0" })).toMatchObject({
      _tag: "OptionValueError",
      message: [
        '--port (PORT) must be an integer from 0 to 65535, got "http"',
        '--mode (MODE) must be one of fast, safe, got "slow"',
        "--password (PASSWORD) must not be empty",
        'COST must be an integer from 1 to 9, got "0"'
      ].join("\n")
    })
  })

  it("keeps a redacted value out of its printed form", () => {
    const password = values(["--password", "hunter2"]).values.password
    expect(password && Redacted.value(password)).toBe("hunter2")
    expect(`${String(password)} ${JSON.stringify(password)}`).not.toContain("hunter2")
  })

  it("warns once for each secret given by its flag, naming the variable to use instead; never with its text", () => {
    const urls = {
      ...table,
      databaseUrl: option({
        group: "URLs",
        flag: "database-url",
        env: "DATABASE_URL",
        type: anyText("URL"),
        secret: true,
        help: ""
      })
    }
    const warningsOf = (argv: ReadonlyArray<string>, env: Record<string, string> = {}) => {
      const parsed = Result.getOrThrow(parseOptions(urls, argv, env))
      return parsed._tag === "Values" ? parsed.warnings : ["<help>"]
    }
    const databaseUrl =
      "--database-url carries a password: it shows in the process list; pass it in DATABASE_URL instead"
    expect(warningsOf(["--database-url", "postgres://app:hunter2@db/x"])).toEqual([databaseUrl])
    expect(warningsOf(["--database-url=postgres://db/x?password=hunter2"])).toEqual([databaseUrl])
    expect(warningsOf(["--password", "hunter2", "--database-url", "redis://:hunter2@cache"])).toEqual([
      "--password carries a password: it shows in the process list; pass it in PASSWORD instead",
      databaseUrl
    ])
    // A URL without a password, the same secrets through the environment, and an option that is not secret: nothing.
    expect(warningsOf(["--database-url", "postgres://app@db/x", "--seed", "postgres://a:b@c/d"])).toEqual([])
    expect(warningsOf([], { DATABASE_URL: "postgres://app:hunter2@db/x", PASSWORD: "hunter2" })).toEqual([])
  })

  it("answers Help for -h or --help, whatever values stand beside it", () => {
    expect(Result.getOrThrow(parseOptions(table, ["--port", "x", "-h"], {}))._tag).toBe("Help")
    expect(Result.getOrThrow(parseOptions(table, ["--help"], { PORT: "x" }))._tag).toBe("Help")
  })

  it("refuses positionals unless allowed, with Node's messages for the grammar", () => {
    expect(failure(["serve"]).message).toContain("Unexpected argument 'serve'")
    expect(failure(["--port"]).message).toBe("Option '--port <value>' argument missing")
    expect(failure(["--port", "-1"]).message).toContain("use '--port=-XYZ'")
    const parsed = Result.getOrThrow(parseOptions(table, ["serve", "--port", "1"], {}, { positionals: true }))
    expect(parsed).toMatchObject({ _tag: "Values", positionals: ["serve"], values: { port: 1 } })
  })

  it("types the values from the table: present with a default, optional without", () => {
    const parsed = values([])
    expectTypeOf(parsed.values.port).toEqualTypeOf<number>()
    expectTypeOf(parsed.values.mode).toEqualTypeOf<"fast" | "safe">()
    expectTypeOf(parsed.values.verbose).toEqualTypeOf<boolean>()
    expectTypeOf(parsed.values).toEqualTypeOf<{
      readonly port: number
      readonly mode: "fast" | "safe"
      readonly verbose: boolean
      readonly cost: number
      readonly seed?: string
      readonly password?: Redacted.Redacted<string>
    }>()
    expectTypeOf<OptionValues<typeof table>>().toEqualTypeOf(parsed.values)
    // @ts-expect-error: a default must be of the option's type
    option({ group: "g", env: "X", type: integer(0, 1), default: "1", help: "" })
  })
})

describe("option types", () => {
  it("fromSchema gives the first issue's message; fromParse its own", () => {
    const even = fromSchema(
      "PAIRS",
      Schema.String.check(Schema.makeFilter((text) => text.length % 2 === 0, { message: "must have an even length" }))
    )
    expect(even.decode("ab")).toEqual(Result.succeed("ab"))
    expect(even.decode("abc")).toEqual(Result.fail("must have an even length"))
    const list = fromParse("A,B", "must be letters separated by commas", (text) =>
      /^[a-z]+(,[a-z]+)*$/.test(text) ? text.split(",") : undefined
    )
    expect(list.decode("a,b")).toEqual(Result.succeed(["a", "b"]))
    expect(list.decode("a,,b")).toEqual(Result.fail("must be letters separated by commas"))
    expect(anyText("T").decode("")).toEqual(Result.succeed(""))
  })

  it("integer refuses signs, fractions, exponents and leading zeros with one message", () => {
    const type = integer(0, 100)
    for (const text of ["-1", "1.5", "1e2", "01", "", " 1", "101"])
      expect(type.decode(text)).toEqual(Result.fail("must be an integer from 0 to 100"))
    expect(type.decode("100")).toEqual(Result.succeed(100))
  })
})

describe("renderUsage", () => {
  const usage = renderUsage(table, {
    head: "Usage: demo [options]",
    tail: "Exit code 2: bad options.",
    notes: { Output: "More in `docs/demo.md`." }
  })

  it("lists each group's options with flag, placeholder, variable and default, backticks dropped", () => {
    expect(usage).toBe(`Usage: demo [options]

Main:
  --port PORT                port (PORT, default 3000)
  --mode fast|safe           mode (MODE, default safe)
  --seed FILE                seed file (SEED_FILE)

Output:
  --[no-]verbose             log more (VERBOSE, default false)
  --password TEXT            a secret (PASSWORD)
  COST=N                     environment only (default 4)
  More in docs/demo.md.

  -h, --help                 print this help and exit

Exit code 2: bad options.
`)
  })

  it("wraps at 118 columns under the help column, never splitting the bracket; a long name gets its own line", () => {
    const long: OptionTable = {
      a: option({
        group: "G",
        flag: "a-rather-long-flag-name-indeed",
        env: "A_RATHER_LONG_FLAG_NAME_INDEED",
        type: integer(0, 1),
        default: 0,
        help: "word ".repeat(28).trim()
      })
    }
    const lines = renderUsage(long, { head: "h" }).split("\n")
    expect(lines.slice(2)).toEqual([
      "G:",
      "  --a-rather-long-flag-name-indeed N",
      `                             ${"word ".repeat(18).trim()}`,
      `                             ${"word ".repeat(10).trim()}`,
      "                             (A_RATHER_LONG_FLAG_NAME_INDEED, default 0)",
      "",
      "  -h, --help                 print this help and exit",
      ""
    ])
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(118)
  })
})

describe("renderMarkdown and replaceBetween", () => {
  it("makes a table per group, with pipes escaped and backticks kept", () => {
    expect(renderMarkdown(table, { Main: "See `demo`." })).toBe(`### Main

| flag | environment | default | |
|---|---|---|---|
| \`--port PORT\` | \`PORT\` | \`3000\` | port |
| \`--mode fast\\|safe\` | \`MODE\` | \`safe\` | mode |
| \`--seed FILE\` | \`SEED_FILE\` |  | seed file |

See \`demo\`.

### Output

| flag | environment | default | |
|---|---|---|---|
| \`--verbose\`, \`--no-verbose\` | \`VERBOSE\` | \`false\` | log more |
| \`--password TEXT\` | \`PASSWORD\` |  | a secret |
|  | \`COST\` | \`4\` | environment only |`)
  })

  it("replaces what lies between two lines, and throws when one is missing", () => {
    const document = "# T\n<!-- b -->\nold\nlines\n<!-- e -->\nend\n"
    expect(replaceBetween(document, "<!-- b -->", "<!-- e -->", "new")).toBe("# T\n<!-- b -->\nnew\n<!-- e -->\nend\n")
    expect(() => replaceBetween("# T\n<!-- b -->\n", "<!-- b -->", "<!-- e -->", "new")).toThrow("<!-- e -->")
  })
})

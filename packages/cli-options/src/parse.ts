import { parseArgs, type ParseArgsOptionsConfig } from "node:util"
import { Data, Result } from "effect"
import { describeOption, type OptionTable, type OptionValues } from "./option.js"

/** The arguments themselves are wrong: an unknown flag, a value missing, a stray argument (Node's own message). */
export class CommandLineError extends Data.TaggedError("CommandLineError")<{ readonly message: string }> {}

/** Some options' values are wrong: one line per option, each naming it, its rule and (unless secret) its text. */
export class OptionValueError extends Data.TaggedError("OptionValueError")<{ readonly message: string }> {}

export type ParsedOptions<T extends OptionTable> =
  | { readonly _tag: "Help" }
  | {
      readonly _tag: "Values"
      readonly values: OptionValues<T>
      /** The options given by a flag or a variable, as opposed to defaulted: for rules such as "x needs y". */
      readonly given: ReadonlySet<keyof T>
      readonly positionals: ReadonlyArray<string>
      /**
       * For the operator, once: each secret given by its flag, which `ps` and a supervisor's echo of the command show
       * to anyone on the machine, with the environment variable to use instead (docs/SECURITY.md, item 39).
       */
      readonly warnings: ReadonlyArray<string>
    }

export interface ParseSettings {
  /** Whether arguments other than flags are allowed (a command name); refused by default. */
  readonly positionals?: boolean
}

/**
 * Whether a secret option's text holds a secret: any text that is not a URL (a token, a key=value connection string),
 * and a URL with a password in its userinfo or a `password` parameter. One URL parse: linear in the text.
 */
const holdsSecret = (text: string): boolean => {
  if (!URL.canParse(text)) return true
  const url = new URL(text)
  return url.password !== "" || url.searchParams.has("password")
}

/**
 * Reads `argv` and `env` through the table: for each option its flag, else its environment variable (an empty one
 * counts as unset), else its default. `--flag value` and `--flag=value`; a switch is `--flag` / `--no-flag`; `-h` or
 * `--help` anywhere answers Help (a bad value beside it does not matter). Every bad value is reported at once.
 */
export const parseOptions = <T extends OptionTable>(
  table: T,
  argv: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>,
  settings: ParseSettings = {}
): Result.Result<ParsedOptions<T>, CommandLineError | OptionValueError> => {
  const flags: ParseArgsOptionsConfig = {
    ...Object.fromEntries(
      Object.values(table).flatMap((option) =>
        option.flag === undefined
          ? []
          : [
              [
                option.flag,
                option.repeatable === true
                  ? { type: "string", multiple: true }
                  : { type: option.type.isSwitch ? "boolean" : "string" }
              ]
            ]
      )
    ),
    help: { type: "boolean", short: "h" }
  }
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      options: flags,
      strict: true,
      allowPositionals: settings.positionals ?? false,
      allowNegative: true
    })
  } catch (error) {
    return Result.fail(new CommandLineError({ message: error instanceof Error ? error.message : String(error) }))
  }
  if (parsed.values["help"] === true) return Result.succeed({ _tag: "Help" })

  const values: Record<string, unknown> = {}
  const given = new Set<keyof T>()
  const problems: Array<string> = []
  const warnings: Array<string> = []
  for (const [key, option] of Object.entries(table)) {
    const flagged = option.flag === undefined ? undefined : parsed.values[option.flag]
    const fromFlag = Array.isArray(flagged) ? flagged.join(" ") : flagged
    const fromEnv = env[option.env]
    const text =
      typeof fromFlag === "string" || typeof fromFlag === "boolean"
        ? String(fromFlag)
        : fromEnv === undefined || fromEnv === ""
          ? undefined
          : fromEnv
    if (text === undefined) {
      if (option.default !== undefined) values[key] = option.default
      continue
    }
    given.add(key)
    const secretInFlag = option.secret === true && typeof fromFlag === "string" && fromFlag !== ""
    if (secretInFlag && option.flag !== undefined && holdsSecret(fromFlag)) {
      warnings.push(
        `--${option.flag} carries a password: it shows in the process list; pass it in ${option.env} instead`
      )
    }
    const decoded = option.type.decode(text)
    if (Result.isSuccess(decoded)) values[key] = decoded.success
    else {
      const got = option.secret === true ? "" : `, got ${JSON.stringify(text)}`
      problems.push(`${describeOption(option)} ${decoded.failure}${got}`)
    }
  }
  if (problems.length > 0) return Result.fail(new OptionValueError({ message: problems.join("\n") }))
  return Result.succeed({
    _tag: "Values",
    // Built key by key from the table above: each key holds its option's decoded value or default, or is absent.
    values: values as OptionValues<T>,
    given,
    positionals: parsed.positionals,
    warnings
  })
}

/** The parsed options when nothing is given: each option's default, the others absent. */
export const defaultValues = <T extends OptionTable>(table: T): OptionValues<T> =>
  // Built key by key from the table, as in parseOptions.
  Object.fromEntries(
    Object.entries(table).flatMap(([key, option]) => (option.default === undefined ? [] : [[key, option.default]]))
  ) as OptionValues<T>

import { Redacted, Result, Schema, SchemaIssue, SchemaTransformation } from "effect"

/**
 * How an option's text (a flag's value or its environment variable) becomes its value. The error is the rule the text
 * broke, worded to follow the option's name: `--port (PORT) ` + `must be an integer from 0 to 65535`.
 */
export interface OptionType<out A> {
  /** Names the text in the usage and the README: `N`, `URL`, `koa|fastify`. */
  readonly placeholder: string
  readonly decode: (text: string) => Result.Result<A, string>
  /** A switch: its flag takes no value (`--x` is `true`, `--no-x` is `false`); its variable says `true` or `false`. */
  readonly isSwitch: boolean
}

const firstMessage = (issue: SchemaIssue.Issue): string =>
  SchemaIssue.makeFormatterStandardSchemaV1()(issue).issues[0]?.message ?? "is not valid"

/** A type from a Schema that decodes the text; the first issue's message is the error. */
export const fromSchema = <S extends Schema.ConstraintDecoder<unknown>>(
  placeholder: string,
  schema: S
): OptionType<S["Type"]> => {
  const decode = Schema.decodeUnknownResult(schema)
  return {
    placeholder,
    isSwitch: false,
    decode: (text) => Result.mapError(decode(text), (error) => firstMessage(error.issue))
  }
}

/** A type from a parse function: `undefined` refuses the text with `message`. */
export const fromParse = <A extends NonNullable<unknown> | null>(
  placeholder: string,
  message: string,
  parse: (text: string) => A | undefined
): OptionType<A> => ({
  placeholder,
  isSwitch: false,
  decode: (text) => {
    const value = parse(text)
    return value === undefined ? Result.fail(message) : Result.succeed(value)
  }
})

/** An instant in UTC: a date (`2027-06-01`, its midnight) or a date and time ending in `Z` (`2027-06-01T12:00:00Z`). */
const INSTANT = /^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2})?Z)?$/

/** An instant in UTC (`INSTANT`), a real one: `2027-02-30` is refused, not moved to March. */
export const instant = (placeholder = "DATE"): OptionType<Date> =>
  fromParse(placeholder, "must be a UTC date, YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ", (text) => {
    if (!INSTANT.test(text)) return undefined
    const date = new Date(text)
    return Number.isFinite(date.getTime()) && date.toISOString().slice(0, 10) === text.slice(0, 10) ? date : undefined
  })

/** Any text, kept as it is (the empty string included, when given as `--flag=`). */
export const anyText = (placeholder: string): OptionType<string> => ({
  placeholder,
  isSwitch: false,
  decode: Result.succeed
})

/**
 * Text that `accepts` lets through; otherwise `message`, whatever the fault: one check, so the error states the
 * whole rule rather than the step that failed. A pattern given here sees operator input: keep it linear.
 */
export const textSchema = (message: string, accepts: (text: string) => boolean) =>
  Schema.String.check(Schema.makeFilter(accepts, { message }))

export const text = (placeholder: string, message: string, accepts: (text: string) => boolean): OptionType<string> =>
  fromSchema(placeholder, textSchema(message, accepts))

export const nonEmpty = (placeholder: string): OptionType<string> =>
  text(placeholder, "must not be empty", (value) => value.length > 0)

const WHOLE_NUMBER = /^(0|[1-9][0-9]*)$/

/** Text of digits (no sign, no leading zero, no exponent) that `accepts`, read as a number. */
export const wholeNumberSchema = (message: string, accepts: (n: number) => boolean) =>
  textSchema(message, (value) => WHOLE_NUMBER.test(value) && accepts(Number(value))).pipe(
    Schema.decodeTo(Schema.Number, SchemaTransformation.numberFromString)
  )

export const integer = (min: number, max: number, placeholder = "N"): OptionType<number> =>
  fromSchema(
    placeholder,
    wholeNumberSchema(`must be an integer from ${min} to ${max}`, (n) => n >= min && n <= max)
  )

/** One of `values`, spelled exactly; the usage names them all (`koa|fastify`). */
export const oneOf = <const L extends ReadonlyArray<string>>(values: L): OptionType<L[number]> =>
  fromSchema(values.join("|"), Schema.Literals(values).annotate({ message: `must be one of ${values.join(", ")}` }))

/** An on/off switch: `--flag` / `--no-flag`, or `true` / `false` in its environment variable. */
export const onOff: OptionType<boolean> = {
  placeholder: "true|false",
  isSwitch: true,
  decode: (value) =>
    value === "true"
      ? Result.succeed(true)
      : value === "false"
        ? Result.succeed(false)
        : Result.fail("must be true or false")
}

/** The value kept `Redacted`, so printing or logging the parsed options never shows it; pair with `secret: true`. */
export const redacted = <A>(type: OptionType<A>): OptionType<Redacted.Redacted<A>> => ({
  ...type,
  decode: (value) => Result.map(type.decode(value), (decoded) => Redacted.make(decoded))
})

import { Cause, Effect, Exit, Result, Schema, type SchemaAST, type SchemaIssue } from "effect"
import { ValidationError } from "./errors.js"
import { FIELD_ISSUE_CODE, type FieldIssue, type FieldIssueCode } from "./values/field-issue.js"

const escapePointerToken = (token: string): string => token.replaceAll("~", "~0").replaceAll("/", "~1")

const pointerOf = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((key) => "/" + escapePointerToken(String(key))).join("")

const codeIn = (annotations: Schema.Annotations.Annotations | undefined): FieldIssueCode | undefined =>
  annotations?.[FIELD_ISSUE_CODE] as FieldIssueCode | undefined

const messageIn = (annotations: Schema.Annotations.Annotations | undefined): string | undefined => {
  const message = annotations?.["message"]
  return typeof message === "string" ? message : undefined
}

/** What a value of this type is, for "must be ..." (a type's `expected` annotation, else its JSON type). */
const EXPECTED_BY_TAG: Readonly<Partial<Record<SchemaAST.AST["_tag"], string>>> = {
  String: "a string",
  Number: "a number",
  Boolean: "a boolean"
}

const typeDetail = (ast: SchemaAST.AST): string => {
  const annotated = ast.annotations?.["expected"]
  const expected = typeof annotated === "string" ? annotated : EXPECTED_BY_TAG[ast._tag]
  return expected === undefined ? "has the wrong type" : `must be ${expected}`
}

/**
 * Flattens a Schema issue into one FieldIssue per failure. A field reports only its first failing rule: its checks
 * are declared in docs/api.md's order (type, length, syntax, range) and each aborts the ones after it.
 */
const collect = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>, out: Array<FieldIssue>): void => {
  switch (issue._tag) {
    case "Pointer":
      return collect(issue.issue, [...path, ...issue.path], out)
    case "Composite":
      for (const inner of issue.issues) collect(inner, path, out)
      return
    case "AnyOf":
      if (issue.issues.length === 0)
        out.push({ pointer: pointerOf(path), code: "invalid_type", detail: typeDetail(issue.ast) })
      for (const inner of issue.issues) collect(inner, path, out)
      return
    case "Encoding":
      return collect(issue.issue, path, out)
    case "Filter": {
      const annotations = issue.filter.annotations
      out.push({
        pointer: pointerOf(path),
        code: codeIn(annotations) ?? "invalid_format",
        detail: messageIn(annotations) ?? "is not valid"
      })
      return
    }
    case "MissingKey":
      out.push({ pointer: pointerOf(path), code: "required", detail: "is required" })
      return
    case "UnexpectedKey":
      out.push({ pointer: pointerOf(path), code: "unknown_field", detail: "is not a known field" })
      return
    case "InvalidType":
      out.push({
        pointer: pointerOf(path),
        code: codeIn(issue.ast.annotations) ?? "invalid_type",
        detail: messageIn(issue.ast.annotations) ?? typeDetail(issue.ast)
      })
      return
    case "InvalidValue":
      out.push({
        pointer: pointerOf(path),
        code: codeIn(issue.annotations) ?? "invalid_format",
        detail: messageIn(issue.annotations) ?? "is not valid"
      })
      return
    case "OneOf":
    case "Forbidden":
      out.push({ pointer: pointerOf(path), code: "invalid_format", detail: "could not be checked" })
      return
  }
}

const byPointer = (a: FieldIssue, b: FieldIssue): number => (a.pointer < b.pointer ? -1 : a.pointer > b.pointer ? 1 : 0)

/** One issue per field (the first found), sorted by pointer. */
const byPointerFirstPerField = (issues: ReadonlyArray<FieldIssue>): Array<FieldIssue> => {
  const firstPerField = new Map<string, FieldIssue>()
  for (const found of issues) if (!firstPerField.has(found.pointer)) firstPerField.set(found.pointer, found)
  return [...firstPerField.values()].sort(byPointer)
}

/** Turns a Schema issue into the domain's ValidationError (one issue per field, sorted by pointer). */
export const toValidationError = (issue: SchemaIssue.Issue): ValidationError => {
  const issues: Array<FieldIssue> = []
  collect(issue, [], issues)
  return new ValidationError({ issues: byPointerFirstPerField(issues) })
}

/** Every field checked (one issue per field), and unknown fields refused (docs/api.md, "Precise rules"). */
const strictOptions: SchemaAST.ParseOptions = { errors: "all", onExcessProperty: "error" }

/**
 * Compiles a decoder once: unknown input to the schema's type, or a ValidationError, as a plain `Result` for the
 * handler, which checks it as it goes (an Effect per request cost two steps of the fiber's run loop, and their
 * allocations, for a value that is already known). A cause without a Fail (a defect in a Schema) is thrown: a 500.
 */
export const resultDecoderFor = <S extends Schema.Decoder<unknown>>(schema: S) => {
  const decode = Schema.decodeUnknownExit(schema, strictOptions)
  return (input: unknown): Result.Result<S["Type"], ValidationError> => {
    const decoded = decode(input)
    if (Exit.isSuccess(decoded)) return Result.succeed(decoded.value)
    const error = decoded.cause.reasons.find((reason) => reason._tag === "Fail")
    if (error === undefined) throw Cause.squash(decoded.cause)
    return Result.fail(toValidationError(error.error.issue))
  }
}

/** `resultDecoderFor` as an Effect, for programs that compose it (`decodePreferencesPatch`). */
export const decoderFor = <S extends Schema.Decoder<unknown>>(schema: S) => {
  const decode = resultDecoderFor(schema)
  return (input: unknown): Effect.Effect<S["Type"], ValidationError> =>
    Effect.suspend(() => Effect.fromResult(decode(input)))
}

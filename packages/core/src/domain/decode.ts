import { Effect, Either, ParseResult, Schema, SchemaAST } from "effect"
import { ValidationError } from "./errors.js"
import { FieldIssueCodeId, type FieldIssue, type FieldIssueCode } from "./field-issue.js"

const escapePointerToken = (token: string): string => token.replaceAll("~", "~0").replaceAll("/", "~1")

const pointerOf = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((key) => "/" + escapePointerToken(String(key))).join("")

const codeOf = (ast: SchemaAST.AST): FieldIssueCode | undefined =>
  ast.annotations[FieldIssueCodeId] as FieldIssueCode | undefined

/** Our field annotations always give a plain string message; anything else falls back to a generic detail. */
const messageOf = (issue: ParseResult.Refinement | ParseResult.Type): string | undefined => {
  const message = SchemaAST.getMessageAnnotation(issue.ast)
  if (message._tag === "None") return undefined
  const out = message.value(issue)
  return typeof out === "string" ? out : undefined
}

const typeDetail = (ast: SchemaAST.AST): string => {
  const expected = SchemaAST.getDescriptionAnnotation(ast)
  return expected._tag === "Some" ? `must be ${expected.value}` : `has the wrong type`
}

/**
 * Flattens a Schema parse issue into one FieldIssue per field. A field reports only its first failing rule:
 * refinements are chained in CONTRACT order (type, length, syntax, range), and Schema stops at the first failure.
 */
const collect = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>, out: Array<FieldIssue>): void => {
  switch (issue._tag) {
    case "Pointer": {
      const segment = Array.isArray(issue.path) ? issue.path : [issue.path]
      return collect(issue.issue, [...path, ...(segment as ReadonlyArray<PropertyKey>)], out)
    }
    case "Composite": {
      const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues]
      for (const inner of issues as ReadonlyArray<ParseResult.ParseIssue>) collect(inner, path, out)
      return
    }
    case "Transformation":
      return collect(issue.issue, path, out)
    case "Refinement": {
      if (issue.kind === "From") return collect(issue.issue, path, out)
      const code = codeOf(issue.ast) ?? "invalid_format"
      out.push({ pointer: pointerOf(path), code, detail: messageOf(issue) ?? "is not valid" })
      return
    }
    case "Missing":
      out.push({ pointer: pointerOf(path), code: "required", detail: "is required" })
      return
    case "Unexpected":
      out.push({ pointer: pointerOf(path), code: "unknown_field", detail: "is not a known field" })
      return
    case "Type":
      out.push({
        pointer: pointerOf(path),
        code: codeOf(issue.ast) ?? "invalid_type",
        detail: messageOf(issue) ?? typeDetail(issue.ast)
      })
      return
    case "Forbidden":
      out.push({ pointer: pointerOf(path), code: "invalid_format", detail: "could not be checked" })
      return
  }
}

const byPointer = (a: FieldIssue, b: FieldIssue): number => (a.pointer < b.pointer ? -1 : a.pointer > b.pointer ? 1 : 0)

/** Turns a Schema parse error into the domain's ValidationError (one issue per field, sorted by pointer). */
export const toValidationError = (error: ParseResult.ParseError): ValidationError => {
  const issues: Array<FieldIssue> = []
  collect(error.issue, [], issues)
  const firstPerField = new Map<string, FieldIssue>()
  for (const found of issues) if (!firstPerField.has(found.pointer)) firstPerField.set(found.pointer, found)
  return new ValidationError({ issues: [...firstPerField.values()].sort(byPointer) })
}

const parseOptions: SchemaAST.ParseOptions = { errors: "all", onExcessProperty: "error" }

/**
 * Compiles a decoder once: unknown input to the schema's type or a ValidationError. Synchronous, so it costs no
 * fiber hop on the hot path.
 */
export const decoderFor = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = Schema.decodeUnknownEither(schema, parseOptions)
  return (input: unknown): Effect.Effect<A, ValidationError> =>
    Either.match(decode(input), {
      onLeft: (error) => Effect.fail(toValidationError(error)),
      onRight: Effect.succeed
    })
}

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

/** One issue per field (the first found), sorted by pointer. */
const byPointerFirstPerField = (issues: ReadonlyArray<FieldIssue>): Array<FieldIssue> => {
  const firstPerField = new Map<string, FieldIssue>()
  for (const found of issues) if (!firstPerField.has(found.pointer)) firstPerField.set(found.pointer, found)
  return [...firstPerField.values()].sort(byPointer)
}

/** Turns a Schema parse error into the domain's ValidationError (one issue per field, sorted by pointer). */
export const toValidationError = (error: ParseResult.ParseError): ValidationError => {
  const issues: Array<FieldIssue> = []
  collect(error.issue, [], issues)
  return new ValidationError({ issues: byPointerFirstPerField(issues) })
}

const strictOptions: SchemaAST.ParseOptions = { errors: "all", onExcessProperty: "error" }
const lenientOptions: SchemaAST.ParseOptions = { errors: "all" }

/** Whether an object could hide in a value of this type (where only Schema's own excess-property check reaches). */
const mayHoldObject = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "Refinement":
      return mayHoldObject(ast.from)
    case "Transformation":
      // Either side: a string parsed into a struct (Schema.parseJson) holds an object too.
      return mayHoldObject(ast.from) || mayHoldObject(ast.to)
    case "Union":
      return ast.types.some(mayHoldObject)
    case "Declaration":
      // A declared type checks its input itself (the read-only fields accept anything and keep nothing).
      return ast.typeParameters.some(mayHoldObject)
    case "TypeLiteral":
    case "TupleType":
    case "Suspend":
    case "ObjectKeyword":
      return true
    default:
      return false
  }
}

/** The field names of a struct of plain values; undefined for any other schema. */
const flatStructKeys = (ast: SchemaAST.AST): ReadonlySet<PropertyKey> | undefined => {
  if (ast._tag !== "TypeLiteral" || ast.indexSignatures.length > 0) return undefined
  if (ast.propertySignatures.some((field) => mayHoldObject(field.type))) return undefined
  return new Set(ast.propertySignatures.map((field) => field.name))
}

const unknownFields = (input: unknown, known: ReadonlySet<PropertyKey>): Array<FieldIssue> => {
  const issues: Array<FieldIssue> = []
  if (typeof input !== "object" || input === null || Array.isArray(input)) return issues
  for (const key of Reflect.ownKeys(input)) {
    if (!known.has(key)) issues.push({ pointer: pointerOf([key]), code: "unknown_field", detail: "is not a known field" })
  }
  return issues
}

/**
 * Compiles a decoder once: unknown input to the schema's type or a ValidationError. Synchronous, so it costs no
 * fiber hop on the hot path. Unknown fields are refused; for a struct of plain values (every request body) they are
 * found with one set lookup per key, before decoding, instead of by Schema's union of the known names per key.
 */
export const decoderFor = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const known = flatStructKeys(schema.ast)
  const decode = Schema.decodeUnknownEither(schema, known === undefined ? strictOptions : lenientOptions)
  return (input: unknown): Effect.Effect<A, ValidationError> => {
    const unknown = known === undefined ? [] : unknownFields(input, known)
    const decoded = decode(input)
    if (unknown.length === 0) {
      return Either.isRight(decoded) ? Effect.succeed(decoded.right) : Effect.fail(toValidationError(decoded.left))
    }
    const issues = Either.isLeft(decoded) ? [...unknown, ...toValidationError(decoded.left).issues] : unknown
    return Effect.fail(new ValidationError({ issues: byPointerFirstPerField(issues) }))
  }
}

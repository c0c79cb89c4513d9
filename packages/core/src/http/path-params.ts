import { NotFound } from "@accord/domain"
import { Exit, Result, Schema, SchemaAST, type SchemaIssue } from "effect"

/** The field an issue is about (the first when several fail), or undefined when it is about the whole input. */
const fieldOf = (issue: SchemaIssue.Issue): PropertyKey | undefined =>
  issue._tag === "Pointer" ? issue.path[0] : issue._tag === "Composite" ? fieldOf(issue.issues[0]) : undefined

/**
 * Compiles a path parameters decoder once, answering a plain `Result` as the body decoder does. A value a parameter's
 * Schema refuses names nothing there is, so it is a NotFound, not a validation error (docs/api.md, "Precise rules":
 * an id outside its charset is 404); made once per parameter, as such answers carry no request data.
 */
export const pathParamsDecoderFor = <S extends Schema.Decoder<unknown>>(schema: S) => {
  const notFound = new Map<PropertyKey, NotFound>()
  for (const field of SchemaAST.isObjects(schema.ast) ? schema.ast.propertySignatures : [])
    notFound.set(field.name, new NotFound({ resource: `path parameter ${String(field.name)}` }))
  const anyParameter = new NotFound({ resource: "path parameters" })
  const decode = Schema.decodeUnknownExit(schema)
  return (input: unknown): Result.Result<S["Type"], NotFound> => {
    const decoded = decode(input)
    if (Exit.isSuccess(decoded)) return Result.succeed(decoded.value)
    const failure = decoded.cause.reasons.find((reason) => reason._tag === "Fail")
    const field = failure === undefined ? undefined : fieldOf(failure.error.issue)
    return Result.fail((field === undefined ? undefined : notFound.get(field)) ?? anyParameter)
  }
}

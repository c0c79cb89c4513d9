import type { QuerySchema } from "@accord/contract"
import { Exit, Result, Schema } from "effect"
import { problem, type Problem } from "./problem.js"

const INVALID_QUERY = problem("invalid_query")

/**
 * Compiles an operation's query decoder once (docs/api.md, "Precise rules"): the raw query (after `?`, still
 * percent-encoded) read as `application/x-www-form-urlencoded`; a parameter the operation does not list, one sent
 * twice, or a value its Schema refuses is 400 `invalid_query`, which carries no request data, so it is made once.
 */
export const queryDecoderFor = (schema: QuerySchema) => {
  const names = new Set(Object.keys(schema.fields))
  const decode = Schema.decodeUnknownExit(schema)
  return (query: string | undefined): Result.Result<unknown, Problem> => {
    const values: Record<string, string> = {}
    if (query !== undefined && query !== "") {
      for (const [name, value] of new URLSearchParams(query)) {
        if (!names.has(name) || Object.hasOwn(values, name)) return Result.fail(INVALID_QUERY)
        values[name] = value
      }
    }
    const decoded = decode(values)
    return Exit.isSuccess(decoded) ? Result.succeed(decoded.value) : Result.fail(INVALID_QUERY)
  }
}

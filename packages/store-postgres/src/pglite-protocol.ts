import { parse, type PGlite, protocol } from "@electric-sql/pglite"
import type { PgliteDatabase } from "./pglite-executor.js"

/** A scalar parameter as text in PostgreSQL's input syntax; undefined when it is not one of the types written so. */
const scalarText = (value: unknown): string | undefined => {
  if (typeof value === "string") return value
  if (typeof value === "number" || typeof value === "bigint") return String(value)
  if (typeof value === "boolean") return value ? "t" : "f"
  if (value instanceof Date) return value.toISOString()
  return undefined
}

/**
 * An array as PostgreSQL's array literal (`{"a","b",NULL}`, nested arrays nested), as node-postgres writes one: every
 * element quoted, its backslashes and double quotes escaped, so commas, braces and spaces in it are data.
 */
const arrayText = (values: ReadonlyArray<unknown>): string =>
  `{${values
    .map((value) => {
      if (value === null || value === undefined) return "NULL"
      if (Array.isArray(value)) return arrayText(value)
      const text = scalarText(value)
      if (text === undefined) throw new TypeError(`a statement parameter of an unsupported type (${typeof value})`)
      return `"${text.replace(/[\\"]/g, "\\$&")}"`
    })
    .join(",")}}`

/** A parameter as text in PostgreSQL's input syntax, which the server then reads as the type it inferred. */
const textOf = (value: unknown): string | null => {
  if (value === null || value === undefined) return null
  if (Array.isArray(value)) return arrayText(value)
  const text = scalarText(value)
  if (text === undefined) throw new TypeError(`a statement parameter of an unsupported type (${typeof value})`)
  return text
}

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const all = new Uint8Array(parts.reduce((length, part) => length + part.length, 0))
  let offset = 0
  for (const part of parts) {
    all.set(part, offset)
    offset += part.length
  }
  return all
}

/**
 * A PGlite database whose `query` is one call into PostgreSQL per statement. PGlite's own `query` makes six (Parse,
 * Describe the statement to learn the parameters' types, Bind, Describe the portal, Execute, Sync), each a pass
 * through its WebAssembly main loop; here the messages go in one buffer through `execProtocol`, built with PGlite's
 * own protocol serializer and read with its own result parser. Parameters go as text, which the server reads as the
 * types it inferred, as it does for PGlite's `query`. A parameterised text is parsed once per database under a name
 * (a prepared statement) and then only bound and executed; a text without parameters is one simple Query.
 */
export const oneCallQueries = (db: PGlite): PgliteDatabase => {
  const names = new Map<string, string>()
  let named = 0
  return {
    query: async (text, params = []) => {
      // First, so that a parameter it cannot write leaves no name behind for a statement never parsed.
      const values = params.map(textOf)
      let name = names.get(text)
      const parseNow = params.length > 0 && name === undefined
      if (parseNow) {
        name = `accord_${++named}`
        names.set(text, name)
      }
      const message =
        name === undefined
          ? protocol.serialize.query(text)
          : concat([
              ...(parseNow ? [protocol.serialize.parse({ name, text })] : []),
              protocol.serialize.bind({ statement: name, values }),
              protocol.serialize.describe({ type: "P" }),
              protocol.serialize.execute({}),
              protocol.serialize.sync()
            ])
      try {
        const { messages } = await db.execProtocol(message)
        return { rows: parse.parseResults(messages, db.parsers).at(-1)?.rows ?? [] }
      } catch (error) {
        // The Parse may have failed with it: the next use parses under a new name (an old one may exist, unused).
        if (parseNow) names.delete(text)
        throw error
      }
    },
    close: () => db.close()
  }
}

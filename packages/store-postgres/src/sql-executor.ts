import { Effect, Schema } from "effect"
import type { Unavailable } from "@accord/domain"

/** One connection's worth of statements: a single SQL statement with `$n` parameters, rows as the driver gives them. */
export interface SqlClient {
  readonly query: (text: string, params?: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<unknown>, Unavailable>
}

/**
 * What the store needs from a database: single statements, and transactions that run on one connection and either
 * commit or roll back. Connection-level failures are `Unavailable`; any other SQL error is a defect.
 */
export interface SqlExecutor extends SqlClient {
  /**
   * Runs `body` inside BEGIN/COMMIT on one connection. A failure, defect or interruption of `body` rolls back; the
   * body's own errors pass through unchanged.
   */
  readonly transaction: <A, E, R>(
    body: (tx: SqlClient) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | Unavailable, R>
}

/**
 * Rows come from outside the program, so they are parsed like any other input: a row that does not have the shape
 * the statement promises is a defect (a migration and the code disagree), never a silently wrong value.
 */
export const rowsOf = <A>(schema: Schema.Decoder<A>) => {
  const decode = Schema.decodeUnknownEffect(Schema.Array(schema))
  return (rows: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<A>> => Effect.orDie(decode(rows))
}

/** Runs a statement and parses its rows. */
export const queryRows = <A>(schema: Schema.Decoder<A>) => {
  const parse = rowsOf(schema)
  return (
    client: SqlClient,
    text: string,
    params?: ReadonlyArray<unknown>
  ): Effect.Effect<ReadonlyArray<A>, Unavailable> => Effect.flatMap(client.query(text, params), parse)
}

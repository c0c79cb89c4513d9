import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Result } from "effect"
import { Unavailable } from "@accord/domain"
import { DatabaseTimeout, fromDriverError, isConnectionError, isStoreFull } from "@accord/store-postgres"

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code })

describe("isConnectionError", () => {
  const outages: ReadonlyArray<readonly [string, unknown]> = [
    ["refused", withCode("connect ECONNREFUSED 127.0.0.1:1", "ECONNREFUSED")],
    ["reset", withCode("read ECONNRESET", "ECONNRESET")],
    ["broken pipe", withCode("write EPIPE", "EPIPE")],
    ["admin shutdown", withCode("terminating connection due to administrator command", "57P01")],
    ["crash shutdown", withCode("terminating connection because of crash of another server process", "57P02")],
    ["starting up", withCode("the database system is starting up", "57P03")],
    ["too many connections", withCode("sorry, too many clients already", "53300")],
    ["connection exception class 08", withCode("connection failure", "08006")],
    ["lost connection", new Error("Connection terminated unexpectedly")],
    ["pool connect timeout", new Error("timeout exceeded when trying to connect")],
    [
      "connect timeout (wrapped)",
      new Error("Connection terminated due to connection timeout", { cause: new Error("x") })
    ],
    ["client already broken", new Error("Client has encountered a connection error and is not queryable")],
    ["happy eyeballs", new AggregateError([withCode("connect ECONNREFUSED ::1:5432", "ECONNREFUSED")], "")],
    ["cause chain", new Error("wrapper", { cause: withCode("read ECONNRESET", "ECONNRESET") })]
  ]
  for (const [label, error] of outages) {
    it(`an outage: ${label}`, () => expect(isConnectionError(error)).toBe(true))
  }

  const bugs: ReadonlyArray<readonly [string, unknown]> = [
    ["unique violation", withCode("duplicate key value violates unique constraint", "23505")],
    ["syntax error", withCode("syntax error at or near", "42601")],
    ["undefined column", withCode("column does not exist", "42703")],
    ["deadlock", withCode("deadlock detected", "40P01")],
    ["pool used after end", new Error("Cannot use a pool after calling end on the pool")],
    ["not an error", "ECONNREFUSED"],
    ["nothing", undefined]
  ]
  for (const [label, error] of bugs) {
    it(`not an outage: ${label}`, () => expect(isConnectionError(error)).toBe(false))
  }

  it.effect("fromDriverError: an outage or a timeout is Unavailable(store_unreachable), anything else a defect", () =>
    Effect.gen(function* () {
      const refused = withCode("connect ECONNREFUSED", "ECONNREFUSED")
      expect(yield* Effect.flip(fromDriverError(refused))).toMatchObject({
        _tag: "Unavailable",
        reason: "store_unreachable",
        retryAfterSeconds: 1,
        cause: refused
      })
      // A database that did not answer in time: our own bound, the server's statement_timeout, or its
      // idle-in-transaction one. None of them is a bug.
      for (const late of [
        new DatabaseTimeout(5000),
        withCode("canceling statement due to statement timeout", "57014"),
        withCode("terminating connection due to idle-in-transaction timeout", "25P03")
      ]) {
        expect(yield* Effect.flip(fromDriverError(late))).toMatchObject({
          _tag: "Unavailable",
          reason: "store_unreachable",
          cause: late
        })
      }
      const violation = withCode("duplicate key", "23505")
      const exit = yield* Effect.exit(fromDriverError(violation))
      expect(Exit.isFailure(exit) ? Result.getOrUndefined(Cause.findDefect(exit.cause)) : undefined).toBe(violation)
    })
  )
})

describe("isStoreFull", () => {
  const full: ReadonlyArray<readonly [string, unknown]> = [
    // As PGlite reports its full disk when a table cannot grow (measured on a tiny tmpfs), and PostgreSQL its own.
    ["disk full", withCode('could not extend file "base/5/16385": No space left on device', "53100")],
    ["out of memory", withCode("out of memory", "53200")],
    ["insufficient resources", withCode("insufficient resources", "53000")],
    ["ENOSPC from a file system", withCode("ENOSPC: no space left on device, write", "ENOSPC")],
    ["EDQUOT (a quota)", withCode("EDQUOT: disk quota exceeded, write", "EDQUOT")],
    ["cause chain", new Error("wrapper", { cause: withCode("could not write", "53100") })]
  ]
  for (const [label, error] of full) {
    it(`full: ${label}`, () => expect(isStoreFull(error)).toBe(true))
  }
  for (const [label, error] of [
    ["too many connections (a refused connection, store_unreachable)", withCode("too many clients", "53300")],
    ["unique violation", withCode("duplicate key", "23505")],
    ["connection refused", withCode("connect ECONNREFUSED", "ECONNREFUSED")],
    ["nothing", undefined]
  ] as const) {
    it(`not full: ${label}`, () => expect(isStoreFull(error)).toBe(false))
  }

  it.effect("fromDriverError: a full disk is Unavailable(store_full), told to onStoreFull, never a defect (500)", () =>
    Effect.gen(function* () {
      const diskFull = withCode('could not extend file "base/5/16385": No space left on device', "53100")
      const told: Array<unknown> = []
      const exit = yield* Effect.exit(fromDriverError(diskFull, (cause) => told.push(cause)))
      expect(exit).toEqual(Exit.fail(new Unavailable({ reason: "store_full", retryAfterSeconds: 1, cause: diskFull })))
      expect(told).toEqual([diskFull])
      // An outage of the connection is not a full store: not told.
      yield* Effect.flip(fromDriverError(withCode("connect ECONNREFUSED", "ECONNREFUSED"), (cause) => told.push(cause)))
      expect(told).toHaveLength(1)
    })
  )
})

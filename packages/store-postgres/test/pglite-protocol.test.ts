import { PGlite } from "@electric-sql/pglite"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { oneCallQueries, type PgliteDatabase } from "@accord/store-postgres"

let pglite: PGlite
let db: PgliteDatabase

beforeAll(async () => {
  pglite = await PGlite.create()
  db = oneCallQueries(pglite)
})
afterAll(() => pglite.close())

describe("oneCallQueries: a statement in one call into PGlite", () => {
  it("sends parameters as text the server reads as the types it inferred, and parses rows as PGlite.query does", async () => {
    await db.query("CREATE TABLE typed (t text, i integer, b boolean, at timestamptz(3), maybe text)")
    const at = new Date("2030-01-01T00:00:00.123Z")
    const text = "INSERT INTO typed VALUES ($1, $2, $3, $4, $5) RETURNING *"
    const params = ["é, 'quoted'", -15, false, at, null]
    const { rows } = await db.query(text, params)
    expect(rows).toEqual([{ t: "é, 'quoted'", i: -15, b: false, at, maybe: null }])
    // The same text again: bound to the statement prepared the first time.
    expect((await db.query(text, ["x", 1, true, at, "y"])).rows).toEqual([{ t: "x", i: 1, b: true, at, maybe: "y" }])
    expect((await pglite.query("SELECT * FROM typed ORDER BY i")).rows).toEqual([
      ...rows,
      { t: "x", i: 1, b: true, at, maybe: "y" }
    ])
  })

  it("a statement whose Parse failed is parsed again next time (not bound to a name that was never prepared)", async () => {
    const text = "SELECT n FROM later WHERE n = $1"
    await expect(db.query(text, [1])).rejects.toMatchObject({ code: "42P01" })
    await db.query("CREATE TABLE later (n integer)")
    await db.query("INSERT INTO later VALUES ($1)", [1])
    expect((await db.query(text, [1])).rows).toEqual([{ n: 1 }])
  })

  it("a statement that failed when executed still works afterwards, and so does the database", async () => {
    await db.query("CREATE TABLE once (k text PRIMARY KEY)")
    const insert = "INSERT INTO once VALUES ($1) RETURNING k"
    expect((await db.query(insert, ["a"])).rows).toEqual([{ k: "a" }])
    await expect(db.query(insert, ["a"])).rejects.toMatchObject({ code: "23505" })
    expect((await db.query(insert, ["b"])).rows).toEqual([{ k: "b" }])
    expect((await db.query("SELECT count(*)::int AS n FROM once")).rows).toEqual([{ n: 2 }])
  })

  it("writes an array parameter as PostgreSQL's array literal: quotes, backslashes, commas, braces and NULL are data", async () => {
    // Issue 35: the relay's statements pass the sinks' names as text[]; refused here, they ended delivery on PGlite.
    const names = [
      "webhook:0123",
      'a "quoted" name',
      "back\\slash",
      "with, comma",
      "{braces}",
      " spaced ",
      "",
      "NULL",
      "é"
    ]
    expect((await db.query("SELECT $1::text[] AS names", [names])).rows).toEqual([{ names }])
    expect((await db.query("SELECT $1::text[] AS names", [["x", null]])).rows).toEqual([{ names: ["x", null] }])
    expect((await db.query("SELECT $1::text[] AS names", [[]])).rows).toEqual([{ names: [] }])
    expect((await db.query("SELECT $1::integer[] AS n", [[1, -2, 3]])).rows).toEqual([{ n: [1, -2, 3] }])
    expect((await db.query("SELECT $1::boolean[] AS b", [[true, false]])).rows).toEqual([{ b: [true, false] }])
    expect(
      (
        await db.query("SELECT $1::integer[] AS n", [
          [
            [1, 2],
            [3, 4]
          ]
        ])
      ).rows
    ).toEqual([
      {
        n: [
          [1, 2],
          [3, 4]
        ]
      }
    ])
    expect((await db.query("SELECT 'b' = ANY($1::text[]) AS found", [["a", "b"]])).rows).toEqual([{ found: true }])
  })

  it("refuses a parameter it cannot write as text, without sending anything", async () => {
    await expect(db.query("SELECT $1::text AS x", [{ an: "object" }])).rejects.toThrow(TypeError)
    await expect(db.query("SELECT $1::text[] AS x", [[{ an: "object" }]])).rejects.toThrow(TypeError)
    expect((await db.query("SELECT $1::text AS x", ["fine"])).rows).toEqual([{ x: "fine" }])
  })
})

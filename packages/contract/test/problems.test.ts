import { FIELD_ISSUE_CODES } from "@accord/domain/values"
import { isProblemWithCode, PROBLEM_CODES, ProblemSchema, type ProblemCode } from "@accord/contract"
import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import fc from "fast-check"

// `isProblemWithCode` is ProblemSchema in plain code, for a client that carries no Schema (@accord/client): on any
// value, with any list of codes, it must say what ProblemSchema with `code` narrowed to that list says.

/** The contract's ProblemSchema with `code` narrowed to `codes`, as `@accord/client/validated` decodes a problem. */
const schemaAccepts = (codes: ReadonlyArray<ProblemCode>) => {
  const decode = Schema.decodeUnknownResult(
    ProblemSchema.mapFields((fields) => ({ ...fields, code: Schema.Literals(codes) }))
  )
  return (input: unknown): boolean => Result.isSuccess(decode(input))
}

/** Any JS value, with the odd ones a Schema and a hand-written check may tell apart differently. */
const anything = fc.anything({
  withBoxedValues: true,
  withNullPrototype: true,
  withSparseArray: true,
  withObjectString: true
})

const DROP = Symbol("drop the key")

/** Values near a field's edge: right type but wrong value, or another JSON type. */
const oddValue = fc.constantFrom<unknown>(undefined, null, -0, Number.NaN, Infinity, 1.5, 1e21, "400", [], {}, true)

/**
 * An object built from a valid one: each key kept, dropped or given an odd value, and a few keys the Schema does not
 * name, so that a good part of the samples is valid and the rest is invalid in one place or two.
 */
const mutated = (valid: fc.Arbitrary<Readonly<Record<string, unknown>>>, keys: ReadonlyArray<string>) =>
  fc
    .tuple(
      valid,
      fc.array(
        fc.tuple(fc.oneof(fc.constantFrom(...keys), fc.string()), fc.oneof(fc.constant(DROP), oddValue, anything)),
        {
          maxLength: 2
        }
      )
    )
    .map(([object, changes]) => {
      const result: Record<string, unknown> = { ...object }
      for (const [key, value] of changes) {
        if (value === DROP) delete result[key]
        else result[key] = value
      }
      return result
    })

const validFieldProblem = fc.record({
  pointer: fc.string(),
  code: fc.constantFrom(...FIELD_ISSUE_CODES),
  detail: fc.string()
})
const fieldProblem = mutated(validFieldProblem, ["pointer", "code", "detail"])

const problem = mutated(
  fc.record(
    {
      type: fc.constant("about:blank"),
      title: fc.string(),
      status: fc.integer({ min: 100, max: 599 }),
      detail: fc.string(),
      code: fc.constantFrom(...PROBLEM_CODES),
      errors: fc.oneof(
        fc.array(fieldProblem, { maxLength: 3 }),
        fc.sparseArray(fieldProblem, { maxLength: 3 }),
        fc.array(validFieldProblem, { maxLength: 3 })
      )
    },
    { requiredKeys: ["type", "title", "status", "detail", "code"] }
  ),
  ["type", "title", "status", "detail", "code", "errors"]
)

/** A problem-like object, sometimes inherited from rather than owned, sometimes inside an array; or anything at all. */
const input = fc.oneof(
  { arbitrary: problem, weight: 6 },
  { arbitrary: problem.map((inherited) => Object.create(inherited) as unknown), weight: 1 },
  { arbitrary: problem.map((owned) => Object.assign([], owned) as unknown), weight: 1 },
  { arbitrary: anything, weight: 1 }
)

const codeLists = fc.subarray([...PROBLEM_CODES], { minLength: 1 })

describe("isProblemWithCode (problems.ts), ProblemSchema in plain code", () => {
  it("accepts what ProblemSchema narrowed to the same codes accepts, and nothing else", () => {
    let accepted = 0
    fc.assert(
      fc.property(input, codeLists, (value, codes) => {
        const expected = schemaAccepts(codes)(value)
        if (expected) accepted += 1
        expect(isProblemWithCode(value, codes)).toBe(expected)
      }),
      { numRuns: 3000 }
    )
    // The samples test both answers: a good share of them are problems.
    expect(accepted).toBeGreaterThan(100)
  })

  it("with every code, accepts what ProblemSchema itself accepts", () => {
    const accepts = Schema.is(ProblemSchema)
    fc.assert(
      fc.property(input, (value) => {
        expect(isProblemWithCode(value, PROBLEM_CODES)).toBe(accepts(value))
      }),
      { numRuns: 1000 }
    )
  })
})

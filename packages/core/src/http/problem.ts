import { problemDocument, type Problem } from "@accord/contract"

// A problem's code, status, detail and headers, and how each domain error is answered, are the contract's
// (domain-errors.ts); core writes the body.
export { MAX_LISTED_FIELD_ISSUES, problem, problemOf, type Problem } from "@accord/contract"

/** The problem+json body: exactly type, title, status, detail, code, and errors only for field problems. */
export const problemBody = (problem: Problem): string => JSON.stringify(problemDocument(problem))

import { Schema } from "effect"

/**
 * A check that accepts every value and only adds to the generated JSON Schema. The document describes the wire
 * form, while some rules run after a normalising step (an email's bounds apply once it is trimmed); this states those
 * rules on the wire form without checking them twice.
 */
export const describedAs = (fragment: { readonly [key: string]: unknown }) =>
  Schema.makeFilter<unknown>(() => true, { toJsonSchema: () => fragment })

import type { RulesetDefinition } from "@stoplight/spectral-core"
import { oas } from "@stoplight/spectral-rulesets"

/*
 * The rules the OpenAPI document is linted with (openapi-lint.test.ts; docs/api.md, "OpenAPI document"): Spectral's
 * `spectral:oas` (its recommended rules, what `extends: spectral:oas` means in a .spectral.yaml) and Redocly's
 * `recommended`, each with exactly one rule turned off: the one against paths that end in `/`. SPEC fixes the paths
 * with their trailing slash (`/plans/v1/subscription-plans/public/`, `/users/v1/preferences/language/`,
 * `/payments/v1/payment-methods/{id}/`), and the server answers both forms (docs/api.md, "Routes"); the document
 * lists them as SPEC writes them. Every other rule stays at its ruleset's severity.
 */

/** Spectral: `spectral:oas` (recommended) less `path-keys-no-trailing-slash`. */
export const spectralRuleset: RulesetDefinition = {
  extends: [[oas as RulesetDefinition, "recommended"]],
  rules: { "path-keys-no-trailing-slash": "off" }
}

/** Redocly: `recommended` less `no-path-trailing-slash`, as a redocly.yaml would say it. */
export const redoclyConfig = {
  extends: ["recommended"],
  rules: { "no-path-trailing-slash": "off" }
} as const

/**
 * The warnings left, each with its reason; the test fails on any other, so a new one is either fixed or explained
 * here. Both ask for facts about a deployment that the library cannot know: who to contact about the API
 * (`info.contact`) and the terms it may be used on (`info.license`) are the operator's to state. The source code's
 * MIT licence is not the licence of someone's running service.
 */
export const EXPECTED_WARNINGS = {
  spectral: ["info-contact"],
  redocly: ["info-license"]
} as const

import type { Audit } from "./audit.js"

/**
 * `audits` as a Markdown table (id, level, needs, title), in their order: the conformance README's list, written by
 * `npm run generate`, and what a runner may print for its own list.
 */
export const auditTable = (audits: ReadonlyArray<Audit>): string =>
  [
    "| id | level | needs | title |",
    "|---|---|---|---|",
    ...audits.map(
      (audit) =>
        `| \`${audit.id}\` | ${audit.level} | ${audit.needs.join(", ")} | ${audit.title.replaceAll("|", "\\|")} |`
    )
  ].join("\n")

/** Where the conformance README keeps its generated list. */
export const README_AUDITS_BEGIN =
  "<!-- audits: written by `npm run generate` (auditTable); a test fails while it differs -->"
export const README_AUDITS_END = "<!-- end of audits -->"

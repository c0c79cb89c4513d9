import { PIPELINE, type PipelineCheck } from "./checks.js"
import { DOMAIN_ERRORS } from "./domain-errors.js"
import type { Access, ErasedOperationDocs } from "./operation.js"
import { OPERATION_DOCS } from "./operation-docs.js"
import { sunsetHeaderValue } from "./deprecation.js"
import { aliasRoutes, apiRoutes } from "./operations.js"
import { PROBLEMS, type ProblemCode } from "./problems.js"

// The tables docs/api.md shows of the declarations ("Routes", "Errors"), written by `npm run generate`; a test fails
// while the page differs from them. The page's prose explains them; the rows are never typed by hand.

const WHO: Readonly<Record<Access, string>> = {
  public: "nobody (no credential)",
  anyCredential: "any valid credential",
  user: "a user credential"
}

const row = (cells: ReadonlyArray<string>): string => `| ${cells.join(" | ")} |`

/** Every operation, in the route table's order: method, path (under `prefix`), who may call it, success, summary. */
export const routesTable = (prefix = "/api"): string => {
  const docs = OPERATION_DOCS as Readonly<Record<string, ErasedOperationDocs>>
  const rows = apiRoutes.flatMap((route) =>
    route.operations.map((operation) =>
      row([
        operation.method,
        `\`${prefix}${operation.path}\``,
        WHO[operation.access],
        String(operation.success.status),
        (docs[operation.operationId]?.summary ?? "") + (operation.deprecation === undefined ? "" : " (**deprecated**)")
      ])
    )
  )
  // docs/api.md, "Versioning": each alias after the table, marked, with its successor and default sunset.
  const aliasRows = aliasRoutes.map(({ operation, path, deprecation }) =>
    row([
      operation.method,
      `\`${prefix}${path}\``,
      WHO[operation.access],
      String(operation.success.status),
      `**deprecated** alias of \`${prefix}${operation.path}\`` +
        (deprecation.sunsetAt === undefined
          ? ""
          : `, 410 \`gone\` from ${sunsetHeaderValue(deprecation.sunsetAt)} by default`)
    ])
  )
  return [
    row(["method", "path", "who", "success", "what"]),
    row(["---", "---", "---", "---", "---"]),
    ...rows,
    ...aliasRows
  ].join("\n")
}

const answers = (codes: ReadonlyArray<ProblemCode>): string =>
  codes.map((code) => `${PROBLEMS[code].status} \`${code}\``).join(", ")

const headersOf = (check: PipelineCheck): string =>
  [
    ...Object.keys(check.answerHeaders ?? {}),
    ...(check.laterAnswersCarry ?? []).map((name) => `${name} (later answers)`)
  ]
    .map((name) => `\`${name}\``)
    .join(", ")

/**
 * What the use-case step answers: each domain error some operation declares, with its codes and headers
 * (`DOMAIN_ERRORS`).
 */
const declaredErrors = (): string => {
  const declaredByAny = new Set(apiRoutes.flatMap((route) => route.operations.flatMap((operation) => operation.errors)))
  return Object.entries(DOMAIN_ERRORS)
    .filter(([tag]) => declaredByAny.has(tag as keyof typeof DOMAIN_ERRORS))
    .map(([tag, declared]) => {
      const headers = Object.keys(declared.headers)
      return `${tag}: ${answers(declared.codes)}${headers.length === 0 ? "" : ` (${headers.map((name) => `\`${name}\``).join(", ")})`}`
    })
    .join("; ")
}

/** The order of checks (`PIPELINE`): what each refuses, its answers with their statuses, and the headers it adds. */
export const errorsTable = (): string => {
  const rows = PIPELINE.map((check: PipelineCheck, index) =>
    row([
      String(index + 1),
      `\`${check.id}\``,
      check.refuses,
      check.id === "use-case"
        ? declaredErrors()
        : check.id === "if-none-match"
          ? "304 Not Modified"
          : answers(check.codes),
      headersOf(check)
    ])
  )
  return [row(["#", "check", "refuses", "answers", "headers"]), row(["---", "---", "---", "---", "---"]), ...rows].join(
    "\n"
  )
}

/** Where docs/api.md holds each generated table: the line before it, the line after it, and the table. */
export const API_DOC_TABLES: ReadonlyArray<{
  readonly begin: string
  readonly end: string
  readonly table: () => string
}> = [
  {
    begin: "<!-- generated: routes (npm run generate, from the contract's operations) -->",
    end: "<!-- end generated -->",
    table: () => routesTable()
  },
  {
    begin: "<!-- generated: errors (npm run generate, from the contract's checks) -->",
    end: "<!-- end generated -->",
    table: () => errorsTable()
  }
]

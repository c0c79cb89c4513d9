// docs/api.md, "Versioning": a deprecated operation or path, as data. Its answers carry RFC 9745 `Deprecation`, RFC
// 8594 `Sunset` and a `Link` to its successor; the OpenAPI document marks it `deprecated`; past its sunset a path
// declared as an alias answers 410 `gone`. Plain code, no Schema: the client and the audits read the same formats.

/**
 * The dates of the spec's `/v1/payment-methods/{id}/` alias unless the server is told others (`--alias-deprecation`,
 * `--alias-sunset`; docs/api.md, "Versioning"): six months apart, the least the policy allows.
 */
export const ALIAS_DEPRECATED_AT = "2026-12-01T00:00:00Z"
export const ALIAS_SUNSET_AT = "2027-06-01T00:00:00Z"

/** What a declaration writes: instants as ISO 8601 text (or Dates), checked when the declaration is made. */
export interface DeprecationSpec {
  /** When it is (or was) deprecated: `Deprecation: @<seconds>`. */
  readonly deprecatedAt: Date | string
  /** When it stops being answered: `Sunset: <HTTP-date>`, never before `deprecatedAt`. Absent: no date set yet. */
  readonly sunsetAt?: Date | string
  /**
   * The successor, relative to the mount prefix (`/payments/v1/payment-methods/{id}/`), as `Link: <...>;
   * rel="successor-version"`; its `{name}`s are filled from the request's path. An alias's is its operation's path.
   */
  readonly successor?: string
  /**
   * A page that explains the deprecation (`Link: <...>; rel="deprecation"`, RFC 9745 section 3): an absolute URL, or a
   * path under the mount prefix (`/docs`).
   */
  readonly docs?: string
}

/** A checked declaration: whole seconds (what the headers can say), the sunset not before the deprecation. */
export interface Deprecation {
  readonly deprecatedAt: Date
  readonly sunsetAt: Date | undefined
  readonly successor: string | undefined
  readonly docs: string | undefined
}

/** A declaration that cannot hold: refused where it is made (the contract's module, a server's options). */
export class DeprecationDeclarationError extends Error {
  override readonly name = "DeprecationDeclarationError"
}

const instant = (value: Date | string, what: string): Date => {
  const date = typeof value === "string" ? new Date(value) : value
  const ms = date.getTime()
  if (!Number.isFinite(ms)) throw new DeprecationDeclarationError(`${what} is not a date: ${String(value)}`)
  // The headers carry whole seconds; kept so, the audits and the client compare what they read with what was declared.
  return new Date(Math.floor(ms / 1000) * 1000)
}

/** Checks a declaration: real dates, and a sunset that is not before the deprecation (RFC 9745, section 5). */
export const makeDeprecation = (spec: DeprecationSpec): Deprecation => {
  const deprecatedAt = instant(spec.deprecatedAt, "the deprecation date")
  const sunsetAt = spec.sunsetAt === undefined ? undefined : instant(spec.sunsetAt, "the sunset date")
  if (sunsetAt !== undefined && sunsetAt.getTime() < deprecatedAt.getTime())
    throw new DeprecationDeclarationError(
      `the sunset (${sunsetAt.toISOString()}) is before the deprecation (${deprecatedAt.toISOString()})`
    )
  if (spec.successor !== undefined && !spec.successor.startsWith("/"))
    throw new DeprecationDeclarationError(`the successor ${spec.successor} is not a path under the mount prefix`)
  return { deprecatedAt, sunsetAt, successor: spec.successor, docs: spec.docs }
}

/** RFC 9745: a Structured Field Date, `@` and the Unix seconds. */
export const deprecationHeaderValue = (at: Date): string => `@${Math.floor(at.getTime() / 1000)}`

/** RFC 8594: an HTTP-date in the IMF-fixdate form (RFC 9110, 5.6.7), e.g. `Tue, 01 Jun 2027 00:00:00 GMT`. */
export const sunsetHeaderValue = (at: Date): string => at.toUTCString()

/** The `Deprecation` header's grammar as this server writes it (an sf-date: `@` and an integer). */
export const DEPRECATION_HEADER_FORMAT = /^@-?[0-9]{1,15}$/

/** The IMF-fixdate grammar (RFC 9110, 5.6.7), what `Sunset` must be. */
export const IMF_FIXDATE_FORMAT =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$/

/** What a client or an audit reads from a deprecated answer's headers. */
export interface DeprecationNotice {
  /** From `Deprecation`; undefined when it is absent or not an sf-date. */
  readonly deprecatedAt: Date | undefined
  /** From `Sunset`; undefined when it is absent or not an HTTP-date. */
  readonly sunsetAt: Date | undefined
  /** The `Link` target with rel `successor-version`, as sent. */
  readonly successor: string | undefined
  /** The `Link` target with rel `deprecation`, as sent. */
  readonly docs: string | undefined
}

/** The target of the first link in a `Link` value with `rel` (a list, RFC 8288; no `,` inside our targets). */
const linkWith = (link: string | null, rel: string): string | undefined => {
  if (link === null) return undefined
  for (const part of link.split(",")) {
    const found = /^\s*<([^>]*)>\s*((?:;[^;]*)*)$/.exec(part)
    if (found === null) continue
    const rels = /;\s*rel="?([^";]*)"?/i.exec(found[2] ?? "")?.[1]?.split(/\s+/) ?? []
    if (rels.includes(rel)) return found[1]
  }
  return undefined
}

/**
 * The deprecation an answer announces (`Deprecation`, `Sunset`, `Link`), or undefined when it carries no `Deprecation`:
 * what @accord/client surfaces and the audits check. `get` reads a header by name (a `Headers`' `get`).
 */
export const readDeprecation = (get: (name: string) => string | null): DeprecationNotice | undefined => {
  const deprecation = get("deprecation")
  if (deprecation === null) return undefined
  const sunset = get("sunset")
  const sunsetMs = sunset !== null && IMF_FIXDATE_FORMAT.test(sunset) ? Date.parse(sunset) : Number.NaN
  const link = get("link")
  return {
    deprecatedAt: DEPRECATION_HEADER_FORMAT.test(deprecation)
      ? new Date(Number(deprecation.slice(1)) * 1000)
      : undefined,
    sunsetAt: Number.isFinite(sunsetMs) ? new Date(sunsetMs) : undefined,
    successor: linkWith(link, "successor-version"),
    docs: linkWith(link, "deprecation")
  }
}

/** The headers a deprecated path's answers carry, by name as they go on the wire (docs/api.md, "Versioning"). */
export const DEPRECATION_HEADERS = ["Deprecation", "Sunset", "Link"] as const

import {
  deprecationHeaderValue,
  makeDeprecation,
  PROBLEMS,
  sunsetHeaderValue,
  type Deprecation,
  type DeprecationSpec
} from "@accord/contract"
import type { Principal } from "@accord/domain"
import { problem, type Problem } from "./problem.js"

/** Who called a deprecated path (docs/operations.md, "Metrics"): never more than the kind of credential. */
export type DeprecatedCallCredential = "user" | "application" | "none" | "unchecked"

/** A call of a deprecated path, told to the host (`HttpHandlerOptions.onDeprecatedCall`) for its metric and log. */
export interface DeprecatedCall {
  /** The route template with the prefix, e.g. `/api/v1/payment-methods/{id}/`. */
  readonly route: string
  readonly operationId: string
  /**
   * `user` or `application` for an accepted credential; `none` when it was missing or refused (or the operation is
   * public); `unchecked` past the sunset, answered 410 before any credential is read.
   */
  readonly credential: DeprecatedCallCredential
  /** Whether it was answered 410 `gone` (past the sunset). */
  readonly gone: boolean
}

/**
 * A deprecated route as the handler reads it, made once when the handler is built: the headers of its answers (no
 * per-request cost on a path without parameters; a path with some fills its successor's), and its 410 once the sunset
 * passed.
 */
export interface RouteDeprecation {
  readonly operationId: string
  /** `Deprecation`, `Sunset`, `Link` for a request whose path parameters are `params` (raw, as the router read them). */
  readonly headers: (params: Readonly<Record<string, string>>) => Readonly<Record<string, string>>
  /** The sunset in ms since the epoch; Infinity when none is set. */
  readonly sunsetMs: number
  /** The 410 `gone` naming the successor's path for these parameters. */
  readonly gone: (params: Readonly<Record<string, string>>) => Problem
}

/** The dates a host gives every alias (`HttpHandlerOptions.aliasDates`), in place of the contract's defaults. */
export interface AliasDates {
  readonly deprecatedAt?: Date
  readonly sunsetAt?: Date
}

/** The successor's path with the prefix, its `{name}`s filled from the request's (decoded) parameters. */
const fill = (template: string, params: Readonly<Record<string, string>>): string =>
  template.replace(/\{([^}]+)\}/g, (_whole, name: string) => encodeURIComponent(params[name] ?? ""))

/** A deprecation's answers under `prefix` (docs/api.md, "Versioning"). */
export const routeDeprecation = (prefix: string, operationId: string, deprecation: Deprecation): RouteDeprecation => {
  const fixed: Record<string, string> = { deprecation: deprecationHeaderValue(deprecation.deprecatedAt) }
  if (deprecation.sunsetAt !== undefined) fixed["sunset"] = sunsetHeaderValue(deprecation.sunsetAt)
  const docs =
    deprecation.docs === undefined
      ? undefined
      : `<${deprecation.docs.startsWith("/") ? prefix + deprecation.docs : deprecation.docs}>; rel="deprecation"`
  const successor = deprecation.successor === undefined ? undefined : prefix + deprecation.successor
  const linkOf = (target: string | undefined): string | undefined => {
    const links = [
      ...(target === undefined ? [] : [`<${target}>; rel="successor-version"`]),
      ...(docs === undefined ? [] : [docs])
    ]
    return links.length === 0 ? undefined : links.join(", ")
  }
  const withLink = (link: string | undefined): Readonly<Record<string, string>> =>
    link === undefined ? fixed : { ...fixed, link }
  // A successor without parameters (or none) is one header block for every request.
  const constant = successor === undefined || !successor.includes("{") ? withLink(linkOf(successor)) : undefined
  const successorOf = (params: Readonly<Record<string, string>>): string =>
    successor === undefined ? "" : fill(successor, params)
  return {
    operationId,
    headers: constant !== undefined ? () => constant : (params) => withLink(linkOf(successorOf(params))),
    sunsetMs: deprecation.sunsetAt?.getTime() ?? Number.POSITIVE_INFINITY,
    gone: (params) => problem("gone", PROBLEMS.gone.detail.sunset(successorOf(params)))
  }
}

/** An alias's deprecation with the host's dates, checked again (a sunset before the deprecation throws). */
export const withAliasDates = (deprecation: Deprecation, dates: AliasDates | undefined): Deprecation => {
  if (dates === undefined) return deprecation
  const sunsetAt = dates.sunsetAt ?? deprecation.sunsetAt
  const spec: DeprecationSpec = {
    deprecatedAt: dates.deprecatedAt ?? deprecation.deprecatedAt,
    ...(sunsetAt !== undefined && { sunsetAt }),
    ...(deprecation.successor !== undefined && { successor: deprecation.successor }),
    ...(deprecation.docs !== undefined && { docs: deprecation.docs })
  }
  return makeDeprecation(spec)
}

/** The kind of credential a deprecated call came with (never the credential). */
export const credentialKind = (caller: Principal | undefined, refused: boolean): DeprecatedCallCredential =>
  refused || caller === undefined ? "none" : caller._tag === "User" ? "user" : "application"

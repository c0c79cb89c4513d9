import { allowHeader, routePattern } from "@accord/contract"

/** Compiles route paths once: a map lookup for fixed paths, one regular expression per path with parameters. */

export interface PathMatch<E> {
  readonly route: CompiledRoute<E>
  readonly params: Readonly<Record<string, string>>
}

export interface CompiledRoute<E> {
  /** The template with the prefix, e.g. `/api/payments/v1/payment-methods/{id}/`. */
  readonly template: string
  readonly endpoints: ReadonlyMap<string, E>
  /** The `Allow` header value (`allowHeader`: the path's methods, HEAD where GET is, OPTIONS; sorted). */
  readonly allow: string
}

interface Matcher<E> {
  readonly pattern: RegExp
  /** Parameter names, in the order of the pattern's groups. */
  readonly params: ReadonlyArray<string>
  readonly route: CompiledRoute<E>
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({})

const decodeSegment = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

export interface RouteInput<E> {
  readonly path: string
  readonly exact: boolean
  readonly endpoints: ReadonlyMap<string, E>
}

/** `prefix` without its trailing slash (`""` for the root); route paths are relative to it. */
export const compileRouter = <E>(prefix: string, routes: ReadonlyArray<RouteInput<E>>) => {
  /** Routes without parameters, by every path form they answer: one lookup. */
  const literals = new Map<string, CompiledRoute<E>>()
  const matchers: Array<Matcher<E>> = []
  for (const route of routes) {
    const compiled: CompiledRoute<E> = {
      template: prefix + route.path,
      endpoints: route.endpoints,
      allow: allowHeader(route.endpoints.keys())
    }
    const { pattern, params } = routePattern(route.path, route.exact)
    if (params.length === 0) {
      // One lookup rather than a pattern: an exact route answers only its path as written without a trailing slash;
      // the others answer both forms.
      const bare = route.path.endsWith("/") ? route.path.slice(0, -1) : route.path
      literals.set(bare, compiled)
      if (!route.exact) literals.set(bare + "/", compiled)
      continue
    }
    matchers.push({ pattern, params, route: compiled })
  }

  /** Finds the route for a path (under the prefix, or none). Both slash forms match unless the route is exact. */
  return (fullPath: string): PathMatch<E> | undefined => {
    const underPrefix =
      fullPath.startsWith(prefix) && (fullPath.length === prefix.length || fullPath.charCodeAt(prefix.length) === 0x2f)
    if (!underPrefix) return undefined
    const path = fullPath.slice(prefix.length)
    const literal = literals.get(path)
    if (literal !== undefined) return { route: literal, params: NO_PARAMS }
    for (const matcher of matchers) {
      const found = matcher.pattern.exec(path)
      if (found === null) continue
      const params: Record<string, string> = {}
      // A malformed escape still matches: the operation then rejects the value after the credentials check.
      matcher.params.forEach((name, index) => {
        const raw = found[index + 1] ?? ""
        params[name] = decodeSegment(raw) ?? raw
      })
      return { route: matcher.route, params }
    }
    return undefined
  }
}

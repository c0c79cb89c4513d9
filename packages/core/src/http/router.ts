/** Compiles route paths to matchers once; matching a request is then a few string comparisons. */

export interface PathMatch<E> {
  readonly route: CompiledRoute<E>
  readonly params: Readonly<Record<string, string>>
}

export interface CompiledRoute<E> {
  /** The template relative to the prefix, e.g. `/payments/v1/payment-methods/{id}/`. */
  readonly template: string
  readonly endpoints: ReadonlyMap<string, E>
  /** The `Allow` header value: the path's methods, HEAD where GET is, OPTIONS; sorted and joined by ", ". */
  readonly allow: string
}

interface Matcher<E> {
  readonly segments: ReadonlyArray<{ readonly literal: string } | { readonly param: string }>
  readonly exact: boolean
  readonly route: CompiledRoute<E>
}

const splitPath = (path: string): Array<string> => path.split("/").slice(1)

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

export const compileRouter = <E>(routes: ReadonlyArray<RouteInput<E>>) => {
  const matchers: Array<Matcher<E>> = routes.map((route) => {
    const methods = new Set(route.endpoints.keys())
    if (methods.has("GET")) methods.add("HEAD")
    methods.add("OPTIONS")
    const withoutSlash = route.path.endsWith("/") ? route.path.slice(0, -1) : route.path
    return {
      segments: splitPath(withoutSlash).map((segment) =>
        segment.startsWith("{") && segment.endsWith("}") ? { param: segment.slice(1, -1) } : { literal: segment }
      ),
      exact: route.exact,
      route: { template: route.path, endpoints: route.endpoints, allow: [...methods].sort().join(", ") }
    }
  })

  /** Finds the route for a path relative to the prefix. Both slash forms match unless the route is exact. */
  return (path: string): PathMatch<E> | undefined => {
    // Split once per form (as sent, and without a trailing slash), not once per route tried.
    const asSent = splitPath(path)
    const withoutSlash = path.endsWith("/") ? splitPath(path.slice(0, -1)) : asSent
    for (const matcher of matchers) {
      const segments = matcher.exact ? asSent : withoutSlash
      if (segments.length !== matcher.segments.length) continue
      const params: Record<string, string> = {}
      let matched = true
      for (let i = 0; i < segments.length && matched; i++) {
        const expected = matcher.segments[i]
        const actual = segments[i] ?? ""
        if (expected === undefined) matched = false
        else if ("literal" in expected) matched = expected.literal === actual
        else {
          // A malformed escape still matches: the operation then rejects the value after the credentials check.
          if (actual === "") matched = false
          else params[expected.param] = decodeSegment(actual) ?? actual
        }
      }
      if (matched) return { route: matcher.route, params }
    }
    return undefined
  }
}

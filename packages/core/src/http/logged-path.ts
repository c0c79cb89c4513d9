/**
 * The path of a request no route matched, as a log line carries it (docs/SECURITY.md, items 2 and 16): at most
 * `LOGGED_PATH_MAX_LENGTH` characters of it, every character outside printable ASCII (and the backslash) escaped, and
 * every segment the route table does not know that is longer than `MASKED_FROM_LENGTH` characters masked. Operators
 * see what scanners probe (`/.env`, `/wp-login.php`); a credential a client put in a path stays out of the log.
 */
export const LOGGED_PATH_MAX_LENGTH = 256
export const MASKED_FROM_LENGTH = 13
export const MASK = "[masked]"

const escapeUnprintable = (text: string): string => {
  let escaped = ""
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    escaped +=
      code < 0x21 || code > 0x7e || code === 0x5c
        ? `\\x${code.toString(16).padStart(code > 0xff ? 4 : 2, "0")}`
        : text[index]
  }
  return escaped
}

/** `knownSegments`: the literal segments of the route table and its prefix, logged as they are whatever their length. */
export const loggedPath = (path: string, knownSegments: ReadonlySet<string>): string => {
  const truncated = path.length > LOGGED_PATH_MAX_LENGTH
  const segments = (truncated ? path.slice(0, LOGGED_PATH_MAX_LENGTH) : path).split("/")
  // The segment the cap cut is left out whole: a credential's first characters are not logged either.
  if (truncated) segments[segments.length - 1] = "..."
  return segments
    .map((segment, index) =>
      truncated && index === segments.length - 1
        ? segment
        : segment.length >= MASKED_FROM_LENGTH && !knownSegments.has(segment)
          ? MASK
          : escapeUnprintable(segment)
    )
    .join("/")
}

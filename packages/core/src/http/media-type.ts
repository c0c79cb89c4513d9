const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const UTF8_NAMES: ReadonlySet<string> = new Set(["utf-8", "utf8"])

/**
 * True for `application/json` with any parameters, as long as a charset parameter (quoted or not, any case) names
 * UTF-8. `+json` suffix types and everything else are refused (docs/api.md, "Precise rules": 415).
 */
export const isJsonMediaType = (header: string | undefined): boolean => {
  if (header === undefined) return false
  // What nearly every client sends, settled without splitting.
  if (header === "application/json") return true
  const [essence = "", ...parameters] = header.split(";")
  if (essence.trim().toLowerCase() !== "application/json") return false
  for (const parameter of parameters) {
    const equals = parameter.indexOf("=")
    if (equals < 0) return false
    const name = parameter.slice(0, equals).trim().toLowerCase()
    let value = parameter.slice(equals + 1).trim()
    if (!TOKEN.test(name)) return false
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1)
    if (name === "charset" && !UTF8_NAMES.has(value.toLowerCase())) return false
  }
  return true
}

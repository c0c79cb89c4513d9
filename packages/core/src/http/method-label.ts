/**
 * The methods OpenTelemetry's HTTP conventions name. A client chooses its method, so any other is reported as
 * `_OTHER`, never as sent: in metric labels and span attributes alike (docs/operations.md, "Metrics" and "Traces").
 */
export const KNOWN_HTTP_METHODS: ReadonlySet<string> = new Set([
  "CONNECT",
  "DELETE",
  "GET",
  "HEAD",
  "OPTIONS",
  "PATCH",
  "POST",
  "PUT",
  "TRACE"
])
export const OTHER_METHOD = "_OTHER"

/** The method as telemetry may carry it. */
export const methodLabel = (method: string | undefined): string =>
  method !== undefined && KNOWN_HTTP_METHODS.has(method) ? method : OTHER_METHOD

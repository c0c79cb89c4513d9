import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

/** A span as OTLP/HTTP JSON carries it, with its attributes flattened to plain values. */
export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  /** Undefined for a root span. */
  readonly parentSpanId: string | undefined
  readonly name: string
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  readonly kind: number
  readonly attributes: Readonly<Record<string, string | number | boolean>>
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number
  readonly serviceName: string | undefined
}

interface OtlpValue {
  readonly stringValue?: string
  readonly intValue?: number | string
  readonly doubleValue?: number
  readonly boolValue?: boolean
}
interface OtlpAttribute {
  readonly key: string
  readonly value: OtlpValue
}
interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes?: ReadonlyArray<OtlpAttribute>
  readonly status?: { readonly code?: number }
}
interface OtlpTraces {
  readonly resourceSpans: ReadonlyArray<{
    readonly resource?: { readonly attributes?: ReadonlyArray<OtlpAttribute> }
    readonly scopeSpans: ReadonlyArray<{ readonly spans: ReadonlyArray<OtlpSpan> }>
  }>
}

const plain = (value: OtlpValue): string | number | boolean =>
  value.stringValue ??
  (value.intValue === undefined ? undefined : Number(value.intValue)) ??
  value.doubleValue ??
  value.boolValue ??
  ""

const attributesOf = (attributes: ReadonlyArray<OtlpAttribute> = []): Record<string, string | number | boolean> =>
  Object.fromEntries(attributes.map((attribute) => [attribute.key, plain(attribute.value)]))

/**
 * An OTLP/HTTP collector in the test process: accepts `POST /v1/traces` in JSON (what the exporter sends by
 * default) and keeps every span, and every raw body for a search for secrets.
 */
export const startOtlpReceiver = async () => {
  const spans: Array<ReceivedSpan> = []
  const bodies: Array<string> = []
  const paths: Array<string> = []
  const server = createServer((request, response) => {
    let body = ""
    request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk))
    request.on("end", () => {
      paths.push(`${request.method} ${request.url} ${request.headers["content-type"]}`)
      bodies.push(body)
      const traces = JSON.parse(body) as OtlpTraces
      for (const resourceSpans of traces.resourceSpans) {
        const serviceName = attributesOf(resourceSpans.resource?.attributes)["service.name"]
        for (const scopeSpans of resourceSpans.scopeSpans) {
          for (const span of scopeSpans.spans) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId === undefined || span.parentSpanId === "" ? undefined : span.parentSpanId,
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
              statusCode: span.status?.code ?? 0,
              serviceName: typeof serviceName === "string" ? serviceName : undefined
            })
          }
        }
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    /** The base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    /** `METHOD url content-type` of each export request. */
    paths,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

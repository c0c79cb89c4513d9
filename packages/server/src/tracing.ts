import { Effect, Layer, Tracer } from "effect"
import * as OtelTracer from "@effect/opentelemetry/OtelTracer"
import { parseTraceParent, TRACE_PARENT_HEADER, TRACE_STATE_HEADER } from "@opentelemetry/core"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources"
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler
} from "@opentelemetry/sdk-trace-base"
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions"
import { headerValue, type HttpRequest, type HttpTracing } from "@accord/core"
import type { TracingConfig, TracesSampler } from "./config.js"

/** How long close() waits for the last spans to reach the collector before giving up on them. */
const SHUTDOWN_TIMEOUT_MS = 5000

/** OpenTelemetry traces for one running service (docs/operations.md, "Traces"). */
export interface Tracing {
  /** Installs the tracer in the runtime, so the use case and store spans are OpenTelemetry spans too. */
  readonly layer: Layer.Layer<never>
  /** What the HTTP handler needs to make each request's server span. */
  readonly http: HttpTracing
  /** Exports what is buffered and stops the exporter; at most SHUTDOWN_TIMEOUT_MS. */
  readonly shutdown: () => Promise<void>
}

const samplerOf = (name: TracesSampler, ratio: number): Sampler => {
  switch (name) {
    case "always_on":
      return new AlwaysOnSampler()
    case "always_off":
      return new AlwaysOffSampler()
    case "traceidratio":
      return new TraceIdRatioBasedSampler(ratio)
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() })
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() })
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) })
  }
}

const single = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.join(",")

/**
 * The caller's span from W3C trace context: a valid `traceparent` makes the server span its child (sampled as the
 * caller decided, under a parent-based sampler), with `tracestate` passed on; anything else starts a new trace.
 */
export const remoteParent = (headers: HttpRequest["headers"]): Tracer.ExternalSpan | undefined => {
  const traceParent = headerValue(headers, TRACE_PARENT_HEADER)
  // Two traceparent headers name no single parent (Node keeps them apart as an array only for some headers).
  if (typeof traceParent !== "string") return undefined
  const parent = parseTraceParent(traceParent)
  if (parent === null) return undefined
  return OtelTracer.makeExternalSpan({
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: parent.traceFlags,
    traceState: single(headerValue(headers, TRACE_STATE_HEADER))
  })
}

/**
 * An OTLP/HTTP (JSON) exporter behind a batch processor. The exporter reads the other standard variables itself
 * (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION, certificates; the batch processor OTEL_BSP_*), and the
 * resource OTEL_RESOURCE_ATTRIBUTES; `service.name` is the configured one.
 */
export const makeTracing = (config: TracingConfig): Tracing => {
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName }))
  const provider = new BasicTracerProvider({
    resource,
    sampler: samplerOf(config.sampler, config.samplerRatio),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracesUrl }))]
  })
  const otelTracer = Effect.runSync(
    Effect.provideService(OtelTracer.make, OtelTracer.OtelTracer, provider.getTracer("accord"))
  )
  // Its spans only: not its `context` hook, which makes the current span OpenTelemetry's active context around every
  // step of every traced fiber, for instrumentation libraries that read it. None runs here, and that hook alone
  // cost more than the spans (docs/operations.md, "Traces": cost).
  const tracer = Tracer.make({ span: (options) => otelTracer.span(options) })
  let stopped: Promise<void> | undefined
  const shutdown = () =>
    (stopped ??= new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, SHUTDOWN_TIMEOUT_MS)
      timer.unref()
      // A collector that is down costs the spans, never the shutdown.
      provider.shutdown().then(resolve, () => resolve())
    }))
  return {
    layer: Layer.succeed(Tracer.Tracer, tracer),
    http: { tracer, remoteParent },
    shutdown
  }
}

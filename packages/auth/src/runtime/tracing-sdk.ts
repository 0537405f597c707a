import { context, propagation, trace, type Span } from '@opentelemetry/api';
import { ServerResponse, type RequestOptions } from 'node:http';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator, getRPCMetadata } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

/** Paths the orchestrator and Prometheus poll: no span for them (they would drown the traces). */
const UNTRACED = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * What the HTTP spans may say of a URL. A path can hold a secret (a Slack-style webhook target
 * keeps its token there) or a record's id, a query string search text: a server span names its
 * request by the route template alone (set once the route is known; none for an unmatched one),
 * a client span its target by scheme and host.
 */
const httpSpanUrls = {
  startIncomingSpanHook: () => ({ 'url.path': undefined, 'url.query': undefined }),
  startOutgoingSpanHook: (o: RequestOptions) => {
    const host = o.hostname ?? o.host ?? 'localhost';
    const port = o.port === undefined || o.port === null || o.port === '' ? '' : `:${o.port}`;
    return { 'url.full': `${o.protocol ?? 'http:'}//${host.includes(':') ? `[${host}]` : host}${port}` };
  },
  applyCustomAttributesOnSpan: (span: Span, _request: unknown, response: unknown) => {
    if (!(response instanceof ServerResponse)) return;
    const route = getRPCMetadata(context.active())?.route;
    if (route) span.setAttribute('url.path', route);
  },
};

/**
 * Registers the official SDK and instrumentations (loaded by tracing.ts's startTracing only when
 * tracing is on): node:http (the server span, continuing an incoming W3C `traceparent`, and client
 * spans that inject it: an MCP tool call's request back into this process becomes a child of the
 * tool call), Express (route spans), pg (one span per statement) and ioredis. The exporter reads
 * the standard OTEL_EXPORTER_OTLP_* variables (OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf, the
 * default, or http/json).
 */
export function registerTracing(service: string): TracerProvider {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME || service }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED.has((req.url ?? '').split('?')[0]!),
        ...httpSpanUrls,
      }),
      new ExpressInstrumentation(),
      // Statements only (no parameters: they carry user content), no span for a pool checkout, and
      // only inside a request (the webhook queue's polls every 100 ms would each be a trace).
      new PgInstrumentation({ enhancedDatabaseReporting: false, ignoreConnectSpans: true, requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  return provider;
}

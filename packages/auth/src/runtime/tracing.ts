import { trace } from '@opentelemetry/api';

let provider: { shutdown(): Promise<void> } | undefined;

/**
 * OpenTelemetry traces, on only when OTEL_EXPORTER_OTLP_ENDPOINT is set (see tracing-sdk.ts for
 * what is traced). The SDK and its instrumentations load only then: they were a fifth of every
 * process start (~0.2 s of CPU) with tracing off. Must run before express, pg and ioredis are
 * loaded: the process entry (main.ts) awaits it once it has read the declaration, before it loads
 * the runtime and the app.
 */
export async function startTracing(service: string): Promise<void> {
  if (!process.env.OTEL_EXPORTER_OTLP_ENDPOINT || provider) return;
  provider = (await import('./tracing-sdk.js')).registerTracing(service);
}

/** Sends the spans still buffered (at shutdown); a no-op when tracing is off. */
export async function flushTracing(): Promise<void> {
  await provider?.shutdown().catch(() => {});
}

/** The trace id of the active span (the request's, inside its handlers), for the request log line. */
export function activeTraceId(): string | undefined {
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span.spanContext().traceId : undefined;
}

import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Attributes,
  type Span,
} from '@opentelemetry/api';

// A delivery's trace links to the write that emitted its event: the event keeps the write's
// context, the worker (maybe another process) starts the delivery's span with a link to it.
// Only the OpenTelemetry API: a no-op until the runtime's startTracing registers the SDK.

/**
 * The active span's W3C `traceparent` (null when tracing is off or nothing is being traced): what
 * an outbox event keeps of the write that emitted it.
 */
export function activeTraceparent(): string | null {
  if (!trace.getActiveSpan()?.isRecording()) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/**
 * Runs `fn` in a new trace's root span (a consumer's, as the processing of a queued message is)
 * carrying a link to the span `traceparent` names, if any: a webhook delivery attempt, linked to
 * the request that wrote its event. The spans `fn` makes (the HTTP client's) are its children.
 * The span ends with `fn`, in error when `fn` throws or `failed` says so.
 */
export function inLinkedSpan<T>(
  name: string,
  traceparent: string | null,
  attributes: Attributes,
  fn: () => Promise<T>,
  failed: (result: T) => string | null,
): Promise<T> {
  const origin = traceparent ? trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent })) : undefined;
  const links = origin && trace.isSpanContextValid(origin) ? [{ context: origin }] : [];
  return trace
    .getTracer('@app/auth/webhooks')
    .startActiveSpan(name, { kind: SpanKind.CONSUMER, root: true, links, attributes }, async (span: Span) => {
      try {
        const result = await fn();
        const error = failed(result);
        if (error !== null) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
        return result;
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        span.end();
      }
    });
}

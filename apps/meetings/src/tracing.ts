import { startTracing } from '@app/auth/tracing';

// Before anything loads express, pg or ioredis (server.ts imports this first): off unless
// OTEL_EXPORTER_OTLP_ENDPOINT is set.
startTracing('meetings');

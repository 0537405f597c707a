import { main } from '@app/auth';
import { createApp } from './app.js';
import { loadConfig } from './config.js';
import { migrations } from './db/migrations/index.js';
import type { Database } from './db/schema.js';

main<ReturnType<typeof loadConfig>, Database>({ name: 'tasks', loadConfig, migrations, createApp, inProcessState: 'rate limits and idempotency records' });

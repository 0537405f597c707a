import './tracing.js';
import { runService } from '@app/auth/runtime';
import { createApp } from './app.js';
import { loadConfig } from './config.js';
import { migrations } from './db/migrations/index.js';
import type { Database } from './db/schema.js';

runService<ReturnType<typeof loadConfig>, Database>({ name: 'tasks', loadConfig, migrations, createApp, inProcessState: 'rate limits' });

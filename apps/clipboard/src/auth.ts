import type { AuthConfig } from '@app/auth/identity';
import type { Config } from './config.js';

/** The scopes a key of this service can hold. */
const SCOPES = ['clipboard:read', 'clipboard:write', 'snippets:read', 'snippets:write', 'settings:read', 'settings:write', 'webhooks'] as const;

/** The clipboard service's auth settings: read by createApp and by the admin command line, which must not load the app. */
export function authConfig(config: Pick<Config, 'allowedOrigins'>): AuthConfig {
  return { service: 'clipboard', scopes: SCOPES, allowedOrigins: config.allowedOrigins };
}

import type { AuthConfig } from '@app/auth/identity';
import type { Config } from './config.js';

/** The scopes a key of this service can hold. */
const SCOPES = ['meetings:read', 'meetings:write', 'webhooks'] as const;

/** The meetings service's auth settings: read by createApp and by the admin command line, which must not load the app. */
export function authConfig(config: Pick<Config, 'allowedOrigins'>): AuthConfig {
  return { service: 'meetings', scopes: SCOPES, allowedOrigins: config.allowedOrigins };
}

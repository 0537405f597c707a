import { idPathParameter } from '@app/http-errors/validation';
import { authBodySchemas } from './auth-routes.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './passwords.js';

/** An answer in the document's own envelope (`#/components/schemas/Error`). */
const error = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});
const json = (description: string, schema: object) => ({ description, content: { 'application/json': { schema } } });
const body = (schema: object) => ({ required: true, content: { 'application/json': { schema } } });

const account = {
  type: 'object',
  additionalProperties: false,
  required: ['accountId', 'email'],
  properties: { accountId: { type: 'string', format: 'uuid' }, email: { type: 'string' } },
};
const me = {
  type: 'object',
  additionalProperties: false,
  required: ['accountId', 'email', 'timezone'],
  properties: { ...account.properties, timezone: { type: 'string', description: 'IANA time zone' } },
};
const crossOrigin = '`cross_origin`: the `Origin` header names an origin not in ALLOWED_ORIGINS';
const badBody = error('`validation_failed` (details give each JSON pointer) or `invalid_json`');
/** What any sign-in route may answer besides its own. */
const common = {
  '413': error('`payload_too_large`: body over BODY_LIMIT_BYTES'),
  '429': {
    ...error(
      '`rate_limited`: the per-address request limit, or (login) 10 failed sign-ins for this email within 15 minutes, counted across replicas',
    ),
    headers: { 'Retry-After': { schema: { type: 'integer' } } },
  },
  '500': error('`internal_error`: a server fault (logged; nothing leaks)'),
};

/**
 * The sign-in routes of one service as OpenAPI 3.1 path items, to spread into its document's
 * `paths`. They refer to the document's own `#/components/schemas/Error` (the service's
 * envelope) and its `session` security scheme.
 */
export function authOpenApiPaths(service: string): Record<string, object> {
  const base = `/auth/${service}`;
  return {
    ...signInPaths(base, `${service}_sid`),
    [`${base}/me`]: accountPathItem(),
    ...connectedAppPaths(base, service),
  };
}

/** Sign-up, login and logout, which set or clear the session `cookie`. */
function signInPaths(base: string, cookie: string): Record<string, object> {
  const setCookie = {
    'Set-Cookie': {
      description: `\`${cookie}=<new session token>; Path=/; HttpOnly; SameSite=Lax\` (and \`Secure\` behind HTTPS)`,
      schema: { type: 'string' },
    },
  };
  return {
    [`${base}/signup`]: {
      post: {
        operationId: 'signUp',
        summary: 'Create an account with a password and sign in',
        description: `Open only when the service runs with SIGNUP=open. Passwords: ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters, no composition rules; stored as argon2id. Tasks gives the new account its personal workspace.`,
        security: [],
        requestBody: body(authBodySchemas.signUp),
        responses: {
          '201': { ...json('the new account, signed in', account), headers: setCookie },
          '400': badBody,
          '403': error(`\`signup_closed\` (SIGNUP=closed: accounts come from the operator) or ${crossOrigin}`),
          '409': error('`email_taken`: an account with this email exists'),
          ...common,
        },
      },
    },
    [`${base}/login`]: {
      post: {
        operationId: 'logIn',
        summary: 'Sign in with email and password; a new session cookie each time',
        security: [],
        requestBody: body(authBodySchemas.logIn),
        responses: {
          '200': { ...json('signed in', account), headers: setCookie },
          '400': badBody,
          '401': error(
            '`invalid_credentials`: unknown email or wrong password (the same answer, in about the same time)',
          ),
          '403': error(crossOrigin),
          ...common,
        },
      },
    },
    [`${base}/logout`]: {
      post: {
        operationId: 'logOut',
        summary: 'Sign out: the session is revoked and the cookie cleared (also without a session)',
        security: [],
        responses: {
          '204': {
            description: 'signed out',
            headers: { 'Set-Cookie': { description: `clears \`${cookie}\``, schema: { type: 'string' } } },
          },
          '403': error(crossOrigin),
          '429': common['429'],
          '500': common['500'],
        },
      },
    },
  };
}

/** GET and PATCH of the signed-in account (session only). */
function accountPathItem(): object {
  return {
    get: {
      operationId: 'getAccount',
      summary: 'The signed-in account (session only)',
      security: [{ session: [] }],
      responses: {
        '200': json('the account', me),
        '401': error('`unauthorized`: no valid session'),
        '403': error(`\`session_required\` (an API key) or ${crossOrigin}`),
        '429': common['429'],
        '500': common['500'],
      },
    },
    patch: {
      operationId: 'updateAccount',
      summary: "Change the account's time zone (session only)",
      security: [{ session: [] }],
      requestBody: body(authBodySchemas.updateAccount),
      responses: {
        '200': json('the account', me),
        '400': error(
          '`validation_failed`: an unknown time zone (path /timezone) or another invalid body; `invalid_json`',
        ),
        '401': error('`unauthorized`: no valid session'),
        '403': error(`\`session_required\` (an API key) or ${crossOrigin}`),
        ...common,
      },
    },
  };
}

/** The apps connected through OAuth: the list, and disconnecting one (session only). */
function connectedAppPaths(base: string, service: string): Record<string, object> {
  return {
    [`${base}/apps`]: {
      get: {
        operationId: 'listConnectedApps',
        summary: 'The apps (AI assistants) connected through OAuth, newest first (session only)',
        description: `Each consent an app was given at /oauth/${service}/authorize and that is still live; disconnecting one ends its tokens.`,
        security: [{ session: [] }],
        responses: {
          '200': json('the connected apps', {
            type: 'object',
            additionalProperties: false,
            required: ['items'],
            properties: {
              items: {
                type: 'array',
                maxItems: 1000,
                items: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['id', 'clientName', 'clientId', 'scopes', 'createdAt', 'lastUsedAt'],
                  properties: {
                    id: {
                      type: 'string',
                      format: 'uuid',
                      description: 'the connection (grant); DELETE it to disconnect',
                    },
                    clientName: {
                      type: 'string',
                      description: 'the name the app registered with (its client id when it gave none)',
                    },
                    clientId: { type: 'string' },
                    scopes: { type: 'array', items: { type: 'string' }, description: 'the scopes consented to' },
                    createdAt: { type: 'string', format: 'date-time' },
                    lastUsedAt: {
                      type: ['string', 'null'],
                      format: 'date-time',
                      description: 'recorded at most once a minute; null: never',
                    },
                  },
                },
              },
            },
          }),
          '401': error('`unauthorized`: no valid session'),
          '403': error(`\`session_required\` (an API key) or ${crossOrigin}`),
          '429': common['429'],
          '500': common['500'],
        },
      },
    },
    [`${base}/apps/{id}`]: {
      delete: {
        operationId: 'disconnectApp',
        summary: 'Disconnect an app: its access and refresh tokens stop working at once (session only)',
        security: [{ session: [] }],
        parameters: [idPathParameter('the connection id from the list (a UUID; anything else is 404)')],
        responses: {
          '200': json('disconnected', {
            type: 'object',
            additionalProperties: false,
            required: ['id', 'disconnected'],
            properties: { id: { type: 'string', format: 'uuid' }, disconnected: { const: true } },
          }),
          '401': error('`unauthorized`: no valid session'),
          '403': error(`\`session_required\` (an API key) or ${crossOrigin}`),
          '404': error('`not_found`: no live connection with this id for this account'),
          '429': common['429'],
          '500': common['500'],
        },
      },
    },
  };
}

/** `lastUsedAt` of a key, for each document's key schema. */
export const keyLastUsedAtSchema = {
  type: ['string', 'null'],
  format: 'date-time',
  description: 'when the key last authenticated a request (recorded at most once a minute); null: never',
} as const;

import { bool, common, dateTime, error, json, noQuery, nullable, obj, op, params, sessionOnly, str } from './shared.js';

/** An OAuth callback's query parameter (code, state, iss, error): printable ASCII (RFC 6749's VSCHAR), bounded. */
const shortStr = { type: 'string', maxLength: 512, pattern: '^[\\x20-\\x7E]*$' } as const;

// The account's connection to tasks (DESIGN "Meetings: connected"): meetings is an OAuth client
// of tasks' authorization server, identified by the Client ID Metadata Document it serves.

const connectionsSchema = obj({
  tasks: obj({
    connected: bool,
    since: { ...nullable(dateTime), description: 'When the tasks account was connected; null when it is not' },
  }),
});

const redirect = (description: string) => ({
  '302': { description, headers: { Location: { schema: str } } },
});

export const connectionsPaths = {
  '/api/me/connections': {
    get: op(
      'Account',
      'getConnections',
      'The services this account is connected to (tasks, by OAuth; browser sessions only)',
      { '200': json(connectionsSchema) },
      {},
      sessionOnly,
    ),
  },
  '/api/me/connections/tasks': {
    delete: op(
      'Account',
      'disconnectTasks',
      "Ends the grant at tasks (RFC 7009 revocation of the refresh token, so tasks' connected apps no longer list meetings) and forgets the tokens. Tasks unreachable: 503 with Retry-After, nothing forgotten.",
      { '200': json(connectionsSchema) },
      { '503': error('Tasks did not answer (unavailable); Retry-After says when to try again') },
      sessionOnly,
    ),
  },
  '/api/me/connections/tasks/start': {
    get: op(
      'Account',
      'connectTasks',
      "Starts connecting a tasks account: 302 to tasks' consent page (authorization code with PKCE S256 and a state). Tasks is found at TASKS_URL, else at the origin this request came through.",
      redirect("Tasks' authorization endpoint"),
      {},
      sessionOnly,
    ),
  },
  '/api/me/connections/tasks/callback': {
    get: op(
      'Account',
      'connectTasksCallback',
      "Where tasks' consent sends the browser back: the code is exchanged at tasks' token endpoint and the tokens stored encrypted at rest; 302 to the account page with `?tasks=connected` (or `?tasks=denied` when the user chose Deny).",
      redirect('The account page'),
      {
        '400': error(
          '`invalid_connection_state`: no connection request under way matches the state (unknown, used, older than 10 minutes, or from another issuer), or tasks refused the code',
        ),
        '503': error('Tasks did not answer (unavailable); Retry-After says when to try again'),
      },
      {
        ...sessionOnly,
        ...params({ properties: { code: shortStr, state: shortStr, iss: shortStr, error: shortStr } }),
      },
    ),
  },
  '/api/me/connections/tasks/client.json': {
    get: {
      operationId: 'getTasksClientDocument',
      tags: ['Account'],
      summary:
        "Meetings' OAuth Client ID Metadata Document: tasks fetches it by its URL (the client_id) to learn meetings' name and redirect URI. No authentication.",
      security: [],
      parameters: params(noQuery).parameters,
      responses: {
        '200': json(
          obj({
            client_id: str,
            client_name: str,
            client_uri: str,
            redirect_uris: { type: 'array', items: str },
            grant_types: { type: 'array', items: str },
            response_types: { type: 'array', items: str },
            token_endpoint_auth_method: { enum: ['none'] },
            scope: str,
          }),
        ),
        '400': error('`validation_failed`: an unknown X-Timezone (checked as on every API operation)'),
        '429': common['429'],
      },
    },
  },
};

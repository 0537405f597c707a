import { body, common, idParam, json, MAX_SNIPPETS, ref, resp, scope, timestamp, withBody } from './shared.js';

// Snippets: named texts with an optional keyword.

export const snippet = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'content', 'keyword', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    content: { type: 'string' },
    keyword: { type: ['string', 'null'] },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
} as const;

export const snippetsPaths = {
  '/api/snippets': {
    get: {
      operationId: 'listSnippets',
      tags: ['Snippets'],
      summary: 'All snippets (at most 200), by name (ignoring case), then id',
      description: scope('snippets:read'),
      responses: { 200: json(ref('SnippetList'), 'Every snippet'), ...common },
    },
    post: {
      operationId: 'createSnippet',
      tags: ['Snippets'],
      summary: 'Create a snippet',
      description: `${scope('snippets:write')} The ${MAX_SNIPPETS + 1}st snippet is 409; a keyword another snippet has (ignoring case) is 409.`,
      requestBody: body(ref('SnippetInput')),
      responses: { 201: json(ref('Snippet'), 'Created'), 409: resp('Conflict'), ...withBody },
    },
    put: {
      operationId: 'replaceSnippets',
      tags: ['Snippets'],
      summary: 'Replace every snippet, atomically',
      description: `${scope('snippets:write')} Either the whole set is stored or nothing changes. Answers the new set as GET does.`,
      requestBody: body(ref('ReplaceSnippets')),
      responses: { 200: json(ref('SnippetList'), 'The new set'), ...withBody },
    },
  },
  '/api/snippets/{id}': {
    delete: {
      operationId: 'deleteSnippet',
      tags: ['Snippets'],
      summary: 'Delete one snippet',
      description: `${scope('snippets:write')} Answers 200 \`{"deleted": 1}\`.`,
      parameters: [idParam('snippet')],
      responses: { 200: json(ref('Deleted'), 'Deleted'), 404: resp('NotFound'), ...common },
    },
  },
};

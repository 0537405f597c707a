import { body, common, idParam, json, MAX_SNIPPET_CONTENT, MAX_SNIPPETS, ref, resp, scope, timestamp, uuid, withBody } from './shared.js';

// Snippets: named texts with an optional keyword.

const snippetName = { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S', description: '1 to 100 characters, not only whitespace.' } as const;
const snippetContent = { type: 'string', minLength: 1, maxLength: MAX_SNIPPET_CONTENT, description: `1 to ${MAX_SNIPPET_CONTENT} characters.` } as const;
const snippetKeyword = {
  type: ['string', 'null'],
  maxLength: 32,
  pattern: '^[A-Za-z0-9_-]{1,32}$',
  description: 'Optional abbreviation that expands to the snippet: 1 to 32 characters [A-Za-z0-9_-], unique per account ignoring case (a duplicate is 409). null or absent: no keyword.',
} as const;

export const snippetInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'content'],
  properties: { name: snippetName, content: snippetContent, keyword: snippetKeyword },
} as const;

export const replaceSnippetsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      maxItems: MAX_SNIPPETS,
      description: `The complete new set, 0 to ${MAX_SNIPPETS} snippets (more is 400 and nothing changes). An \`id\` naming one of your snippets keeps that snippet (same id and createdAt; updatedAt changes only if a field changed); any other \`id\` is ignored and a new id is assigned. Snippets left out are deleted. Ids repeated in the set and keywords repeated in the set (ignoring case) are 400.`,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'content'],
        properties: { id: uuid, name: snippetName, content: snippetContent, keyword: snippetKeyword },
      },
    },
  },
} as const;

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

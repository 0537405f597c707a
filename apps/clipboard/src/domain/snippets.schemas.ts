import { uuidSchema } from '@app/http-errors/validation';
import { MAX_SNIPPET_CONTENT, MAX_SNIPPETS } from './limits.js';

// The request schemas of snippets (the routes compile them; the domain's types and the document come from them).

const snippetName = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  pattern: '\\S',
  description: '1 to 100 characters, not only whitespace.',
} as const;

const snippetContent = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_SNIPPET_CONTENT,
  description: `1 to ${MAX_SNIPPET_CONTENT} characters.`,
} as const;

const snippetKeyword = {
  type: ['string', 'null'],
  maxLength: 32,
  pattern: '^[A-Za-z0-9_-]{1,32}$',
  description:
    'Optional abbreviation that expands to the snippet: 1 to 32 characters [A-Za-z0-9_-], unique per account ignoring case (a duplicate is 409). null or absent: no keyword.',
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
        properties: { id: uuidSchema, name: snippetName, content: snippetContent, keyword: snippetKeyword },
      },
    },
  },
} as const;

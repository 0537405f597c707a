import type { CallOperation, McpPrompt } from '@app/auth/mcp';
import { hidePrivateContent, type Item } from './domain/mappers.js';
import { MAX_QUERY } from './domain/limits.js';

/** What the clipboard service tells an assistant on connecting, and appends to each tool. */
export const mcpInstructions =
  "The user's clipboard history (items of type text, url, html, rtf or code, newest first, favorites kept past the history " +
  'limit), text snippets with keywords, and settings. listItems pages with limit and offset. Copying the same type and ' +
  'content again moves the existing item to the top. Use the find_recent prompt to look for something copied lately.';

export const mcpToolNotes =
  'Times are ISO 8601 instants in UTC. Ids are UUIDs. Errors come back as isError with { error: "<message>" }. Item ' +
  "contents are the user's own data: quote them only as needed.";

const SHOWN_CHARACTERS = 300;

/**
 * What an assistant sees of the history: a sensitive item with `content: null`, a sealed item
 * without its ciphertext (neither is readable to it), wherever one appears in a tool result.
 */
export const withoutPrivateContent = (body: unknown): unknown =>
  hidePrivateContent(body, (item) => {
    if (item.sensitive) return { ...item, content: null };
    const { content: _sealed, ...rest } = item;
    return rest;
  });

/** The most recent items (optionally only those containing `query`), read through listItems. */
async function findRecent(args: Record<string, string>, call: CallOperation): Promise<string> {
  const wanted = Math.min(Math.max(Number.parseInt(args.count ?? '20', 10) || 20, 1), 100);
  const query = args.query?.trim().slice(0, MAX_QUERY);
  // The text search: it never matches a sensitive or sealed item; the latest of those show no content.
  const answer = await call('listItems', { limit: wanted, offset: 0, ...(query && { q: query }) });
  if (answer.status >= 400)
    throw new Error(`the clipboard service answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  const items = (answer.body as { items: Array<Omit<Item, 'content'> & { content?: string | null }> }).items;
  const lines = items.map((i) => {
    if (typeof i.content !== 'string')
      return `- ${i.createdAt} ${i.type}${i.sensitive ? ' (sensitive: content not shown)' : ' (sealed: end-to-end encrypted)'} (id ${i.id})`;
    const text =
      i.content.length > SHOWN_CHARACTERS
        ? `${i.content.slice(0, SHOWN_CHARACTERS)}… (${i.content.length} characters)`
        : i.content;
    return `- ${i.createdAt} ${i.type}${i.favorite ? ' ★' : ''} from ${i.source} (id ${i.id}):\n  ${text.replace(/\n/g, '\n  ')}`;
  });
  return [
    query ? `Find what I copied recently that matches "${args.query}".` : 'Here is what I copied most recently.',
    lines.length
      ? `Clipboard items, newest first (${lines.length}):\n${lines.join('\n')}`
      : query
        ? 'No item contains it.'
        : 'The clipboard history is empty.',
    'Tell me which item is most likely what I am looking for and why; the full content of an item is in listItems.',
  ].join('\n\n');
}

export const mcpPrompts: McpPrompt[] = [
  {
    name: 'find_recent',
    title: 'Find something I copied',
    description:
      'The latest clipboard items, or those that contain a text (the text search), for the assistant to pick from',
    arguments: [
      {
        name: 'query',
        description: 'Text the item contains (case-insensitive); empty for the latest items',
        required: false,
      },
      { name: 'count', description: 'How many items to show, 1 to 100 (default 20)', required: false },
    ],
    scopes: ['clipboard:read'],
    build: findRecent,
  },
];

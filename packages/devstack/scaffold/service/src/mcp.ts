import type { ToolTableEntry } from '@app/auth/mcp';

/** What the __name__ service tells an assistant on connecting, and appends to each tool. */
export const mcpInstructions =
  "The account's __resource__ records, each with a title and an optional url. List them (oldest first, paged with " +
  'nextCursor), read one by id, add, change or delete them; the changes feed gives every change since a sync cursor.';

export const mcpToolNotes =
  'Times are ISO 8601 instants in UTC. Ids are UUIDs. Errors come back as isError with { error: { code, message, details } }; ' +
  'details[].path names the argument at fault.';

/**
 * The __name__ service's task-level MCP tools (the `default` toolset): which operations of the
 * OpenAPI document each runs. Arguments, scopes and hints come from the document.
 */
export const mcpTools: ToolTableEntry[] = [
  {
    name: 'find___name__',
    title: 'Find __resource__ records',
    description: 'Read __resource__ records: one by id, a page of them, or every change since a sync cursor.',
    actions: { get: 'get__Resource__', list: 'list__Title__', changes: 'list__Resource__Changes' },
    compact: ['title', 'url'],
  },
  {
    name: 'change___name__',
    title: 'Change __resource__ records',
    description:
      'Add, edit or delete one or more __resource__ records in one call, each with its action (edit and delete by id).',
    batch: 'changes',
    actions: { add: 'create__Resource__', edit: 'update__Resource__', delete: 'delete__Resource__' },
    compact: ['title', 'url'],
  },
];

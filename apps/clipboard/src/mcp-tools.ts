import type { ToolTableEntry } from '@app/auth/mcp';

/**
 * The clipboard service's task-level MCP tools (the `default` toolset): which operations of the
 * OpenAPI document each runs. Arguments, scopes and hints come from the document.
 */
export const mcpTools: ToolTableEntry[] = [
  {
    name: 'find_clips',
    title: 'Find clips',
    description:
      'The clipboard history, newest first (favorites only with favorite=true; only items containing a text with query), a page at a time. Sensitive items show content null; sealed (end-to-end encrypted) items show no content.',
    actions: { list: 'listItems' },
    omit: ['q'],
    compact: ['type', 'content', 'source', 'favorite', 'createdAt'],
  },
  {
    name: 'save_clip',
    title: 'Save a clip',
    description:
      'Put text, a URL, HTML, RTF or code on the clipboard history (the same type and content again moves the existing item to the top).',
    actions: { save: 'createItem' },
  },
  {
    name: 'update_clips',
    title: 'Favorite or delete clips',
    description:
      'Star or unstar an item, delete one item, delete many by id, or clear the whole history (favorites kept as the API says).',
    actions: {
      favorite: 'toggleFavorite',
      delete: 'deleteItem',
      delete_many: 'bulkDeleteItems',
      clear_history: 'clearHistory',
    },
  },
  {
    name: 'snippets',
    title: 'Snippets',
    description: 'Reusable text snippets with keywords: list them, create one, replace the whole set, or delete one.',
    actions: { list: 'listSnippets', create: 'createSnippet', replace_all: 'replaceSnippets', delete: 'deleteSnippet' },
  },
  {
    name: 'settings',
    title: 'Clipboard settings',
    description: 'The history limit, retention and other settings: read or change them.',
    actions: { get: 'getSettings', update: 'updateSettings' },
  },
  {
    name: 'sync_clips',
    title: 'Sync clips',
    description: "Device sync: pull the changes since a cursor, or push a device's changes and get the others back.",
    actions: { pull: 'pullClipboardChanges', sync: 'syncClipboardChanges' },
    compact: ['type', 'content', 'favorite', 'updatedAt'],
  },
];

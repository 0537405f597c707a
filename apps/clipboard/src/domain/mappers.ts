import type { ItemRow } from '../db/items.repository.js';
import type { SnippetRow } from '../db/snippets.repository.js';
import type { StateRow } from '../db/state.repository.js';

export interface Item {
  id: string;
  type: string;
  content: string;
  source: string;
  favorite: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface Snippet {
  id: string;
  name: string;
  content: string;
  keyword: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Settings {
  historyLimit: number;
  retentionDays: number;
  captureEnabled: boolean;
  updatedAt: string | null;
}

/** What an account has before it changes anything (the column defaults of account_state). */
const DEFAULT_SETTINGS: Settings = Object.freeze({ historyLimit: 1000, retentionDays: 0, captureEnabled: true, updatedAt: null });

export function toItem(r: ItemRow): Item {
  return { id: r.id, type: r.type, content: r.content, source: r.source, favorite: r.favorite, createdAt: r.created_at, updatedAt: r.updated_at };
}

export function toSnippet(r: SnippetRow): Snippet {
  return { id: r.id, name: r.name, content: r.content, keyword: r.keyword, createdAt: r.created_at, updatedAt: r.updated_at };
}

export function toSettings(r: Pick<StateRow, 'history_limit' | 'retention_days' | 'capture_enabled' | 'settings_updated_at'> | undefined): Settings {
  if (!r) return { ...DEFAULT_SETTINGS };
  return { historyLimit: r.history_limit, retentionDays: r.retention_days, captureEnabled: r.capture_enabled, updatedAt: r.settings_updated_at };
}

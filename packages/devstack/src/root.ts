import { resolve } from 'node:path';

/** The repository root (this file lives at packages/devstack/dist/). */
export const repoRoot = resolve(__dirname, '..', '..', '..');

/**
 * BENCH_SMOKE=1: every scenario at a tiny scale (seconds, not minutes), as `npm test` runs the
 * bench, so a broken scenario fails CI. Its figures mean nothing.
 */
export const SMOKE = process.env.BENCH_SMOKE === '1';

/** A size of the full bench, or its stand-in in a smoke run. */
export const size = (full: number, smoke: number): number => (SMOKE ? smoke : full);

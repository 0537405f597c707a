import type pg from 'pg';
import { size } from '../size.js';
import { VOCABULARY } from '../words.js';

/** Draws from the vocabulary kept for each skew. */
const POOL = size(250_000, 20_000);
/** The most words one text takes (a meeting's shared notes: 79). */
const LONGEST = 100;

/**
 * The seeds' word pool, made once and shared by every seed (`public.bench_words`): for each skew
 * p (2 or 3), POOL independent draws from the 5,000-word vocabulary, word i+1 with the
 * probability of `floor(5000 * random()^p) = i` (Zipf-like: the lower p, the flatter). A text
 * is a run of consecutive draws from a random start: its words are as independent and as skewed
 * as the draws of one word at a time from the vocabulary the seeds made before (a text[]
 * subscript per word, which walks the array up to the word: about 1 ms for a 40-word note).
 */
export async function seedWordPool(client: pg.ClientBase): Promise<void> {
  const { rows } = await client.query<{ made: boolean }>(
    `select to_regclass('public.bench_words') is not null as made`,
  );
  if (rows[0]?.made) return;
  await client.query(`create table public.bench_words (p int, k int, w text, primary key (p, k))`);
  await client.query(
    `
    insert into public.bench_words (p, k, w)
    select d.p, d.k, v.w
    from (select p, k, 1 + floor($2::int * power(random(), p))::int as i from unnest(array[2, 3]) p, generate_series(0, $3::int - 1) k) d
    join unnest($1::text[]) with ordinality as v(w, i) on v.i = d.i`,
    [VOCABULARY, VOCABULARY.length, POOL],
  );
  await client.query('analyze public.bench_words');
}

/**
 * SQL of a text of `count` words (an SQL expression) drawn with skew `p`. Correlated with the row
 * (`count` names its columns), it is drawn again for each row; a constant `count` draws one text
 * for the statement, as a scalar subquery with no reference to the row does.
 */
export function poolWords(p: 2 | 3, count: string): string {
  return `(select string_agg(bw.w, ' ' order by bw.k) from (select floor(random() * ${POOL - LONGEST})::int as o) bw_start join public.bench_words bw on bw.p = ${p} and bw.k >= bw_start.o and bw.k < bw_start.o + (${count}))`;
}

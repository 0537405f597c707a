import { streamSuite } from '@app/devstack';
import { startTestApp } from './helpers/harness.js';

streamSuite({
  service: 'clipboard',
  path: '/api/clipboard/pull/stream',
  start: (env) => startTestApp(env),
  write: async (t, c, n) =>
    (
      await t
        .http()
        .post('/api/clipboard')
        .set('Authorization', c.auth)
        .send({ type: 'text', content: `copied ${n}`, source: 'laptop' })
        .expect(201)
    ).body.id as string,
  withoutReadScope: ['clipboard:write'],
  // What an item write does: the account's next seq (its state row, which the notice hangs on) and the item's change row.
  touch: async (client, c, id) => {
    await client.query(
      `with s as (update clipboard.account_state set seq = seq + 1 where account_id = $1 returning seq)
       insert into clipboard.changes (account_id, seq, entity, entity_id, op) select $1, s.seq, 'item', $2, 'upsert' from s
       on conflict (account_id, entity, entity_id) do update set seq = excluded.seq, op = excluded.op, changed_at = now()`,
      [c.accountId, id],
    );
  },
});

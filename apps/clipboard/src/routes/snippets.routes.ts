import type { Router } from 'express';
import type { RouteContext } from '@app/auth/runtime';
import type { Database } from '../db/schema.js';
import * as snippets from '../domain/snippets.service.js';
import { replaceSnippetsSchema, snippetInputSchema } from '../openapi.js';
import { bodyParser } from '../validation.js';

const createBody = bodyParser(snippetInputSchema);
const replaceBody = bodyParser(replaceSnippetsSchema);

/** /api/snippets: at most 200 per account, unpaginated. */
export function snippetsRoutes(router: Router, { db, guards: g }: RouteContext<Database>): void {
  router.get('/snippets', g.read('snippets:read'), async (req, res) => {
    res.json(await snippets.listSnippets(db, req.caller!.accountId));
  });
  router.post('/snippets', g.write('snippets:write'), async (req, res) => {
    res.status(201).json(await snippets.createSnippet(db, req.caller!.accountId, createBody.parse(req.body)));
  });
  router.put('/snippets', g.write('snippets:write'), async (req, res) => {
    res.json(await snippets.replaceSnippets(db, req.caller!.accountId, replaceBody.parse(req.body).items));
  });
  router.delete('/snippets/:id', g.write('snippets:write'), async (req, res) => {
    res.json(await snippets.deleteSnippet(db, req.caller!.accountId, req.params.id as string));
  });
}

import type { Router } from 'express';
import type { RouteContext } from '@app/auth/runtime';
import { errors } from '@app/http-errors';
import { compileBody, compileQuery } from '@app/http-errors/validation';
import type { Database } from '../db/schema.js';
import * as notes from '../domain/notes.service.js';
import { noteDateSchema, notePutBody, notesQuery } from '../openapi.js';
import { account } from './http.js';

const putBody = compileBody(notePutBody);
const listQuery = compileQuery(notesQuery);
const dateParam = compileBody(noteDateSchema);

/** The note's date from the path: a real YYYY-MM-DD date, else 400. */
function noteDate(raw: unknown): string {
  if (!dateParam.validate(raw)) throw errors.validation([{ path: 'date', message: 'must be a real date YYYY-MM-DD' }]);
  return raw as string;
}

export function notesRoutes(router: Router, { db }: RouteContext<Database>): void {
  router.get('/notes', async (req, res) => {
    res.json(await notes.listNotes(db, account(req), listQuery.parse(req.query)));
  });
  router.put('/notes/:date', async (req, res) => {
    const date = noteDate(req.params.date);
    const { note, created } = await notes.putNote(db, account(req), date, putBody.parse(req.body ?? {}));
    res.status(created ? 201 : 200).json(note);
  });
  router.delete('/notes/:date', async (req, res) => {
    await notes.deleteNote(db, account(req), noteDate(req.params.date));
    res.status(204).end();
  });
}

import type { Router } from 'express';
import type { RouteContext } from '@app/auth/runtime';
import { compileBody, compileQuery } from '@app/http-errors/validation';
import type { Database } from '../db/schema.js';
import * as people from '../domain/people.service.js';
import { peopleQuery, personCreateBody, personPatchBody } from '../openapi.js';
import { account, pathId } from './http.js';

const createBody = compileBody(personCreateBody);
const patchBody = compileBody(personPatchBody);
const listQuery = compileQuery(peopleQuery);

export function peopleRoutes(router: Router, { db }: RouteContext<Database>): void {
  router.get('/people', async (req, res) => {
    res.json(await people.listPeople(db, account(req), listQuery.parse(req.query)));
  });
  router.post('/people', async (req, res) => {
    res.status(201).json(await people.createPerson(db, account(req), createBody.parse(req.body ?? {})));
  });
  router.patch('/people/:id', async (req, res) => {
    const input = patchBody.parse(req.body ?? {});
    res.json(await people.updatePerson(db, account(req), pathId(req, 'Person'), input));
  });
  router.delete('/people/:id', async (req, res) => {
    res.json(await people.archivePerson(db, account(req), pathId(req, 'Person')));
  });
}

import type { Router } from 'express';
import type { RouteContext } from '@app/auth/runtime';
import { compileBody, compileQuery } from '@app/http-errors/validation';
import type { Database } from '../db/schema.js';
import * as carry from '../domain/carry.service.js';
import * as items from '../domain/items.service.js';
import * as meetings from '../domain/meetings.service.js';
import {
  carryMeetingBody,
  itemCreateBody,
  meetingCreateBody,
  meetingPatchBody,
  meetingReadQuery,
  meetingsQuery,
} from '../openapi.js';
import { account, noPrivateNotesForKeys, pathId, readsPrivate, writesPrivate } from './http.js';

const createBody = compileBody(meetingCreateBody);
const patchBody = compileBody(meetingPatchBody);
const listQuery = compileQuery(meetingsQuery);
const readQuery = compileQuery(meetingReadQuery);
const itemBody = compileBody(itemCreateBody);
const carryBody = compileBody(carryMeetingBody);

export function meetingsRoutes(router: Router, { db }: RouteContext<Database>): void {
  router.get('/meetings', async (req, res) => {
    const q = listQuery.parse(req.query);
    res.json(await meetings.listMeetings(db, account(req), q, readsPrivate(req, q.includePrivate)));
  });
  router.post('/meetings', noPrivateNotesForKeys, async (req, res) => {
    res
      .status(201)
      .json(await meetings.createMeeting(db, account(req), createBody.parse(req.body ?? {}), writesPrivate(req)));
  });
  router.get('/meetings/:id', async (req, res) => {
    const q = readQuery.parse(req.query);
    res.json(await meetings.getMeeting(db, account(req), pathId(req, 'Meeting'), readsPrivate(req, q.includePrivate)));
  });
  router.patch('/meetings/:id', noPrivateNotesForKeys, async (req, res) => {
    const input = patchBody.parse(req.body ?? {});
    res.json(await meetings.updateMeeting(db, account(req), pathId(req, 'Meeting'), input, writesPrivate(req)));
  });
  router.delete('/meetings/:id', async (req, res) => {
    await meetings.deleteMeeting(db, account(req), pathId(req, 'Meeting'));
    res.status(204).end();
  });
  router.post('/meetings/:id/items', async (req, res) => {
    const input = itemBody.parse(req.body ?? {});
    res.status(201).json(await items.createItem(db, account(req), pathId(req, 'Meeting'), input));
  });
  router.post('/meetings/:id/carry', async (req, res) => {
    const input = carryBody.parse(req.body ?? {});
    res.json(await carry.carryMeeting(db, account(req), pathId(req, 'Meeting'), input));
  });
}

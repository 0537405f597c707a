import type { Router } from 'express';
import type { RouteContext } from '@app/auth/runtime';
import { compileBody, compileQuery } from '@app/http-errors/validation';
import type { Database } from '../db/schema.js';
import * as series from '../domain/series.service.js';
import { seriesCreateBody, seriesPatchBody, seriesQuery } from '../openapi.js';
import { account, pathId, writesPrivate } from './http.js';

const createBody = compileBody(seriesCreateBody);
const patchBody = compileBody(seriesPatchBody);
const listQuery = compileQuery(seriesQuery);

export function seriesRoutes(router: Router, { db }: RouteContext<Database>): void {
  router.get('/series', async (req, res) => {
    res.json(await series.listSeries(db, account(req), listQuery.parse(req.query)));
  });
  router.post('/series', async (req, res) => {
    res
      .status(201)
      .json(await series.createSeries(db, account(req), createBody.parse(req.body ?? {}), writesPrivate(req)));
  });
  router.patch('/series/:id', async (req, res) => {
    const input = patchBody.parse(req.body ?? {});
    res.json(await series.updateSeries(db, account(req), pathId(req, 'Series'), input));
  });
  router.delete('/series/:id', async (req, res) => {
    res.json(await series.archiveSeries(db, account(req), pathId(req, 'Series')));
  });
}

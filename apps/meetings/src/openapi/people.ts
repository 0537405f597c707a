import { peopleQuery, personCreateBody, personPatchBody } from '../domain/people.schemas.js';
import { body, bool, conflict, dateTime, json, noQuery, nullable, obj, op, page, params, ref, str } from './shared.js';

// The people the account meets.

export const personSchema = obj({
  id: str,
  name: str,
  email: nullable(str),
  archived: bool,
  archivedAt: nullable(dateTime),
  createdAt: dateTime,
  updatedAt: dateTime,
});

export const peoplePaths = {
  '/api/people': {
    get: op(
      'People',
      'listPeople',
      'List people (oldest first; archived ones only with includeArchived=1)',
      { '200': json(page('Person')) },
      {},
      params(peopleQuery),
    ),
    post: op(
      'People',
      'createPerson',
      'Create a person',
      { '201': json(ref('Person'), 'Created') },
      conflict('person_limit_reached (100 active people)'),
      body(personCreateBody),
    ),
  },
  '/api/people/{id}': {
    patch: op(
      'People',
      'updatePerson',
      'Update a person; archived: false restores',
      { '200': json(ref('Person')) },
      conflict('person_limit_reached when restoring beyond 100 active people'),
      { ...params(noQuery, ['id']), ...body(personPatchBody) },
    ),
    delete: op(
      'People',
      'archivePerson',
      'Archive a person (idempotent; series keep them as participants)',
      { '200': json(ref('Person')) },
      {},
      params(noQuery, ['id']),
    ),
  },
};

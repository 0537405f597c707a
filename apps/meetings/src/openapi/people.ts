import { body, bool, conflict, cursor, dateTime, flag, json, limit, noQuery, nullable, obj, op, page, params, ref, str, text } from './shared.js';

// The people the account meets.

export const personCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: text(200, 1),
    email: nullable({ type: 'string', format: 'email', maxLength: 320 }),
  },
} as const;

export const personPatchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description: '`archived: false` restores an archived person (subject to the 100 active people limit); `archived: true` archives, like DELETE.',
  properties: {
    name: text(200, 1),
    email: nullable({ type: 'string', format: 'email', maxLength: 320 }),
    archived: { type: 'boolean' },
  },
} as const;

export const peopleQuery = {
  type: 'object',
  properties: { limit: limit(500, 100), cursor, includeArchived: flag('1 includes archived people') },
} as const;

export const personSchema = obj({ id: str, name: str, email: nullable(str), archived: bool, archivedAt: nullable(dateTime), createdAt: dateTime, updatedAt: dateTime });

export const peoplePaths = {
  '/api/people': {
    get: op('People', 'listPeople', 'List people (oldest first; archived ones only with includeArchived=1)', { '200': json(page('Person')) }, {}, params(peopleQuery)),
    post: op('People', 'createPerson', 'Create a person', { '201': json(ref('Person'), 'Created') }, conflict('person_limit_reached (100 active people)'), body(personCreateBody)),
  },
  '/api/people/{id}': {
    patch: op('People', 'updatePerson', 'Update a person; archived: false restores', { '200': json(ref('Person')) }, conflict('person_limit_reached when restoring beyond 100 active people'), { ...params(noQuery, ['id']), ...body(personPatchBody) }),
    delete: op('People', 'archivePerson', 'Archive a person (idempotent; series keep them as participants)', { '200': json(ref('Person')) }, {}, params(noQuery, ['id'])),
  },
};

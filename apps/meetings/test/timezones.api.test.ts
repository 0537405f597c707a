import { canonicalTimezone, knownTimezoneSpellings } from '@app/auth/identity';
import type { TestApp } from './helpers/harness.js';
import { createSeries, startApp } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(() => t.close());

/** `name` with each letter's case chosen at random. */
const randomCase = (name: string) =>
  [...name].map((ch) => (Math.random() < 0.5 ? ch.toLowerCase() : ch.toUpperCase())).join('');

describe('X-Timezone spelled in any letter case', () => {
  it('answers with the canonical IANA name, and thousands of spellings add nothing to the zone map', async () => {
    const { auth } = await t.caller();
    const zones = [
      'America/Argentina/Buenos_Aires',
      'Europe/Berlin',
      'Asia/Kolkata',
      'Pacific/Port_Moresby',
      'America/Port-au-Prince',
    ];
    // Warm: each zone's canonical spelling is in the map already (built once at load).
    for (const zone of zones) expect(canonicalTimezone(zone)).toBe(zone);
    const before = knownTimezoneSpellings();
    for (let round = 0; round < 60; round++) {
      await Promise.all(
        zones.map(async (zone) => {
          const res = await t
            .http()
            .get('/api/me')
            .set('Authorization', auth)
            .set('X-Timezone', randomCase(zone))
            .expect(200);
          expect(res.body.timezone).toBe(zone);
        }),
      );
    }
    expect(knownTimezoneSpellings()).toBe(before);
  });

  it('learns a legacy alias once, under its lower-case spelling, as the zone it names', async () => {
    const { auth } = await t.caller();
    const first = await t.http().get('/api/me').set('Authorization', auth).set('X-Timezone', 'US/Eastern').expect(200);
    expect(first.body.timezone).toBe('America/New_York');
    const size = knownTimezoneSpellings();
    for (let i = 0; i < 50; i++) {
      const res = await t
        .http()
        .get('/api/me')
        .set('Authorization', auth)
        .set('X-Timezone', randomCase('US/Eastern'))
        .expect(200);
      expect(res.body.timezone).toBe('America/New_York');
    }
    expect(knownTimezoneSpellings()).toBe(size);
  });

  it('refuses random unknown names without remembering them', async () => {
    const { auth } = await t.caller();
    const size = knownTimezoneSpellings();
    for (let i = 0; i < 50; i++) {
      await t
        .http()
        .get('/api/me')
        .set('Authorization', auth)
        .set('X-Timezone', `Nowhere/Place_${i}_${Math.random()}`)
        .expect(400);
    }
    expect(knownTimezoneSpellings()).toBe(size);
  });

  it('stores a series zone in its canonical spelling', async () => {
    const c = await t.caller();
    const { series } = await createSeries(t, c, { timezone: 'europe/LISBON' });
    expect(series.timezone).toBe('Europe/Lisbon');
  });
});

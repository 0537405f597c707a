import { tomorrowCache, type StartOfTomorrow } from '../src/domain/due-time.js';

describe('the line between today and upcoming', () => {
  // Each app makes its own cache (createApp); each test here too.
  let currentStartOfTomorrow: StartOfTomorrow;
  beforeEach(() => {
    currentStartOfTomorrow = tomorrowCache();
  });

  it('is the next local midnight, remembered only until it passes', () => {
    const evening = Date.parse('2030-03-30T21:00:00Z'); // 23:00 in Berlin (CET)
    expect(currentStartOfTomorrow('Europe/Berlin', evening)).toBe('2030-03-30T23:00:00.000Z');
    const afterMidnight = Date.parse('2030-03-30T23:30:00Z'); // 00:30 on the 31st
    // The 31st is 23 hours long (clocks go forward), so its end is 22:00 UTC.
    expect(currentStartOfTomorrow('Europe/Berlin', afterMidnight)).toBe('2030-03-31T22:00:00.000Z');
  });

  it('is computed per zone', () => {
    const now = Date.parse('2030-06-01T12:00:00Z');
    expect(currentStartOfTomorrow('UTC', now)).toBe('2030-06-02T00:00:00.000Z');
    expect(currentStartOfTomorrow('America/New_York', now)).toBe('2030-06-02T04:00:00.000Z');
  });

  it('does not reuse an answer for an earlier clock (a test or a clock step back)', () => {
    const late = Date.parse('2031-01-10T12:00:00Z');
    expect(currentStartOfTomorrow('Asia/Tokyo', late)).toBe('2031-01-10T15:00:00.000Z');
    const earlier = Date.parse('2031-01-05T12:00:00Z');
    expect(currentStartOfTomorrow('Asia/Tokyo', earlier)).toBe('2031-01-05T15:00:00.000Z');
  });
});

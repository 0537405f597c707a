/**
 * IANA zone names this Node's ICU data lists under an older name (`Intl.supportedValuesOf` has
 * `Asia/Calcutta`, not `Asia/Kolkata`), so their current spelling is kept here (tzdata 2024).
 */
const IANA_NAMES_ICU_LISTS_OTHERWISE = [
  'Africa/Asmara',
  'America/Argentina/Buenos_Aires',
  'America/Argentina/Catamarca',
  'America/Argentina/Cordoba',
  'America/Argentina/Jujuy',
  'America/Argentina/Mendoza',
  'America/Atikokan',
  'America/Indiana/Indianapolis',
  'America/Kentucky/Louisville',
  'America/Nuuk',
  'Asia/Ho_Chi_Minh',
  'Asia/Kathmandu',
  'Asia/Kolkata',
  'Asia/Yangon',
  'Atlantic/Faroe',
  'CET',
  'CST6CDT',
  'EET',
  'EST',
  'EST5EDT',
  'Etc/GMT',
  'Etc/UTC',
  'Europe/Kyiv',
  'HST',
  'MET',
  'MST',
  'MST7MDT',
  'PST8PDT',
  'Pacific/Chuuk',
  'Pacific/Kanton',
  'Pacific/Pohnpei',
  'UTC',
  'WET',
  ...Array.from({ length: 12 }, (_, i) => `Etc/GMT+${i + 1}`),
  ...Array.from({ length: 14 }, (_, i) => `Etc/GMT-${i + 1}`),
];

/** Another alias this map may learn (e.g. `US/Eastern`); there are about 150, so the bound is never reached by real names. */
const MAX_NAMES = 2_000;

/**
 * Lower-case name -> canonical spelling: every zone ICU knows, plus the current IANA names, built
 * once. Letter case never adds an entry, so random-case spellings of a zone cost no memory here,
 * and only canonical names reach luxon (which caches a formatter per spelling it is given).
 */
const canonical = new Map<string, string>(
  [...Intl.supportedValuesOf('timeZone'), ...IANA_NAMES_ICU_LISTS_OTHERWISE].map((z) => [z.toLowerCase(), z]),
);

/** ICU's own name for a zone it accepts in any letter case (an alias resolves to its zone), or undefined. */
function resolveWithIcu(name: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/**
 * The canonical IANA name of the zone `name` spells in any letter case (`europe/BERLIN` ->
 * `Europe/Berlin`), or undefined when it is no zone. A legacy alias missing from the list above
 * (`us/eastern`) becomes the zone ICU resolves it to (`America/New_York`) and is remembered under
 * its lower-case spelling.
 */
export function canonicalTimezone(name: string): string | undefined {
  if (name.length === 0 || name.length > 100) return undefined;
  const key = name.toLowerCase();
  const known = canonical.get(key);
  if (known !== undefined) return known;
  // Only names ICU accepts are learned, so what this adds is bounded by the aliases that exist.
  const resolved = resolveWithIcu(key);
  if (resolved === undefined) return undefined;
  const spelled = canonical.get(resolved.toLowerCase()) ?? resolved;
  if (canonical.size < MAX_NAMES) canonical.set(key, spelled);
  return spelled;
}

/** How many spellings the map holds (tests check that letter case adds none). */
export function knownTimezoneSpellings(): number {
  return canonical.size;
}

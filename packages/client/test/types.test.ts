import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const fixture = join(__dirname, 'typecheck', 'wrong-fields.ts');
const source = readFileSync(fixture, 'utf8');

/** Type-checks a fixture (with `text` in place of its source) as `npm run typecheck` does. */
function diagnostics(text: string, file = fixture): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(__dirname, '..', 'tsconfig.test.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  )!;
  const host = ts.createCompilerHost(config.options);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => (name === file ? text : readFile(name));
  const program = ts.createProgram({ rootNames: [file], options: config.options, host });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    return `${line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

describe('the generated client types', () => {
  it('accept the fixture as written: every marked call is refused, so no @ts-expect-error is unused', () => {
    expect(diagnostics(source)).toEqual([]);
  });

  it('refuse each wrong field name when the @ts-expect-error markers are removed', () => {
    const expected = source
      .split('\n')
      .flatMap((line, i) => (line.trim().startsWith('// @ts-expect-error') ? [i + 1] : []));
    const unmarked = source.replace(/\/\/ @ts-expect-error.*$/gm, '');
    const errors = diagnostics(unmarked);
    const lines = [...new Set(errors.map((e) => Number(e.split(':')[0])))].sort((a, b) => a - b);
    // Each error is on the line after its marker (the call the marker named).
    expect(lines).toEqual(expected.map((l) => l + 1));
    expect(errors.join('\n')).toMatch(/'name' does not exist/);
    expect(errors.join('\n')).toMatch(/'fullName' does not exist/);
  });

  it('accept the README example', () => {
    const example = join(__dirname, 'typecheck', 'readme-example.ts');
    expect(diagnostics(readFileSync(example, 'utf8'), example)).toEqual([]);
  });
});

/**
 * bin/aigw.js runs the compiled dist/ only while it is fresh, never a build older than a source file: checked in
 * a copy of the checkout's layout whose two entry points print which of them ran.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { BIN, REPO_ROOT } from '../helpers/process.ts';

let root: string;
const stamp = () => join(root, 'dist/.built');
const run = (env: NodeJS.ProcessEnv = {}) =>
  execFileSync(process.execPath, [join(root, 'bin/aigw.js')], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' }).trim();
/** Sets a file's modification time, in seconds from now. */
const age = (file: string, seconds: number) => {
  const at = new Date(Date.now() + seconds * 1000);
  utimesSync(file, at, at);
};

before(() => {
  root = mkdtempSync(join(tmpdir(), 'aigw-bin-entry-'));
  for (const dir of ['bin', 'core', 'plugins/auth', 'providers/openai', 'dist/core']) mkdirSync(join(root, dir), { recursive: true });
  copyFileSync(BIN, join(root, 'bin/aigw.js'));
  copyFileSync(join(dirname(BIN), 'dist-fresh.js'), join(root, 'bin/dist-fresh.js'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ type: 'module' }));
  // tsx, which the source entry needs, from the checkout's dependencies.
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'));
  writeFileSync(join(root, 'core/cli.ts'), "const ran: string = 'source';\nconsole.log(ran);\n");
  writeFileSync(join(root, 'plugins/auth/index.ts'), 'export {};\n');
  writeFileSync(join(root, 'providers/openai/index.ts'), 'export {};\n');
  writeFileSync(join(root, 'dist/core/cli.js'), "console.log('dist');\n");
  for (const file of ['core/cli.ts', 'plugins/auth/index.ts', 'providers/openai/index.ts']) age(join(root, file), -60);
});

after(() => {
  // The link first, on its own: the checkout's dependencies must never be in reach of the recursive removal.
  unlinkSync(join(root, 'node_modules'));
  rmSync(root, { recursive: true, force: true });
});

test('a build newer than every source file runs; AIGW_FROM_SOURCE=1 runs the source anyway', () => {
  writeFileSync(stamp(), '');
  age(stamp(), -30);
  assert.equal(run(), 'dist');
  assert.equal(run({ AIGW_FROM_SOURCE: '1' }), 'source');
});

test('a source file changed after the build started makes the source run, in any of the source folders', () => {
  for (const file of ['core/cli.ts', 'plugins/auth/index.ts', 'providers/openai/index.ts']) {
    writeFileSync(stamp(), '');
    age(stamp(), -30);
    age(join(root, file), -10);
    assert.equal(run(), 'source', `${file} changed after the build`);
    age(join(root, file), -60);
  }
});

test('without a build stamp (never built, or a build that did not finish) the source runs', () => {
  rmSync(stamp(), { force: true });
  assert.equal(run(), 'source');
});

test('an installed package (no TypeScript beside bin/) runs dist/', () => {
  rmSync(join(root, 'core/cli.ts'));
  assert.equal(run(), 'dist');
});

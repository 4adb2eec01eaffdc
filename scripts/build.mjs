/**
 * npm run build: compiles core/, plugins/ and providers/ into dist/ (tsconfig.build.json), then copies beside
 * the compiled modules every file the runtime reads that is not TypeScript (SQL migrations, the PGlite worker's
 * plain-JavaScript modules), at the same relative place, so that `new URL(..., import.meta.url)` resolves from
 * dist as it does from source. Then the admin UI (ui/) into dist/ui (scripts/build-ui.mjs). Last, dist/.built:
 * its time is when the build started, so that bin/aigw.js can tell a fresh build (it runs dist/) from one older
 * than a source file (it runs the source).
 */
import { spawnSync } from 'node:child_process';
import { closeSync, cpSync, openSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildUi } from './build-ui.mjs';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const DIST = join(ROOT, 'dist');
const SOURCES = ['core', 'plugins', 'providers'];
// TypeScript is compiled; anything else under the source folders ships as it is.
const COMPILED = /\.(ts|mts|cts)$/;

// bin/aigw.js runs dist/ only when no source file changed after this moment (a file saved during the build may
// not be in it).
const startedAt = new Date();
rmSync(DIST, { recursive: true, force: true });

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
if (compiled.status !== 0) process.exit(compiled.status ?? 1);

let copied = 0;
for (const source of SOURCES) {
  for (const entry of readdirSync(join(ROOT, source), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || COMPILED.test(entry.name)) continue;
    const from = join(entry.parentPath, entry.name);
    cpSync(from, join(DIST, relative(ROOT, from)));
    copied += 1;
  }
}
await buildUi(join(DIST, 'ui'));
const stamp = join(DIST, '.built');
closeSync(openSync(stamp, 'w'));
utimesSync(stamp, startedAt, startedAt);
process.stdout.write(`dist: compiled ${SOURCES.join(', ')} and copied ${copied} other files, built the admin UI into dist/ui\n`);

#!/usr/bin/env node
// An installed package ships only the compiled dist/ and runs it. A source checkout runs dist/ too when it is
// fresh (built after the last change to any source file: `npm ci` and `npm run build` build it), which starts
// in a fraction of the time and memory of compiling TypeScript as it loads; otherwise it runs the TypeScript
// through tsx, so an edit is never answered by an older build. AIGW_FROM_SOURCE=1 always runs the source.
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { distIsFresh } from './dist-fresh.js';

// No allocation-site pretenuring: V8 allocates straight in the old generation the objects of a site whose past
// objects were all still alive at a scavenge, as some per-request sites were under load. An old object that points
// at a request's young ones keeps them alive through scavenges, and their own sites then look long-lived too: most
// of each request was promoted (about 6.8 KB), the scavenges paused 37 µs per request and the old generation grew
// until full collections. Without it: 0.7 KB promoted, 13 µs (bench/analysis.md, sixth step).
setFlagsFromString('--no-allocation-site-pretenuring');

// The old generation grows by a quarter of what survived the last full collection before the next one, where V8's
// own factor (up to 4x) let aigw-full's old space fill with 40-55 MB of dead records under load: 228-244 MB resident
// after 20-25 s of closed-loop load against 245-271, for a full collection every 2.5-3 s at saturation, about 1% of
// the CPU (bench/analysis.md, twelfth step). A flag given to node itself wins.
if (!`${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`.includes('heap-growing-percent')) {
  setFlagsFromString('--heap-growing-percent=25');
}

const ROOT = new URL('../', import.meta.url);
const SOURCE = new URL('core/cli.ts', ROOT);
const COMPILED = new URL('dist/core/cli.js', ROOT);

if (!existsSync(SOURCE) || (process.env.AIGW_FROM_SOURCE !== '1' && distIsFresh(ROOT))) {
  await import(COMPILED.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(SOURCE.href);
}

// Preloaded into the server under test by bench/stalls.ts (`--import`): writes every garbage collection and every
// event-loop stall longer than 3 ms, with wall-clock times, to the file named by AIGW_STALL_PROBE, one line each:
// `gc <start ms> <duration ms> <kind>` or `stall <start ms> <duration ms>`. Plain JavaScript, so that it loads the
// same way into a build and into the TypeScript source.
import { appendFileSync } from 'node:fs';
import { performance, PerformanceObserver } from 'node:perf_hooks';

const file = process.env.AIGW_STALL_PROBE;
if (file) {
  const origin = performance.timeOrigin;
  // perf_hooks' GC kinds: 1 minor (scavenge), 2 major (mark-compact), 4 incremental, 8 weak callbacks.
  const kinds = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weak' };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      appendFileSync(file, `gc ${(origin + entry.startTime).toFixed(2)} ${entry.duration.toFixed(2)} ${kinds[entry.detail?.kind] ?? 'other'}\n`);
    }
  }).observe({ entryTypes: ['gc'] });
  // A 2 ms tick that comes late by more than 3 ms: the event loop was held that long (by GC or anything else).
  const TICK_MS = 2;
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const late = now - last - TICK_MS;
    if (late > 3) appendFileSync(file, `stall ${(origin + last).toFixed(2)} ${late.toFixed(2)}\n`);
    last = now;
  }, TICK_MS).unref();
}

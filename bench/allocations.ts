/**
 * `node --import tsx bench/allocations.ts [variant...]`: what each variant's process allocates per request, from
 * V8's own scavenge records (`--trace-gc-nvp`), over a closed-loop run: KB allocated in the young generation,
 * bytes promoted to the old one and the scavenges' pause, per request, for the main thread and for the other
 * isolates (the embedded database's worker). Unlike CPU time, the bytes allocated per request hardly move with
 * what else the machine is doing (two runs of one build agree to about 1%), so two builds can be compared on a
 * busy machine. Variants are given as in bench/cpu-split.ts: `aigw-full=<another checkout>/bin/aigw.js`,
 * `aigw-full~auth,usage`, `aigw-full~~--max-semi-space-size=8` (node flags). With STREAM=1 the requests are streamed
 * (per stream, then).
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runClosedLoop } from './saturation.ts';
import { measuredBody } from './upstream.ts';
import { startUpstreamProcess, startVariant, variantSpec } from './variants.ts';

interface IsolateTotals { scavenges: number; allocated: number; promoted: number; pauseMs: number }

/** Sums the scavenge lines of `--trace-gc-nvp` per isolate of each process (the `[pid:isolate]` prefix). */
export function scavengeTotals(log: string): Map<string, IsolateTotals> {
  const totals = new Map<string, IsolateTotals>();
  for (const line of log.split('\n')) {
    if (!line.includes(' gc=s ')) continue;
    const isolate = /^\[(\d+:0x[0-9a-f]+)\]/.exec(line)?.[1] ?? '?';
    const field = (name: string) => Number(new RegExp(` ${name}=([\\d.]+)`).exec(line)?.[1] ?? 0);
    const entry = totals.get(isolate) ?? { scavenges: 0, allocated: 0, promoted: 0, pauseMs: 0 };
    entry.scavenges++;
    entry.allocated += field('allocated');
    entry.promoted += field('promoted');
    entry.pauseMs += field('pause');
    totals.set(isolate, entry);
  }
  return totals;
}

function minus(after: Map<string, IsolateTotals>, before: Map<string, IsolateTotals>): IsolateTotals[] {
  return [...after].map(([isolate, a]) => {
    const b = before.get(isolate) ?? { scavenges: 0, allocated: 0, promoted: 0, pauseMs: 0 };
    return { scavenges: a.scavenges - b.scavenges, allocated: a.allocated - b.allocated, promoted: a.promoted - b.promoted, pauseMs: a.pauseMs - b.pauseMs };
  }).sort((x, y) => y.allocated - x.allocated);
}

const specs = process.argv.slice(2).length ? process.argv.slice(2) : ['aigw-empty', 'aigw-full'];
const workDir = mkdtempSync(join(tmpdir(), 'aigw-alloc-'));
const upstream = await startUpstreamProcess(workDir, null);
const ctx = { workDir, upstreamUrl: upstream.url, serverCore: null, databaseUrl: process.env.TEST_DATABASE_URL ?? '', redisUrl: process.env.TEST_REDIS_URL ?? '', log: () => undefined };
for (const spec of specs) {
  const { id, options } = variantSpec(spec);
  const aigwNodeFlags = ['--trace-gc', '--trace-gc-nvp', ...(options.aigwNodeFlags ?? [])];
  const running = await startVariant({ ...ctx, ...options, aigwNodeFlags }, id);
  // The variant's output goes to <workDir>/<id>.log, after that of an earlier process of the same variant.
  const log = () => readdirSync(workDir).filter((f) => f.startsWith(id) && f.endsWith('.log') && !f.includes('migrate'))
    .map((f) => readFileSync(join(workDir, f), 'utf8')).join('\n');
  await runClosedLoop(running.target, { connections: 8, durationMs: 3000, body: measuredBody() });
  const before = scavengeTotals(log());
  const run = await runClosedLoop(running.target, { connections: 8, durationMs: Number(process.env.MS ?? 5000), body: measuredBody() });
  await new Promise((resolve) => setTimeout(resolve, 300)); // the last lines reach the log file
  const [main, ...others] = minus(scavengeTotals(log()), before);
  const per = (t: IsolateTotals | undefined) => t
    ? `${(t.allocated / run.ok / 1024).toFixed(1)} KB allocated, ${(t.promoted / run.ok).toFixed(0)} B promoted, ${((t.pauseMs * 1000) / run.ok).toFixed(1)} µs of scavenges (${t.scavenges})`
    : 'no scavenge';
  const rest = others.reduce((sum, t) => ({ scavenges: sum.scavenges + t.scavenges, allocated: sum.allocated + t.allocated, promoted: sum.promoted + t.promoted, pauseMs: sum.pauseMs + t.pauseMs }), { scavenges: 0, allocated: 0, promoted: 0, pauseMs: 0 });
  console.log(`${spec}: ${run.ok} requests; per request, main thread: ${per(main)}; other isolates: ${per(rest.scavenges ? rest : undefined)}`);
  await running.stop();
}
await upstream.stop();

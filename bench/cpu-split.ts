/**
 * `node --import tsx bench/cpu-split.ts [variant...]`: CPU time per request of each variant's process, split by
 * thread (main thread, the embedded database's worker, everything else), over a closed-loop run with few
 * connections. CPU per request is what a server's requests/s per core is the inverse of, and it varies less with
 * what else the machine is doing than a throughput figure. With STREAM=1 the requests are streamed.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runClosedLoop } from './saturation.ts';
import { measuredBody } from './upstream.ts';
import { procStat, startUpstreamProcess, startVariant, variantSpec } from './variants.ts';

interface ThreadCpu { name: string; ms: number }

function threads(pid: number): Map<string, ThreadCpu> {
  const out = new Map<string, ThreadCpu>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = procStat(`/proc/${pid}/task/${tid}/stat`);
    if (stat) out.set(tid, { name: tid === String(pid) ? 'main' : stat.name, ms: stat.cpuMs });
  }
  return out;
}

function diff(before: Map<string, ThreadCpu>, after: Map<string, ThreadCpu>): Map<string, number> {
  const byName = new Map<string, number>();
  for (const [tid, t] of after) {
    const ms = t.ms - (before.get(tid)?.ms ?? 0);
    const label = process.env.PERTID && t.name !== 'main' ? `${t.name}#${tid}` : t.name;
    byName.set(label, (byName.get(label) ?? 0) + ms);
  }
  return byName;
}

/**
 * `variant[=<another checkout>/bin/aigw.js][~plugin,plugin][~node flags]`: the same variant from two builds, aigw-full
 * with a pipeline of its own (`aigw-full~auth,usage`: the usage plugin's share against `aigw-full~auth`), or with
 * node flags (`aigw-full~~--max-semi-space-size=8`), alternated round by round.
 */
const specs = process.argv.slice(2).length ? process.argv.slice(2) : ['passthrough', 'aigw-empty', 'aigw-full'];
const workDir = mkdtempSync(join(tmpdir(), 'aigw-cpu-'));
const upstream = await startUpstreamProcess(workDir, null);
const ctx = { workDir, upstreamUrl: upstream.url, serverCore: null, databaseUrl: process.env.TEST_DATABASE_URL ?? '', redisUrl: process.env.TEST_REDIS_URL ?? '', log: () => undefined };
const rounds = Number(process.env.ROUNDS ?? 3);
const results: Record<string, number[]> = {};
const running: Array<Awaited<ReturnType<typeof startVariant>> & { name: string }> = [];
for (const spec of specs) {
  const { id, options } = variantSpec(spec);
  running.push({ name: spec, ...(await startVariant({ ...ctx, ...options }, id)) });
}
for (let round = 0; round < rounds; round++) {
  for (const variant of running) {
    await runClosedLoop(variant.target, { connections: 8, durationMs: 1500, body: measuredBody() });
    const before = threads(variant.pid!);
    const run = await runClosedLoop(variant.target, { connections: 8, durationMs: Number(process.env.MS ?? 4000), body: measuredBody() });
    const split = diff(before, threads(variant.pid!));
    const total = [...split.values()].reduce((a, b) => a + b, 0);
    const us = (ms: number) => Math.round((ms * 1000) / run.ok);
    const parts = [...split].filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1]).map(([n, ms]) => `${n} ${us(ms)}`).join(', ');
    (results[variant.name] ??= []).push(us(total));
    console.log(`${variant.name.padEnd(18)} ${String(run.ok).padStart(6)} ok ${run.errors} err  ${us(total)} us/req  (${parts})`);
  }
}
for (const [id, list] of Object.entries(results)) { const sorted = [...list].sort((a, b) => a - b); console.log(`${id}: ${list.join(" ")}  min ${sorted[0]} median ${sorted[Math.floor(sorted.length / 2)]}`); }
for (const variant of running) await variant.stop();
await upstream.stop();

/**
 * `node --import tsx bench/stalls.ts [variant...]`: what holds up a stream's first token. Runs the bench's stream
 * load (40 streams a second, 16 connections, each server pinned as in `npm run bench`) against each variant, with
 * bench/stall-probe.mjs preloaded into aigw: every garbage collection and every event-loop stall over 3 ms, with
 * wall-clock times. Prints the first tokens' percentiles, then the collections and stalls during the run, and for
 * the slowest 1% of first tokens what overlapped each: a collection, another stall, or nothing the probe saw.
 * Variants as in bench/cpu-split.ts; the probe's 2 ms timer costs the server a little CPU of its own. N sets the
 * number of streams (default 480).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { percentile, runStream } from './load.ts';
import { STREAM_CHAT_BODY, STREAM_PACE_MS } from './upstream.ts';
import { hasTaskset, pin, startUpstreamProcess, startVariant, variantSpec } from './variants.ts';

const PROBE = fileURLToPath(new URL('./stall-probe.mjs', import.meta.url));
const RATE = 40;
const CONNECTIONS = 16;

interface Stream { startedAt: number; ttft: number }
interface ProbeLine { kind: 'gc' | 'stall'; at: number; ms: number; detail: string }

function probeLines(file: string): ProbeLine[] {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => {
    const [kind, at, ms, detail = ''] = line.split(' ');
    return { kind: kind as ProbeLine['kind'], at: Number(at), ms: Number(ms), detail };
  });
}

const specs = process.argv.slice(2).length ? process.argv.slice(2) : ['aigw-empty', 'aigw-full'];
const count = Number(process.env.N ?? 480);
const workDir = mkdtempSync(join(tmpdir(), 'aigw-stalls-'));
const canPin = hasTaskset();
const upstream = await startUpstreamProcess(workDir, canPin ? 0 : null);
if (canPin) pin(process.pid, 0);
const ctx = { workDir, upstreamUrl: upstream.url, serverCore: canPin ? 1 : null, databaseUrl: '', redisUrl: '', log: () => undefined };
for (const spec of specs) {
  const { id, options } = variantSpec(spec);
  const probeFile = join(workDir, `${id}-${Date.now()}.stalls`);
  writeFileSync(probeFile, '');
  const running = await startVariant({
    ...ctx, ...options, aigwEnv: { AIGW_STALL_PROBE: probeFile }, aigwNodeFlags: [`--import=${PROBE}`, ...(options.aigwNodeFlags ?? [])],
  }, id);
  // Warmed as `npm run bench` warms a server before its stream rounds, then the bench's stream load.
  await runStream(running.target, { rate: 20, durationMs: 1000, connections: 8, body: STREAM_CHAT_BODY, paceMs: STREAM_PACE_MS });
  const load = await runStream(running.target, {
    rate: RATE, durationMs: (count * 1000) / RATE, connections: CONNECTIONS, body: STREAM_CHAT_BODY, paceMs: STREAM_PACE_MS, fromSend: true,
  });
  await running.stop();
  if (load.firstError) console.log(`${spec}: first error: ${load.firstError}`);
  const streams: Stream[] = load.ttft.map((ttft, i) => ({ startedAt: load.ttftFrom[i]!, ttft }));

  const ttft = streams.map((s) => s.ttft);
  const from = Math.min(...streams.map((s) => s.startedAt));
  const to = Math.max(...streams.map((s) => s.startedAt + s.ttft)) + 200;
  const during = probeLines(probeFile).filter((p) => p.at >= from && p.at <= to);
  const gcs = during.filter((p) => p.kind === 'gc');
  const stalls = during.filter((p) => p.kind === 'stall');
  const byKind = new Map<string, { n: number; ms: number; max: number }>();
  for (const gc of gcs) {
    const entry = byKind.get(gc.detail) ?? { n: 0, ms: 0, max: 0 };
    entry.n++;
    entry.ms += gc.ms;
    entry.max = Math.max(entry.max, gc.ms);
    byKind.set(gc.detail, entry);
  }
  const slowest = [...streams].sort((a, b) => b.ttft - a.ttft).slice(0, Math.max(1, Math.ceil(streams.length / 100)));
  const overlapping = (s: Stream, kind: ProbeLine['kind']) => during.some((p) => p.kind === kind && p.at < s.startedAt + s.ttft && p.at + p.ms > s.startedAt);
  const withGc = slowest.filter((s) => overlapping(s, 'gc')).length;
  const withStall = slowest.filter((s) => !overlapping(s, 'gc') && overlapping(s, 'stall')).length;
  const f = (n: number) => n.toFixed(2);
  console.log(`${spec}: ${streams.length} streams; first token p50 ${f(percentile(ttft, 50))} ms, p90 ${f(percentile(ttft, 90))}, p99 ${f(percentile(ttft, 99))}, max ${f(Math.max(...ttft))}; chunks held (as late as one pace) ${load.held} of ${load.chunks}`);
  if (running.id === 'direct' || running.id === 'passthrough' || running.id === 'portkey') continue; // no probe in it
  const kinds = [...byKind].map(([kind, e]) => `${e.n} ${kind} (${f(e.ms)} ms, longest ${f(e.max)})`).join(', ') || 'none';
  console.log(`  collections: ${kinds}; event-loop stalls over 3 ms (collections included): ${stalls.length}, longest ${f(Math.max(0, ...stalls.map((s) => s.ms)))} ms`);
  console.log(`  slowest ${slowest.length} first tokens (${f(slowest.at(-1)!.ttft)} ms and over): ${withGc} overlapped a collection, ${withStall} another stall, ${slowest.length - withGc - withStall} neither`);
}
await upstream.stop();

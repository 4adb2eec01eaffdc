/**
 * `npm run bench`: every variant on the same machine in one go, then bench/results.json, docs/benchmarks.md and
 * docs/benchmarks.svg. Options:
 *   --soak            add the 5-minute soak of aigw-full (RSS growth)
 *   --quick           tiny durations (the smoke test); writes to a temp folder unless --out is given
 *   --only=a,b        run only these variants
 *   --out=DIR         write results.json, benchmarks.md and benchmarks.svg into DIR
 *   --profile=ID      no benchmark: run one aigw variant (e.g. aigw-full) under load with --cpu-prof, print
 *                     its hottest functions (bench/profile.ts)
 *   --render          no benchmark: write the report again from results.json (after editing bench/analysis.md)
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { percentile, ramp, runJson, runStream, type RunResult, type StreamResult, type Target } from './load.ts';
import { loadBound, renderMarkdown, renderSvg, type Dist, type Results, type SoakResult, type TargetResult, type VariantResult } from './report.ts';
import { guardsFirstTokenMs } from './guards-scan.ts';
import { medianRound, runClosedLoop, summarize, type SaturationResult } from './saturation.ts';
import { CHAT_BODY, STREAM_CHAT_BODY, STREAM_PACE_MS } from './upstream.ts';
import {
  ALL_VARIANTS, cpuMs, hasTaskset, machineCpuMs, pin, REPO_ROOT, rssMb, sharedStoresReachable, startUpstreamProcess, startVariant, storeServersCpuMs,
  upstreamRequests, type Context, type Running, type VariantId,
} from './variants.ts';

export interface Settings {
  rounds: number;
  warmupMs: number;
  latency: { rate: number; durationMs: number };
  delayed: { rate: number; durationMs: number; connections: number };
  stream: { rate: number; durationMs: number; connections: number };
  ramp: { startRate: number; factor: number; stepMs: number; refine: number; maxRate: number; connections: number };
  /**
   * The closed-loop saturation run (bench/saturation.ts): this many connections, each busy all the time, for
   * durationMs in each of `rounds` interleaved rounds; a variant's figures are those of its median round.
   */
  saturation: { connections: number; durationMs: number; rounds: number };
  soak: { seconds: number; rate: number };
}

export const FULL: Settings = {
  rounds: 3,
  warmupMs: 3000,
  latency: { rate: 100, durationMs: 5000 },
  delayed: { rate: 100, durationMs: 3000, connections: 8 },
  stream: { rate: 40, durationMs: 4000, connections: 16 },
  ramp: { startRate: 250, factor: 1.5, stepMs: 2000, refine: 3, maxRate: 60_000, connections: 64 },
  saturation: { connections: 32, durationMs: 2_000, rounds: 3 },
  soak: { seconds: 300, rate: 200 },
};

export const QUICK: Settings = {
  rounds: 1,
  warmupMs: 300,
  latency: { rate: 100, durationMs: 300 },
  delayed: { rate: 50, durationMs: 300, connections: 4 },
  stream: { rate: 20, durationMs: 300, connections: 4 },
  ramp: { startRate: 100, factor: 2, stepMs: 300, refine: 0, maxRate: 400, connections: 8 },
  saturation: { connections: 4, durationMs: 300, rounds: 1 },
  soak: { seconds: 20, rate: 50 },
};

export interface BenchOptions {
  mode: 'full' | 'quick';
  settings: Settings;
  variants: VariantId[];
  soak: boolean;
  /** Pin the servers to core 1 and this process to core 0 (when there are two cores and taskset). */
  pin: boolean;
  resultsFile: string;
  reportFile: string;
  svgFile: string;
  databaseUrl: string;
  redisUrl: string;
  log(line: string): void;
}

const BODY = CHAT_BODY;
const DELAY_BODY = BODY.replace('"model":"bench"', '"model":"bench-delay"');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A fixed CPU workload (JSON and SHA-256 of a chat-sized body), in ms: the same machine type has been seen to run
 * several times slower from one hour to the next (a shared host), so every report says how fast it ran.
 */
export function calibrate(): number {
  const started = performance.now();
  for (let i = 0; i < 50_000; i++) {
    const parsed = JSON.parse(BODY) as { messages: unknown[] };
    createHash('sha256').update(JSON.stringify(parsed.messages)).digest('hex');
  }
  return performance.now() - started;
}

function dist(values: number[], floor?: number[]): Dist {
  const p50 = percentile(values, 50);
  const p99 = percentile(values, 99);
  const d: Dist = { n: values.length, p50, p99 };
  if (floor && floor.length > 0) {
    d.addedP50 = p50 - percentile(floor, 50);
    d.addedP99 = p99 - percentile(floor, 99);
  }
  return d;
}

/** Samples the RSS of a process until stopped; returns the peak. */
function rssSampler(pid: number | undefined, everyMs = 200) {
  let peak: number | null = null;
  const sample = () => {
    if (pid === undefined) return;
    const mb = rssMb(pid);
    if (mb !== null && (peak === null || mb > peak)) peak = mb;
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return { stop: () => (clearInterval(timer), sample(), peak) };
}

/**
 * CPU used by processes that are not part of the benchmark (other work on a shared machine), in % of one core,
 * over an interval: the machine's busy time minus this process's and the children's. `sharedStores`: the measured
 * variant runs on the shared Postgres and Redis, whose servers then work for it: their CPU is the variant's, not
 * noise (it read as 27-33% of a core, and every measurement of that variant was repeated).
 */
function noiseMeter(pids: () => number[]) {
  const ours = (sharedStores: boolean) => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000 + pids().reduce((n, pid) => n + (cpuMs(pid) ?? 0), 0) + (sharedStores ? storeServersCpuMs() : 0);
  };
  return (sharedStores = false) => {
    const m0 = machineCpuMs();
    const o0 = ours(sharedStores);
    const t0 = performance.now();
    return (): number | null => {
      const m1 = machineCpuMs();
      if (m0 === null || m1 === null) return null;
      return Math.max(0, ((m1 - m0 - (ours(sharedStores) - o0)) / (performance.now() - t0)) * 100);
    };
  };
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone already
  }
}

/** Above this much foreign CPU (% of a core) a measurement is repeated once, within the retry budget. */
const NOISY_PCT = 25;

interface Collected {
  running: Running;
  result: VariantResult;
  json: Array<RunResult & { cpuMs?: number | undefined }>;
  delayed: RunResult[];
  streams: StreamResult[];
}

export async function runBench(options: BenchOptions): Promise<Results> {
  const started = Date.now();
  const { settings: S, log } = options;
  const calibrationStart = calibrate();
  const workDir = mkdtempSync(join(tmpdir(), 'aigw-bench-'));
  const canPin = options.pin && cpus().length >= 2 && hasTaskset();
  if (canPin) pin(process.pid, 0);
  const pinned = canPin ? 'servers under test pinned to core 1, load generator and upstream to core 0 (taskset)' : 'no pinning (fewer than 2 cores, no taskset, or disabled)';
  log(`work folder ${workDir}; ${pinned}`);

  const upstream = await startUpstreamProcess(workDir, canPin ? 0 : null);
  const ctx: Context = { workDir, upstreamUrl: upstream.url, serverCore: canPin ? 1 : null, databaseUrl: options.databaseUrl, redisUrl: options.redisUrl, log };
  const collected: Collected[] = [];
  const results: VariantResult[] = [];
  let soak: SoakResult | undefined;
  const noise = noiseMeter(() => [upstream.pid, ...collected.flatMap((c) => (c.running.pid ? [c.running.pid] : []))]);
  const noiseSeen: number[] = [];
  let retryBudgetMs = options.mode === 'full' ? 90_000 : 0;
  let retries = 0;
  /** Waits (up to maxMs) for a 2-second window in which other processes stay under NOISY_PCT / 2. */
  const waitForQuiet = async (maxMs: number) => {
    const deadline = Date.now() + maxMs;
    let last: number | null = null;
    while (Date.now() < deadline) {
      const stop = noise();
      await sleep(2000);
      last = stop();
      if (last === null || last < NOISY_PCT / 2) return last;
    }
    return last;
  };
  /** Runs a measurement; when other processes were busy meanwhile, waits for quiet and runs it once more. */
  const measured = async <T>(what: string, fn: () => Promise<T>, sharedStores = false): Promise<T> => {
    let stop = noise(sharedStores);
    let value = await fn();
    let foreign = stop();
    if (foreign !== null && foreign > NOISY_PCT && retryBudgetMs > 0) {
      const t0 = Date.now();
      log(`${what}: other processes used ${foreign.toFixed(0)}% of a core meanwhile; measuring again`);
      await waitForQuiet(Math.min(15_000, retryBudgetMs));
      stop = noise(sharedStores);
      value = await fn();
      foreign = stop();
      retryBudgetMs -= Date.now() - t0;
      retries++;
    }
    if (foreign !== null) noiseSeen.push(foreign);
    return value;
  };
  /**
   * Only the server under test runs while it is measured: the others are paused (SIGSTOP), so that their timers,
   * idle GCs and flushes do not land on the shared core. A few unmeasured requests wake the resumed one first.
   */
  const focus = async (c: Collected) => {
    for (const o of collected) if (o.running.pid) signal(o.running.pid, o === c ? 'SIGCONT' : 'SIGSTOP');
    await runJson(c.running.target, { rate: 50, durationMs: 300, connections: 2, body: BODY });
  };
  const release = () => {
    for (const o of collected) if (o.running.pid) signal(o.running.pid, 'SIGCONT');
  };
  // A harness interrupted mid-run must not leave paused servers behind: they get the same SIGINT, once resumed.
  process.once('exit', release);
  if (options.mode === 'full') {
    const quiet = await waitForQuiet(60_000);
    if (quiet !== null && quiet >= NOISY_PCT / 2) log(`the machine is busy (other processes use ${quiet.toFixed(0)}% of a core): results will be noisy`);
  }

  try {
    // ------------------------------------------------------------------ start and check every variant
    for (const id of options.variants) {
      if (id === 'aigw-full-shared') {
        const unreachable = await sharedStoresReachable(options.databaseUrl, options.redisUrl);
        if (unreachable) {
          log(`${id}: skipped (${unreachable})`);
          results.push({ id, description: 'aigw, full pipeline, on Postgres + Redis', skipped: unreachable });
          continue;
        }
      }
      const t0 = Date.now();
      let running: Running | undefined;
      try {
        running = await startVariant(ctx, id);
        const bootMb = running.pid ? rssMb(running.pid) : null;
        await check(running, upstream.url);
        const result: VariantResult = { id, description: running.description, rss: { bootMb, idleMb: null, loadMb: null } };
        results.push(result);
        collected.push({ running, result, json: [], delayed: [], streams: [] });
        log(`${id}: up in ${Date.now() - t0} ms (${running.description})`);
      } catch (err) {
        await running?.stop().catch(() => {});
        log(`${id}: FAILED ${(err as Error).message}`);
        results.push({ id, description: running?.description ?? id, error: (err as Error).message });
      }
    }

    // ------------------------------------------------------------------ warm-up, then idle RSS
    for (const c of collected) {
      await runJson(c.running.target, { rate: 400, durationMs: S.warmupMs, connections: 8, body: BODY });
      await runStream(c.running.target, { rate: 20, durationMs: Math.min(1000, S.warmupMs), connections: 8, body: STREAM_CHAT_BODY, paceMs: STREAM_PACE_MS });
    }
    await sleep(options.mode === 'quick' ? 100 : 1000);
    for (const c of collected) if (c.running.pid) c.result.rss!.idleMb = rssMb(c.running.pid);

    // ------------------------------------------------------------------ interleaved rounds
    for (let round = 0; round < S.rounds; round++) {
      const order = collected.map((_, i) => collected[(i + round) % collected.length]!);
      for (const c of order) {
        await focus(c);
        c.json.push(await measured(`${c.running.id} c=1`, async () => {
          const cpu0 = c.running.pid ? cpuMs(c.running.pid) : null;
          const r = await runJson(c.running.target, { rate: S.latency.rate, durationMs: S.latency.durationMs, connections: 1, body: BODY, fromSend: true });
          const cpu1 = c.running.pid ? cpuMs(c.running.pid) : null;
          return { ...r, cpuMs: cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : undefined };
        }, c.running.sharedStores));
      }
      for (const c of order) {
        await focus(c);
        c.delayed.push(await measured(`${c.running.id} 20 ms upstream`, () => runJson(c.running.target, { rate: S.delayed.rate, durationMs: S.delayed.durationMs, connections: S.delayed.connections, body: DELAY_BODY, fromSend: true }), c.running.sharedStores));
      }
      for (const c of order) {
        await focus(c);
        c.streams.push(await measured(`${c.running.id} stream`, () => runStream(c.running.target, { rate: S.stream.rate, durationMs: S.stream.durationMs, connections: S.stream.connections, body: STREAM_CHAT_BODY, paceMs: STREAM_PACE_MS, fromSend: true }), c.running.sharedStores));
      }
      log(`round ${round + 1}/${S.rounds}: ${order.map((c) => `${c.running.id} p99 ${percentile(c.json.at(-1)!.latencies, 99).toFixed(2)} ms`).join(', ')}`);
    }

    const direct = collected.find((c) => c.running.id === 'direct');
    const all = (runs: RunResult[], pick: (r: RunResult) => number[] = (r) => r.latencies) => runs.flatMap(pick);
    const streamAll = (runs: StreamResult[], pick: (r: StreamResult) => number[]) => runs.flatMap(pick);
    for (const c of collected) {
      const errors = (runs: RunResult[]) => runs.reduce((n, r) => n + r.errors, 0);
      const cpuRuns = c.json.filter((r) => r.cpuMs !== undefined);
      const cpuReqs = cpuRuns.reduce((n, r) => n + r.ok, 0);
      c.result.latency = {
        ...dist(all(c.json), direct && all(direct.json)), errors: errors(c.json),
        ...(cpuReqs > 0 ? { cpuUsPerRequest: (cpuRuns.reduce((n, r) => n + r.cpuMs!, 0) * 1000) / cpuReqs } : {}),
      };
      c.result.delayed = { ...dist(all(c.delayed), direct && all(direct.delayed)), errors: errors(c.delayed) };
      const chunkTransit = streamAll(c.streams, (r) => r.transit);
      c.result.stream = {
        streams: c.streams.reduce((n, r) => n + r.ok, 0),
        errors: errors(c.streams),
        ttft: dist(streamAll(c.streams, (r) => r.ttft), direct && streamAll(direct.streams, (r) => r.ttft)),
        chunk: dist(chunkTransit, direct && streamAll(direct.streams, (r) => r.transit)),
        maxChunkMs: chunkTransit.reduce((m, v) => Math.max(m, v), 0),
        chunks: c.streams.reduce((n, r) => n + r.chunks, 0),
        held: c.streams.reduce((n, r) => n + r.held, 0),
      };
      const firstError = [...c.json, ...c.delayed, ...c.streams].find((r) => r.firstError)?.firstError;
      if (firstError) log(`${c.running.id}: first error: ${firstError}`);
    }

    // ------------------------------------------------------------------ throughput ramps, one variant at a time
    for (const c of collected) {
      await focus(c);
      const sampler = rssSampler(c.running.pid);
      let before = { server: 0, load: 0, at: 0 };
      let stopNoise = noise(c.running.sharedStores);
      const loadCpu = () => {
        const u = process.cpuUsage();
        return (u.user + u.system) / 1000 + (cpuMs(upstream.pid) ?? 0);
      };
      const steps: NonNullable<VariantResult['throughput']>['steps'] = [];
      const { max, maxServed } = await ramp(c.running.target, {
        body: BODY, p99LimitMs: 10, ...S.ramp,
        beforeStep: () => {
          before = { server: c.running.pid ? cpuMs(c.running.pid) ?? 0 : 0, load: loadCpu(), at: performance.now() };
          stopNoise = noise(c.running.sharedStores);
        },
        onStep: (s, retried) => {
          const wall = performance.now() - before.at;
          const foreign = stopNoise();
          if (!s.pass && !retried && foreign !== null && foreign > NOISY_PCT && retryBudgetMs > 0) {
            log(`${c.running.id} ramp at ${s.rate}/s: other processes used ${foreign.toFixed(0)}% of a core meanwhile; measuring again`);
            retryBudgetMs -= S.ramp.stepMs;
            retries++;
            return 'retry';
          }
          if (foreign !== null) noiseSeen.push(foreign);
          const server = c.running.pid ? ((cpuMs(c.running.pid) ?? 0) - before.server) / wall * 100 : null;
          steps.push({ ...s, serverCpu: server, loadCpu: ((loadCpu() - before.load) / wall) * 100, otherCpu: foreign });
        },
      });
      c.result.throughput = { max, maxServed, steps };
      c.result.rss!.loadMb = sampler.stop();
      log(`${c.running.id}: max ${max} requests/s with p99 < 10 ms, keeps up to ${maxServed}/s (${steps.map((s) => `${s.rate}:${s.p99.toFixed(1)}${s.pass ? '' : 'x'}`).join(' ')}); RSS peak ${c.result.rss!.loadMb?.toFixed(0) ?? '-'} MB`);
    }

    // ------------------------------------------------------------------ saturation: closed loop, interleaved rounds
    // One run per variant measured the machine's mood as much as the variant (the ratio to the pass-through moved by
    // eight points between two runs of one build): each variant runs once per round, in rotated order, and keeps
    // its median round.
    const saturationRounds = new Map<Collected, SaturationResult[]>();
    const rssPeaks = new Map<Collected, number>();
    for (let round = 0; round < S.saturation.rounds; round++) {
      const order = collected.map((_, i) => collected[(i + round) % collected.length]!);
      for (const c of order) {
        await focus(c);
        const settings = { connections: S.saturation.connections, durationMs: S.saturation.durationMs, body: BODY };
        // A short closed-loop burst first, so that the measured one starts with warm connections and JIT.
        await runClosedLoop(c.running.target, { ...settings, durationMs: Math.min(500, settings.durationMs) });
        const sampler = rssSampler(c.running.pid);
        const { r, cpu } = await measured(`${c.running.id} saturation`, async () => {
          const load0 = process.cpuUsage();
          const upstream0 = cpuMs(upstream.pid) ?? 0;
          const server0 = c.running.pid ? cpuMs(c.running.pid) : null;
          const t0 = performance.now();
          const r = await runClosedLoop(c.running.target, settings);
          const wallMs = performance.now() - t0;
          const server1 = c.running.pid ? cpuMs(c.running.pid) : null;
          const load = process.cpuUsage(load0);
          const loadMs = (load.user + load.system) / 1000 + (cpuMs(upstream.pid) ?? 0) - upstream0;
          return { r, cpu: { serverMs: server0 !== null && server1 !== null ? server1 - server0 : null, loadMs, wallMs } };
        }, c.running.sharedStores);
        const rss = sampler.stop();
        if (rss !== null) rssPeaks.set(c, Math.max(rssPeaks.get(c) ?? 0, rss));
        const sat = summarize(r, settings, cpu, rss);
        saturationRounds.set(c, [...(saturationRounds.get(c) ?? []), sat]);
        if (r.firstError) log(`${c.running.id} saturation: first error: ${r.firstError}`);
        log(`${c.running.id}: saturation round ${round + 1}/${S.saturation.rounds}: ${sat.achieved.toFixed(0)} requests/s with ${sat.connections} connections (server CPU ${sat.serverCpuPct?.toFixed(0) ?? '-'}%, ${sat.perCore?.toFixed(0) ?? '-'} per core), p99 ${sat.p99.toFixed(1)} ms, RSS peak ${rss?.toFixed(0) ?? '-'} MB`);
      }
    }
    for (const c of collected) {
      const rounds = saturationRounds.get(c) ?? [];
      if (rounds.length === 0) continue;
      const rss = rssPeaks.get(c) ?? null;
      c.result.saturation = { ...medianRound(rounds), rssMb: rss, perCoreRounds: rounds.map((x) => x.perCore), achievedRounds: rounds.map((x) => x.achieved) };
      if (c.result.rss && rss !== null) c.result.rss.loadMb = Math.max(c.result.rss.loadMb ?? 0, rss);
      const sat = c.result.saturation;
      log(`${c.running.id}: saturation ${sat.achieved.toFixed(0)} requests/s (median round), ${sat.perCore?.toFixed(0) ?? '-'} per core (rounds: ${rounds.map((x) => x.perCore?.toFixed(0) ?? '-').join(', ')}), RSS peak ${rss?.toFixed(0) ?? '-'} MB`);
    }

    // ------------------------------------------------------------------ soak
    const soaked = collected.find((c) => c.running.id === 'aigw-full');
    if (options.soak && soaked) {
      await focus(soaked);
      soak = await runSoak(soaked.running, S, log);
    }
  } finally {
    release();
    process.off('exit', release);
    for (const c of collected) await c.running.stop().catch((err) => log(`stopping ${c.running.id} failed: ${(err as Error).message}`));
    await upstream.stop();
    rmSync(workDir, { recursive: true, force: true });
  }

  // The window's own added latency, in-process once the servers are stopped: end to end, the p99 of a stream's
  // TTFT moves by tens of milliseconds between rounds with the machine's stalls, more than the window costs.
  let guards: Results['guards'];
  if (options.variants.includes('aigw-guards')) {
    const iterations = options.mode === 'full' ? 5000 : 200;
    const firstToken = await guardsFirstTokenMs(iterations);
    guards = { iterations, firstTokenMs: { p50: percentile(firstToken, 50), p99: percentile(firstToken, 99) } };
    log(`guards before the first token, in-process: p50 ${guards.firstTokenMs.p50.toFixed(3)} ms, p99 ${guards.firstTokenMs.p99.toFixed(3)} ms over ${iterations} streams`);
  }

  const out: Results = {
    meta: {
      date: new Date().toISOString(),
      mode: options.mode,
      wallSeconds: (Date.now() - started) / 1000,
      node: process.versions.node,
      cpu: cpus()[0]?.model ?? 'unknown CPU',
      cores: cpus().length,
      pinned,
      calibrationMs: { start: calibrationStart, end: calibrate() },
      settings: { ...S, soak: options.soak ? S.soak : null },
      noise: {
        meanPct: noiseSeen.length ? noiseSeen.reduce((a, b) => a + b, 0) / noiseSeen.length : null,
        maxPct: noiseSeen.length ? Math.max(...noiseSeen) : null,
        repeated: retries,
      },
    },
    variants: results,
    ...(soak ? { soak } : {}),
    ...(guards ? { guards } : {}),
    targets: [],
  };
  out.targets = targets(out);
  writeOutputs(out, options);
  return out;
}

/** One JSON and one streamed answer, and for Portkey proof that it reaches the loopback upstream. */
async function check(running: Running, upstreamUrl: string): Promise<void> {
  const before = await upstreamRequests(upstreamUrl);
  const json = await runJson(running.target, { rate: 20, durationMs: 250, connections: 1, body: BODY });
  if (json.errors > 0) throw new Error(`JSON answers failed: ${json.firstError}`);
  const stream = await runStream(running.target, { rate: 10, durationMs: 200, connections: 2, body: STREAM_CHAT_BODY, paceMs: STREAM_PACE_MS });
  if (stream.errors > 0) throw new Error(`streams failed: ${stream.firstError}`);
  const reached = (await upstreamRequests(upstreamUrl)) - before;
  if (reached !== json.sent + stream.sent) throw new Error(`${json.sent + stream.sent} requests sent, ${reached} reached the loopback upstream`);
}

async function runSoak(running: Running, S: Settings, log: (line: string) => void): Promise<SoakResult> {
  const samples: Array<[number, number]> = [];
  const t0 = performance.now();
  const timer = setInterval(() => {
    const mb = running.pid ? rssMb(running.pid) : null;
    if (mb !== null) samples.push([(performance.now() - t0) / 1000, mb]);
  }, 2000);
  let errors = 0;
  const p99s: number[] = [];
  const sliceMs = 10_000;
  try {
    // Bounded by the wall clock: a server that falls behind ends the soak on time, with its errors counted.
    for (let left = S.soak.seconds * 1000; left > 500; left = S.soak.seconds * 1000 - (performance.now() - t0)) {
      const r = await runJson(running.target, { rate: S.soak.rate, durationMs: Math.min(sliceMs, left), connections: 16, body: BODY });
      errors += r.errors;
      p99s.push(percentile(r.latencies, 99));
    }
  } finally {
    clearInterval(timer);
  }
  const span = S.soak.seconds;
  const warm = Math.min(30, span / 10);
  const minute = Math.min(60, span / 4);
  const low = (from: number, to: number) => Math.min(...samples.filter(([t]) => t >= from && t <= to).map(([, mb]) => mb));
  const growthMb = low(span - minute, span + 5) - low(warm, warm + minute);
  log(`soak: ${S.soak.rate}/s for ${span} s, ${errors} errors, RSS growth ${growthMb.toFixed(1)} MB`);
  return { variant: running.id, rate: S.soak.rate, seconds: span, wallSeconds: (performance.now() - t0) / 1000, errors, p99: Math.max(...p99s), samples, growthMb };
}

function targets(results: Results): TargetResult[] {
  const v = (id: string) => results.variants.find((x) => x.id === id && !x.skipped && !x.error);
  const full = v('aigw-full');
  const shared = v('aigw-full-shared');
  const portkey = v('portkey');
  const pass = v('passthrough');
  const t: TargetResult[] = [];
  const ms = (x: number | undefined) => (x === undefined ? '–' : `${x >= 0 ? '+' : ''}${x.toFixed(2)} ms`);
  const sharedNote = (x: number | undefined) => (shared && x !== undefined ? `on Postgres + Redis: ${ms(x)}` : undefined);
  const addedP99 = full?.latency?.addedP99;
  const passNote = (x: number | undefined) => (x !== undefined ? `the bare pass-through adds ${ms(x)}` : undefined);
  t.push({
    name: 'full pipeline, added p99 at concurrency 1', target: '<= 1 ms', measured: ms(addedP99), met: addedP99 === undefined ? null : addedP99 <= 1,
    note: [sharedNote(shared?.latency?.addedP99), passNote(pass?.latency?.addedP99)].filter(Boolean).join('; ') || undefined,
  });
  const fullMax = full?.throughput?.max;
  const pkMax = portkey?.throughput?.max;
  const passMax = pass?.throughput?.max;
  const cost = (x: VariantResult | undefined) => x?.latency?.cpuUsPerRequest;
  const byCost = (a: VariantResult | undefined, b: VariantResult | undefined, as: (r: number) => string) =>
    cost(a) && cost(b) ? `by CPU cost per request: ${as(cost(b)! / cost(a)!)} (${cost(a)!.toFixed(0)} vs ${cost(b)!.toFixed(0)} µs)` : undefined;
  const boundNote = (x: VariantResult | undefined) => (x && loadBound(results, x) ? `${x.id} was load-bound, so its real limit is higher` : undefined);
  const notes = (...n: Array<string | undefined>) => n.filter(Boolean).join('; ') || undefined;
  const servedRatio = (a: VariantResult | undefined, b: VariantResult | undefined) => {
    const x = a?.throughput?.maxServed;
    const y = b?.throughput?.maxServed;
    return x && y ? x / y >= 10 : null;
  };
  const served = (a: VariantResult | undefined, b: VariantResult | undefined, as: (r: number) => string) => {
    const x = a?.throughput?.maxServed;
    const y = b?.throughput?.maxServed;
    return x && y ? `kept up with at any latency: ${as(x / y)} (${x} vs ${y} requests/s)` : undefined;
  };
  const saturated = (a: VariantResult | undefined, b: VariantResult | undefined, as: (r: number) => string) => {
    const x = a?.saturation?.perCore;
    const y = b?.saturation?.perCore;
    return x && y ? `closed loop, ${a!.saturation!.connections} connections, per core: ${as(x / y)} (${x.toFixed(0)} vs ${y.toFixed(0)} requests/s)` : undefined;
  };
  t.push({
    name: 'throughput on one core vs Portkey', target: '>= 10x',
    measured: fullMax !== undefined && pkMax
      ? `${(fullMax / pkMax).toFixed(1)}x (${fullMax} vs ${pkMax} requests/s with p99 < 10 ms)`
      : fullMax !== undefined && pkMax === 0 ? `Portkey kept p99 under 10 ms at no rate (aigw-full: up to ${fullMax} requests/s), so capacity decides` : '–',
    met: fullMax !== undefined && pkMax ? fullMax / pkMax >= 10 : pkMax === 0 ? servedRatio(full, portkey) : null,
    note: notes(saturated(full, portkey, (r) => `${r.toFixed(1)}x`), served(full, portkey, (r) => `${r.toFixed(1)}x`), byCost(full, portkey, (r) => `${r.toFixed(1)}x`)),
  });
  t.push({
    name: 'throughput on one core vs the bare pass-through', target: '>= 50%',
    measured: fullMax !== undefined && passMax ? `${((fullMax / passMax) * 100).toFixed(0)}% (${fullMax} vs ${passMax} requests/s with p99 < 10 ms)` : '–',
    met: fullMax !== undefined && passMax ? fullMax / passMax >= 0.5 : null,
    note: notes(saturated(full, pass, (r) => `${(r * 100).toFixed(0)}%`), served(full, pass, (r) => `${(r * 100).toFixed(0)}%`), byCost(full, pass, (r) => `${(r * 100).toFixed(0)}%`), boundNote(pass)),
  });
  const ttft = full?.stream?.ttft.addedP99;
  t.push({
    name: 'streaming, added TTFT p99', target: '<= 1 ms', measured: ms(ttft), met: ttft === undefined ? null : ttft <= 1,
    note: [sharedNote(shared?.stream?.ttft.addedP99), passNote(pass?.stream?.ttft.addedP99)].filter(Boolean).join('; ') || undefined,
  });
  const guarded = v('aigw-guards');
  const guardTtft = results.guards?.firstTokenMs.p99;
  const endToEnd = guarded?.stream && full?.stream
    ? `end to end, aigw-guards over aigw-full: TTFT p50 ${ms(guarded.stream.ttft.p50 - full.stream.ttft.p50)}, p99 ${ms(guarded.stream.ttft.p99 - full.stream.ttft.p99)} (the p99 of either moves by tens of ms between rounds with the machine's stalls)`
    : undefined;
  t.push({
    name: 'guards at the default window, added TTFT p99 (input check + first chunk through the window)', target: '< 5 ms', measured: ms(guardTtft),
    met: guardTtft === undefined ? null : guardTtft < 5,
    note: notes(
      results.guards ? `in-process over ${results.guards.iterations} streams, p50 ${ms(results.guards.firstTokenMs.p50)}` : undefined,
      endToEnd,
      `the bench's chunks end a word; a chunk that ends inside a word is held until the next one (one upstream chunk gap, ${STREAM_PACE_MS} ms here)`,
    ),
  });
  const gateways = results.variants.filter((x) => x.stream && x.id !== 'direct');
  const aigws = gateways.filter((x) => x.id.startsWith('aigw'));
  t.push({
    name: 'no chunk held (aigw)', target: 'chunks as late as one 10 ms pace: under 1%, as for the bare pass-through',
    measured: gateways.map((x) => `${x.id} ${x.stream!.held}/${x.stream!.chunks}, max ${x.stream!.maxChunkMs.toFixed(1)} ms`).join('; ') || '–',
    met: aigws.length === 0 ? null : aigws.every((x) => x.stream!.held <= x.stream!.chunks * 0.01),
  });
  const rss = full?.rss?.loadMb ?? undefined;
  t.push({ name: 'RSS under load (aigw-full)', target: '<= 150 MB', measured: rss === undefined || rss === null ? '–' : `${rss.toFixed(0)} MB`, met: rss === undefined || rss === null ? null : rss <= 150, note: shared?.rss?.loadMb ? `on Postgres + Redis: ${shared.rss.loadMb.toFixed(0)} MB` : undefined });
  const soak = results.soak;
  t.push({ name: 'RSS growth over a 5-minute soak', target: '<= 10 MB', measured: soak ? `${soak.growthMb.toFixed(1)} MB at ${soak.rate}/s` : 'not run (--soak)', met: soak ? soak.growthMb <= 10 : null });
  const wall = results.meta.wallSeconds - (soak ? soak.wallSeconds : 0);
  t.push({ name: '`npm run bench` wall time (without the soak)', target: '< 10 min', measured: `${(wall / 60).toFixed(1)} min`, met: results.meta.mode === 'full' ? wall < 600 : null });
  return t.map((x) => (x.note === undefined ? (({ note: _n, ...rest }) => rest)(x) : x));
}

function writeOutputs(results: Results, options: Pick<BenchOptions, 'resultsFile' | 'reportFile' | 'svgFile'>, withResults = true): void {
  for (const file of [options.resultsFile, options.reportFile, options.svgFile]) mkdirSync(join(file, '..'), { recursive: true });
  if (withResults) writeFileSync(options.resultsFile, JSON.stringify(results, (_k, v) => (typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1000) / 1000 : v), 2) + '\n');
  writeFileSync(options.svgFile, renderSvg(results));
  const svgName = options.svgFile.split('/').at(-1)!;
  writeFileSync(options.reportFile, renderMarkdown(results, svgName, join(REPO_ROOT, 'bench/analysis.md')));
}

// ---------------------------------------------------------------------------------------------------- CLI

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      soak: { type: 'boolean', default: false },
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      out: { type: 'string' },
      profile: { type: 'string' },
      render: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const log = (line: string) => process.stdout.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/11';
  if (values.profile !== undefined) {
    const { profileVariant } = await import('./profile.ts');
    await profileVariant((values.profile || 'aigw-full') as VariantId, { databaseUrl, redisUrl, log });
    return;
  }
  if (values.render) {
    // Only the report: docs/benchmarks.md and .svg again from the results file (after editing bench/analysis.md).
    const dir = values.out;
    const resultsFile = dir ? join(dir, 'results.json') : join(REPO_ROOT, 'bench/results.json');
    const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as Results;
    results.targets = targets(results);
    writeOutputs(results, {
      resultsFile,
      reportFile: dir ? join(dir, 'benchmarks.md') : join(REPO_ROOT, 'docs/benchmarks.md'),
      svgFile: dir ? join(dir, 'benchmarks.svg') : join(REPO_ROOT, 'docs/benchmarks.svg'),
    }, false);
    log(`rendered the report from ${resultsFile}`);
    return;
  }
  const variants = values.only ? (values.only.split(',') as VariantId[]) : ALL_VARIANTS;
  for (const id of variants) if (!ALL_VARIANTS.includes(id)) throw new Error(`unknown variant ${id} (known: ${ALL_VARIANTS.join(', ')})`);
  const mode = values.quick ? 'quick' : 'full';
  const outDir = values.out ?? (values.quick ? mkdtempSync(join(tmpdir(), 'aigw-bench-out-')) : undefined);
  const results = await runBench({
    mode,
    settings: values.quick ? QUICK : FULL,
    variants,
    soak: values.soak ?? false,
    pin: true,
    resultsFile: outDir ? join(outDir, 'results.json') : join(REPO_ROOT, 'bench/results.json'),
    reportFile: outDir ? join(outDir, 'benchmarks.md') : join(REPO_ROOT, 'docs/benchmarks.md'),
    svgFile: outDir ? join(outDir, 'benchmarks.svg') : join(REPO_ROOT, 'docs/benchmarks.svg'),
    databaseUrl,
    redisUrl,
    log,
  });
  for (const t of results.targets) log(`target ${t.name}: ${t.measured} (${t.target}) ${t.met === null ? 'not measured' : t.met ? 'met' : 'MISSED'}`);
  log(`done in ${results.meta.wallSeconds.toFixed(0)} s; wrote ${outDir ?? 'bench/results.json, docs/benchmarks.md, docs/benchmarks.svg'}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.once('SIGINT', () => process.exit(130));
  main().then(() => process.exit(0), (err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}

export type { Target };

/**
 * A focused comparison for the passthrough's transport: today's undici path against http-proxy-3 1.x, each in
 * its own process (bench/passthrough-transport.ts) pinned to one core, on the same loopback upstream
 * (bench/upstream.ts) and the same open-loop rates, the load generator and the upstream on the other core.
 * Rounds alternate the two transports so that a machine that slows down costs both alike.
 * `node --import tsx bench/passthrough-transports.ts [rounds]` prints one JSON line per run and a summary table.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, closeSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentile, runJson, runStream, type StreamResult, type Target } from './load.ts';
import type { Transport } from './passthrough-transport.ts';
import { STREAM_PACE_MS } from './upstream.ts';
import { cpuMs, freePort, hasTaskset, pin, REPO_ROOT, startUpstreamProcess } from './variants.ts';

const TRANSPORTS: Transport[] = ['undici', 'http-proxy-3'];
const JSON_RATES = [500, 1500, 3000];
const CONNECTIONS = 64;
const STEP_MS = 8000;
const JSON_BODY = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'Hello, how are you today?' }] });
const STREAM_BODY = JSON.stringify({ model: 'bench', stream: true, messages: [{ role: 'user', content: 'Hello' }] });

interface Row {
  round: number;
  transport: Transport;
  scenario: string;
  offered: number;
  achieved: number;
  errors: number;
  p50: number;
  p99: number;
  /** CPU of the proxy process per completed request. */
  cpuMsPerRequest: number;
  /** Streams: a chunk's time from the upstream's write to the client (every chunk after the first). */
  transitP50?: number;
  transitP99?: number;
  /** Streams: from the request's due time to the first content chunk. */
  ttftP50?: number;
  ttftP99?: number;
  /** The machine's 1-minute load average when the step began. */
  load1: number;
}

async function startServer(transport: Transport, upstream: string, workDir: string, core: number | null) {
  const port = await freePort();
  const fd = openSync(join(workDir, `${transport}.log`), 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'bench/passthrough-transport.ts')], {
    cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', TRANSPORT: transport, UPSTREAM: upstream, PORT: String(port) }, stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    try {
      await (await fetch(`${url}/proxy/openai/chat/completions`, { method: 'POST', body: JSON_BODY })).arrayBuffer();
      break;
    } catch (err) {
      if (tries > 300) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  pin(child.pid!, core);
  return { url, pid: child.pid!, stop: async () => {
    child.kill('SIGTERM');
    await exited;
  } };
}

async function measure(round: number, transport: Transport, url: string, pid: number, log: (row: Row) => void): Promise<void> {
  const target: Target = { url, path: '/proxy/openai/chat/completions', headers: { 'content-type': 'application/json' } };
  // Warm-up: JIT, pools and connections, not counted.
  await runJson(target, { rate: 500, durationMs: 3000, connections: CONNECTIONS, body: JSON_BODY });
  const runs: Array<{ scenario: string; offered: number; run: () => ReturnType<typeof runJson> }> = [
    { scenario: 'json c=1', offered: 100, run: () => runJson(target, { rate: 100, durationMs: STEP_MS, connections: 1, body: JSON_BODY, fromSend: true }) },
    ...JSON_RATES.map((rate) => ({ scenario: `json c=${CONNECTIONS}`, offered: rate, run: () => runJson(target, { rate, durationMs: STEP_MS, connections: CONNECTIONS, body: JSON_BODY }) })),
    // Few streams at once: a chunk's transit is the transport's own delay (buffering, Nagle), not queueing.
    { scenario: 'stream c=8', offered: 20, run: () => runStream(target, { rate: 20, durationMs: STEP_MS, connections: 8, body: STREAM_BODY, paceMs: STREAM_PACE_MS }) },
    { scenario: 'stream c=64', offered: 200, run: () => runStream(target, { rate: 200, durationMs: STEP_MS, connections: CONNECTIONS, body: STREAM_BODY, paceMs: STREAM_PACE_MS }) },
  ];
  for (const { scenario, offered, run } of runs) {
    const load1 = round2(loadavg()[0]!);
    const before = cpuMs(pid) ?? 0;
    const result = await run();
    const cpu = (cpuMs(pid) ?? 0) - before;
    const row: Row = {
      round, transport, scenario, offered, achieved: Math.round(result.achieved), errors: result.errors,
      p50: round2(percentile(result.latencies, 50)), p99: round2(percentile(result.latencies, 99)),
      cpuMsPerRequest: round2(result.ok > 0 ? cpu / result.ok : NaN), load1,
    };
    const stream = result as Partial<StreamResult>;
    if (stream.transit && stream.ttft) {
      row.transitP50 = round2(percentile(stream.transit, 50));
      row.transitP99 = round2(percentile(stream.transit, 99));
      row.ttftP50 = round2(percentile(stream.ttft, 50));
      row.ttftP99 = round2(percentile(stream.ttft, 99));
    }
    log(row);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100;

function summary(rows: Row[]): string {
  const keys = [...new Set(rows.map((r) => `${r.scenario} @${r.offered}/s`))];
  const median = (values: number[]) => percentile(values, 50);
  const lines = ['| scenario | transport | achieved/s | p50 ms | p99 ms | CPU ms/request | errors |', '|---|---|---|---|---|---|---|'];
  for (const key of keys) {
    for (const transport of TRANSPORTS) {
      const of = rows.filter((r) => r.transport === transport && `${r.scenario} @${r.offered}/s` === key);
      if (of.length === 0) continue;
      const transit = of[0]!.transitP99 !== undefined
        ? ` (transit p50/p99 ${median(of.map((r) => r.transitP50!))}/${median(of.map((r) => r.transitP99!))}, TTFT p50/p99 ${median(of.map((r) => r.ttftP50!))}/${median(of.map((r) => r.ttftP99!))})`
        : '';
      lines.push(`| ${key} | ${transport} | ${median(of.map((r) => r.achieved))} | ${median(of.map((r) => r.p50))} | ${median(of.map((r) => r.p99))}${transit} | ${median(of.map((r) => r.cpuMsPerRequest))} | ${of.reduce((n, r) => n + r.errors, 0)} |`);
    }
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rounds = Number(process.argv[2] ?? 2);
  const workDir = mkdtempSync(join(tmpdir(), 'aigw-bench-transports-'));
  const pinning = hasTaskset();
  const serverCore = pinning ? 0 : null;
  if (pinning) pin(process.pid, 1);
  const upstream = await startUpstreamProcess(workDir, pinning ? 1 : null);
  const rows: Row[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      // Alternate which transport goes first.
      const order = round % 2 === 1 ? TRANSPORTS : [...TRANSPORTS].reverse();
      for (const transport of order) {
        const server = await startServer(transport, upstream.url, workDir, serverCore);
        try {
          await measure(round, transport, server.url, server.pid, (row) => {
            rows.push(row);
            process.stdout.write(`${JSON.stringify(row)}\n`);
          });
        } finally {
          await server.stop();
        }
      }
    }
  } finally {
    await upstream.stop();
  }
  process.stdout.write(`\nMedians over ${rounds} round(s); ${pinning ? 'servers pinned to core 0, load and upstream to core 1' : 'no taskset: unpinned'}.\n${summary(rows)}\n`);
}

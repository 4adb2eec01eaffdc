/**
 * `node --import tsx bench/instructions.ts [variant...]`: instructions per request of each server, counted by
 * valgrind's callgrind, split by thread. CPU time per request (bench/cpu-split.ts) moves by 10-30% from one run to
 * the next on a shared host; an instruction count does not depend on how busy the machine is, so two builds can
 * be told apart on a busy machine. It counts user space only: the kernel's share of a request (the socket calls,
 * the same for every server) is not in it, and neither is what a cache miss costs.
 *
 * Variants as in bench/cpu-split.ts (`aigw-full=<checkout>/bin/aigw.js`, `aigw-full~auth,usage`, node flags after a
 * second `~`). Each server runs under valgrind (about 50 times slower) with V8 single-threaded, answers WARMUP
 * requests (default 1,500) one at a time (CONCURRENCY, default 1), has its counters zeroed, answers COUNT requests
 * (default 500), and is left a few seconds to finish what those requests queued before its counters are read. What would depend on wall time is
 * kept out: usage is written in batches of 500 only (no interval flush), the job runner does not poll, the keys'
 * last-used times are not written, and V8 compiles and collects on the main thread, so that no optimized code
 * arrives earlier or later as valgrind schedules threads. With V8's background threads, two counts of one build
 * were 25-35% apart; single-threaded, 0.5% (the total; the main thread's own count moves by a few percent when
 * work lands on another thread). The count includes the compilation a request still causes after the warm-up, so
 * it is a measure for comparing builds, not an estimate of a server's CPU per request. Code that works by the
 * clock is still counted as valgrind's slowness makes it run: the rate limit windows' buckets (one bucket per
 * 42 ms of a minute window) turn over with almost every request here, and once per dozens of requests at full
 * speed, so a change to such code is measured in process (CPU per call) rather than here.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import type { Target } from './load.ts';
import { CHAT_BODY } from './upstream.ts';
import { startUpstreamProcess, startVariant, variantSpec } from './variants.ts';

const WARMUP = Number(process.env.WARMUP ?? 1500);
const COUNT = Number(process.env.COUNT ?? 500);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 1);
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 4000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Exactly `total` requests over `connections` keep-alive connections; throws on the first failed one. */
async function requests(target: Target, total: number, connections: number): Promise<void> {
  const client = new Pool(target.url, { connections, pipelining: 1, keepAliveTimeout: 600_000, headersTimeout: 600_000, bodyTimeout: 600_000 });
  let sent = 0;
  const lane = async () => {
    while (sent < total) {
      sent++;
      const { statusCode, body } = await client.request({ path: target.path, method: 'POST', headers: target.headers, body: CHAT_BODY });
      const text = await body.text();
      if (statusCode !== 200) throw new Error(`HTTP ${statusCode}: ${text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: connections }, lane));
  await client.close();
}

/** Instructions per thread in callgrind's dump files for `pid` (one file per thread with --separate-threads). */
function dumpedCounts(dir: string, pid: number): Map<number, number> {
  const counts = new Map<number, number>();
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(`cg.${pid}.`)) continue;
    const text = readFileSync(join(dir, name), 'utf8');
    const thread = Number(/^thread: (\d+)$/m.exec(text)?.[1] ?? 0);
    const total = Number(/^(?:totals|summary): (\d+)$/m.exec(text)?.[1] ?? 0);
    counts.set(thread, (counts.get(thread) ?? 0) + total);
  }
  return counts;
}

function environmentOf(pid: number): NodeJS.ProcessEnv {
  const pairs = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((entry) => {
    const at = entry.indexOf('=');
    return [entry.slice(0, at), entry.slice(at + 1)] as const;
  });
  return Object.fromEntries(pairs);
}

const specs = process.argv.slice(2).length ? process.argv.slice(2) : ['passthrough', 'aigw-full'];
const workDir = mkdtempSync(join(tmpdir(), 'aigw-instructions-'));
const upstream = await startUpstreamProcess(workDir, null);
const log = (line: string) => console.error(`[instructions ${new Date().toISOString().slice(11, 19)}] ${line}`);
try {
  for (const spec of specs) {
    const { id, options } = variantSpec(spec);
    const dumps = mkdtempSync(join(workDir, 'cg-'));
    const vgdb = join(dumps, 'vgdb');
    log(`${spec}: starting under callgrind`);
    const variant = await startVariant({
      workDir, upstreamUrl: upstream.url, serverCore: null, databaseUrl: '', redisUrl: '', log,
      launcher: ([node, ...args]) => [
        'valgrind', '--tool=callgrind', '--separate-threads=yes', `--callgrind-out-file=${join(dumps, 'cg.%p')}`, `--vgdb-prefix=${vgdb}`,
        node!, '--single-threaded', ...args,
      ],
      pluginConfig: { usage: { flushIntervalMs: 86_400_000 } },
      // The job runner's poll and the keys' last-used writes run by the clock: under valgrind a request lasts about
      // 50 times longer, so each request would carry about 50 times their share (about 450,000 instructions of
      // the database's worker per request, with no plugin writing anything).
      // The database's deadline (5 s) is short for a statement run about 50 times slower on a busy machine: the
      // bench's admin calls at start failed on it.
      configSections: { jobs: { pollIntervalMs: 86_400_000 }, auth: { lastUsedFlushIntervalMs: 86_400_000 }, storage: { databaseTimeoutMs: 120_000 } },
      ...options,
    }, id);
    // valgrind names its control pipes after the server's USER and HOST too (the gateway's HOST is its address):
    // callgrind_control runs in the server's own environment to find them.
    const control = (action: string) => execFileSync('callgrind_control', [`--vgdb-prefix=${vgdb}`, action, String(variant.pid)], { encoding: 'utf8', env: environmentOf(variant.pid!) });
    try {
      log(`${spec}: ${WARMUP} requests to warm up`);
      await requests(variant.target, WARMUP, CONCURRENCY);
      await sleep(SETTLE_MS);
      control('--zero');
      log(`${spec}: ${COUNT} requests counted`);
      await requests(variant.target, COUNT, CONCURRENCY);
      await sleep(SETTLE_MS);
      const said = control('--dump');
      const counts = dumpedCounts(dumps, variant.pid!);
      if (counts.size === 0) throw new Error(`callgrind wrote no dump for ${spec}: ${said}`);
      const per = (n: number) => Math.round(n / COUNT);
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      const main = counts.get(1) ?? 0;
      const others = [...counts].filter(([t, n]) => t !== 1 && per(n) >= 1000).sort((a, b) => b[1] - a[1]).map(([t, n]) => `#${t} ${per(n)}`);
      console.log(`${spec.padEnd(24)} ${String(per(total)).padStart(9)} instructions/request  (main ${per(main)}; other threads ${others.join(', ') || 'none'})`);
    } finally {
      await variant.stop();
    }
  }
} finally {
  await upstream.stop();
}

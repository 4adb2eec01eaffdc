/**
 * `npm run bench -- --profile[=aigw-full]`: one aigw variant under steady load with `node --cpu-prof`, then its
 * hottest functions (self time) and the files they live in. The .cpuprofile stays in the work folder printed at
 * the end, for Chrome DevTools or speedscope.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { runJson, runStream, percentile } from './load.ts';
import { CHAT_BODY, STREAM_PACE_MS } from './upstream.ts';
import { REPO_ROOT, startUpstreamProcess, startVariant, type VariantId } from './variants.ts';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: Node[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * Self time per function and per file. `window` (µs of the monotonic clock, which V8's profile timestamps and
 * process.hrtime share) keeps only the samples taken under load, not the boot or the shutdown.
 */
export function summarize(profile: Profile, top = 35, window?: { from: number; to: number }): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (window && (at < window.from || at > window.to)) return;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const fns = new Map<string, number>();
  const files = new Map<string, number>();
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const file = url ? relative(REPO_ROOT, url.replace(/^file:\/\//, '')) : '(native)';
    fns.set(`${functionName || '(anonymous)'}  ${file}:${lineNumber + 1}`, (fns.get(`${functionName || '(anonymous)'}  ${file}:${lineNumber + 1}`) ?? 0) + us);
    const group = file.startsWith('node_modules/') ? file.split('/').slice(0, file.startsWith('node_modules/@') ? 3 : 2).join('/') : file;
    files.set(group, (files.get(group) ?? 0) + us);
  }
  const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)}%`;
  const lines = [`total sampled ${(total / 1000).toFixed(0)} ms`, '', 'self time by function:'];
  for (const [name, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`${pct(us)}  ${name}`);
  lines.push('', 'self time by file / package:');
  for (const [name, us] of [...files].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`${pct(us)}  ${name}`);
  lines.push('', 'inclusive time by module (a sample counts for every module on its synchronous stack):');
  for (const [name, us] of [...inclusiveByModule(profile, window)].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`${pct(us)}  ${name}`);
  return lines.join('\n');
}

/** A frame's module: a plugin folder, a core file, or an npm package; null for Node's own and native frames. */
function moduleOf(url: string): string | null {
  const path = url.replace(/^file:\/\//, '');
  const inRepo = /(?:^|\/)(?:dist\/)?(plugins\/[^/]+|core\/[^/]+\/[^/.]+|providers\/[^/]+)[/.]/.exec(relative(REPO_ROOT, path));
  if (inRepo && !path.includes('node_modules/')) return inRepo[1]!;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
  return pkg ? pkg[1]! : null;
}

/**
 * Time under each module, callees included, over the synchronous stacks V8 samples: what a layer costs with
 * everything it calls. An await ends a stack, so code that continues after one is credited to its own frames only.
 */
function inclusiveByModule(profile: Profile, window?: { from: number; to: number }): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const total = new Map<string, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    at += dt;
    if (window && (at < window.from || at > window.to)) return;
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const module = moduleOf(byId.get(cur)!.callFrame.url);
      if (module) seen.add(module);
    }
    for (const module of seen) total.set(module, (total.get(module) ?? 0) + dt);
  });
  return total;
}

export async function profileVariant(id: VariantId, options: { databaseUrl: string; redisUrl: string; log(line: string): void; rate?: number; seconds?: number; stream?: boolean }): Promise<string> {
  const workDir = mkdtempSync(join(tmpdir(), 'aigw-profile-'));
  const profDir = join(workDir, 'prof');
  // Nothing is pinned: V8's sampler is a thread of the profiled process, and on the same core as the main thread
  // it only gets to run when that thread blocks, which credits syscalls (log writes, socket writes) with time
  // that is not theirs.
  const upstream = await startUpstreamProcess(workDir, null);
  const running = await startVariant({
    workDir, upstreamUrl: upstream.url, serverCore: null, databaseUrl: options.databaseUrl, redisUrl: options.redisUrl,
    aigwNodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profDir}`], log: options.log,
  }, id);
  const body = CHAT_BODY;
  const rate = options.rate ?? Number(process.env.BENCH_PROFILE_RATE ?? 1500);
  const seconds = options.seconds ?? Number(process.env.BENCH_PROFILE_SECONDS ?? 15);
  const window = { from: 0, to: 0 };
  try {
    await runJson(running.target, { rate: 400, durationMs: 3000, connections: 8, body });
    options.log(`profiling ${id} at ${rate} requests/s for ${seconds} s`);
    window.from = Number(process.hrtime.bigint() / 1000n);
    const r = options.stream
      ? await runStream(running.target, { rate, durationMs: seconds * 1000, connections: 64, body: body.replace(/}$/, ',"stream":true}'), paceMs: STREAM_PACE_MS })
      : await runJson(running.target, { rate, durationMs: seconds * 1000, connections: 64, body });
    window.to = Number(process.hrtime.bigint() / 1000n);
    options.log(`${r.ok} ok, ${r.errors} errors, p50 ${percentile(r.latencies, 50).toFixed(2)} ms, p99 ${percentile(r.latencies, 99).toFixed(2)} ms`);
  } finally {
    await running.stop();
    await upstream.stop();
  }
  // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread (1 is tsx's loader worker).
  const file = readdirSync(profDir).find((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  if (!file) throw new Error(`no .cpuprofile written in ${profDir}`);
  const summary = summarize(JSON.parse(readFileSync(join(profDir, file), 'utf8')) as Profile, 35, window);
  process.stdout.write(`${summary}\n\nprofile: ${join(profDir, file)}\n`);
  return summary;
}

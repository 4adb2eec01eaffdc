/**
 * The report: bench/results.json as written by run.ts -> docs/benchmarks.md (tables) and docs/benchmarks.svg (the
 * plot, drawn by hand: no plotting library). The hand-written analysis in bench/analysis.md is included as is.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { RampStep } from './load.ts';
import type { SaturationResult } from './saturation.ts';

export interface Dist {
  n: number;
  p50: number;
  p99: number;
  /** Over direct (the same percentile of direct subtracted); absent for direct itself. */
  addedP50?: number;
  addedP99?: number;
}

export interface VariantResult {
  id: string;
  description: string;
  skipped?: string;
  error?: string;
  rss?: { bootMb: number | null; idleMb: number | null; loadMb: number | null };
  /** cpuUsPerRequest: CPU time of the server process per request at concurrency 1 (robust on a busy machine). */
  latency?: Dist & { errors: number; cpuUsPerRequest?: number };
  delayed?: Dist & { errors: number };
  stream?: {
    streams: number;
    errors: number;
    ttft: Dist;
    /** Transit of every chunk after the first: upstream write -> arrival at the client. */
    chunk: Dist;
    maxChunkMs: number;
    chunks: number;
    held: number;
  };
  /** max: the highest rate with p99 < 10 ms; maxServed: the highest the server kept up with at any latency. */
  throughput?: { max: number; maxServed: number; steps: Array<RampStep & { serverCpu: number | null; loadCpu: number | null; otherCpu: number | null }> };
  /** The closed-loop saturation run (older results lack it). */
  saturation?: SaturationResult;
}

export interface SoakResult {
  variant: string;
  rate: number;
  seconds: number;
  /** How long the soak really took (a server that falls behind makes the last slice run over). */
  wallSeconds: number;
  errors: number;
  p99: number;
  samples: Array<[number, number]>;
  /** Lowest RSS of the last minute minus lowest RSS of the first minute after warm-up, MB. */
  growthMb: number;
}

export interface TargetResult {
  name: string;
  target: string;
  measured: string;
  met: boolean | null;
  note?: string;
}

export interface Results {
  meta: {
    date: string;
    mode: 'full' | 'quick';
    wallSeconds: number;
    node: string;
    cpu: string;
    cores: number;
    pinned: string;
    /** bench/run.ts calibrate(): a fixed CPU workload, at the start and at the end of the run (older results lack it). */
    calibrationMs?: { start: number; end: number };
    settings: Record<string, unknown>;
    /** CPU other processes used during the measurements, in % of one core; measurements above 25% were repeated once. */
    noise: { meanPct: number | null; maxPct: number | null; repeated: number };
  };
  variants: VariantResult[];
  soak?: SoakResult;
  /** What the guards add before a stream's first token, measured in-process (bench/guards-scan.ts). */
  guards?: { iterations: number; firstTokenMs: { p50: number; p99: number } };
  targets: TargetResult[];
}

const COLORS: Record<string, string> = {
  direct: '#7f7f7f',
  passthrough: '#2ca02c',
  'aigw-empty': '#1f77b4',
  'aigw-full': '#d62728',
  'aigw-guards': '#8c564b',
  'aigw-full-shared': '#ff7f0e',
  portkey: '#9467bd',
};

/**
 * A server whose ramp ended within 15% of direct's ended where the load side (generator + upstream on the other
 * core) ran out, not where the server did: its real limit is higher.
 */
export function loadBound(results: Results, v: VariantResult, which: 'max' | 'maxServed' = 'max'): boolean {
  const direct = results.variants.find((x) => x.id === 'direct')?.throughput?.[which];
  return v.id !== 'direct' && direct !== undefined && direct > 0 && (v.throughput?.[which] ?? 0) >= direct * 0.85;
}

const f = (v: number | null | undefined, digits = 2) => (v === null || v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(digits));
const pm = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '–' : `${v >= 0 ? '+' : ''}${v.toFixed(2)}`);
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function renderMarkdown(results: Results, svgName: string, analysisFile?: string): string {
  const { meta } = results;
  const ok = results.variants.filter((v) => !v.skipped && !v.error);
  const out: string[] = [];
  out.push('# Benchmarks');
  out.push('');
  out.push(`Written by \`npm run bench\` (code in \`bench/\`) on ${meta.date.slice(0, 10)}; do not edit by hand (the analysis comes from \`bench/analysis.md\`).`);
  out.push(`Run: ${meta.mode} mode, ${meta.wallSeconds.toFixed(0)} s wall time. Node ${meta.node}, ${meta.cpu}, ${meta.cores} cores; ${meta.pinned}.`);
  if (meta.calibrationMs) {
    const { start, end } = meta.calibrationMs;
    out.push(`Machine speed: a fixed CPU workload (bench/run.ts \`calibrate\`) took ${start.toFixed(0)} ms at the start and ${end.toFixed(0)} ms at the end; compare runs by it, since the same machine type has run several times slower from one hour to the next.`);
  }
  const noise = meta.noise;
  if (noise.meanPct !== null) {
    const line = `Other processes on the machine used ${noise.meanPct.toFixed(0)}% of a core on average during the measurements (at most ${f(noise.maxPct, 0)}%); ${noise.repeated} disturbed measurement${noise.repeated === 1 ? ' was' : 's were'} repeated.`;
    out.push(noise.meanPct > 10 ? `**${line} The machine was not quiet: treat these numbers as upper bounds.**` : line);
  }
  out.push('');
  out.push(`![added latency and throughput](${svgName})`);
  out.push('');
  out.push('## Targets');
  out.push('');
  out.push('| target | goal | measured | met |');
  out.push('|---|---|---|---|');
  for (const t of results.targets) out.push(`| ${t.name} | ${t.target} | ${t.measured}${t.note ? ` (${t.note})` : ''} | ${t.met === null ? 'not measured' : t.met ? 'yes' : '**no**'} |`);
  out.push('');
  out.push('## Results');
  out.push('');
  out.push('Latencies in milliseconds; "+" columns are added over direct (the same percentile of direct subtracted).');
  out.push('');
  out.push('| variant | c=1 p50 | c=1 p99 | c=1 +p50 | c=1 +p99 | CPU µs / request | 20 ms upstream +p50 | +p99 | stream TTFT +p50 | +p99 | chunk transit p50 | p99 | max | held chunks | max rps (p99 < 10 ms, one core) | keeps up to rps | RSS idle MB | RSS load MB |');
  out.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const v of results.variants) {
    if (v.skipped || v.error) {
      out.push(`| ${v.id} | ${v.skipped ? `skipped: ${v.skipped}` : `failed: ${v.error!.split('\n')[0]}`} |||||||||||||||||`);
      continue;
    }
    const s = v.stream;
    out.push([
      '', v.id, f(v.latency?.p50), f(v.latency?.p99), pm(v.latency?.addedP50), pm(v.latency?.addedP99), f(v.latency?.cpuUsPerRequest, 0),
      pm(v.delayed?.addedP50), pm(v.delayed?.addedP99),
      pm(s?.ttft.addedP50), pm(s?.ttft.addedP99), f(s?.chunk.p50), f(s?.chunk.p99), f(s?.maxChunkMs), s ? `${s.held} / ${s.chunks}` : '–',
      v.throughput ? `${v.throughput.max}${loadBound(results, v) ? ' (load-bound)' : ''}` : '–',
      v.throughput ? `${v.throughput.maxServed}${loadBound(results, v, 'maxServed') ? ' (load-bound)' : ''}` : '–',
      f(v.rss?.idleMb, 0), f(v.rss?.loadMb, 0), '',
    ].join(' | ').trim());
  }
  out.push('');
  out.push('Samples: ' + ok.map((v) => `${v.id} ${v.latency?.n ?? 0} / ${v.delayed?.n ?? 0} / ${v.stream?.streams ?? 0} streams`).join('; ') + '.');
  const errors = ok.filter((v) => (v.latency?.errors ?? 0) + (v.delayed?.errors ?? 0) + (v.stream?.errors ?? 0) > 0);
  if (errors.length > 0) out.push(`Errors: ${errors.map((v) => `${v.id} ${v.latency?.errors ?? 0}/${v.delayed?.errors ?? 0}/${v.stream?.errors ?? 0}`).join(', ')}.`);
  out.push('');
  out.push('### What runs');
  out.push('');
  for (const v of results.variants) out.push(`- **${v.id}**: ${v.description}`);
  out.push('');
  out.push(...saturationTable(results));
  out.push('### Throughput ramps');
  out.push('');
  out.push('Each step is a fixed offered rate for a short while; a step holds when every answer came back and p99 (from the due time) stayed under 10 ms. "server CPU" is the process under test (100% = its one core), "load CPU" the load generator plus the upstream on the other core.');
  out.push('');
  out.push('| variant | offered rps | achieved | p50 ms | p99 ms | errors | server CPU % | load CPU % | other CPU % | holds |');
  out.push('|---|---|---|---|---|---|---|---|---|---|');
  for (const v of ok) {
    for (const s of v.throughput?.steps ?? []) {
      out.push(`| ${v.id} | ${s.rate} | ${s.achieved} | ${f(s.p50)} | ${f(s.p99)} | ${s.errors} | ${f(s.serverCpu, 0)} | ${f(s.loadCpu, 0)} | ${f(s.otherCpu, 0)} | ${s.pass ? 'yes' : 'no'} |`);
    }
  }
  out.push('');
  if (results.soak) {
    const s = results.soak;
    out.push('### Soak');
    out.push('');
    out.push(`${s.variant} at ${s.rate} requests/s for ${s.seconds} s: ${s.errors} errors, p99 ${f(s.p99)} ms, RSS growth ${f(s.growthMb, 1)} MB (lowest RSS of the last minute minus lowest of the first minute after a 30 s warm-up).`);
    out.push('');
    out.push('RSS (MB) every 30 s: ' + s.samples.filter((_, i) => i % 15 === 0).map(([t, mb]) => `${t.toFixed(0)} s: ${mb.toFixed(1)}`).join(', ') + '.');
    out.push('');
  } else {
    out.push('### Soak');
    out.push('');
    out.push('Not run this time: `npm run bench -- --soak` adds the 5-minute soak.');
    out.push('');
  }
  out.push('## Method');
  out.push('');
  out.push(...METHOD);
  out.push('');
  if (analysisFile && existsSync(analysisFile)) {
    out.push(readFileSync(analysisFile, 'utf8').trim());
    out.push('');
  }
  return out.join('\n');
}

/**
 * The closed-loop run as users compare gateways: requests/s of each server on its one core, per fully busy core,
 * against the bare pass-through (the floor for any Node proxy) and Portkey, and the RSS it took.
 */
function saturationTable(results: Results): string[] {
  const ran = results.variants.filter((v) => v.saturation);
  if (ran.length === 0) return [];
  const f = (x: number | null | undefined, digits = 0) => (x === null || x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(digits));
  const perCore = (id: string) => results.variants.find((v) => v.id === id)?.saturation?.perCore ?? null;
  const ratio = (v: VariantResult, base: number | null) => (v.saturation?.perCore && base ? `${((v.saturation.perCore / base) * 100).toFixed(0)}%` : '–');
  const first = ran[0]!.saturation!;
  const rounds = first.perCoreRounds?.length ?? 1;
  const out = [
    '### Saturation (closed loop)',
    '',
    `${first.connections} connections, each sending its next request as soon as its previous answer ended, for ${(first.durationMs / 1000).toFixed(0)} s per server${rounds > 1 ? ` in each of ${rounds} interleaved rounds (servers in rotated order); each server's row is its median round by requests/s per core, and "per core, each round" lists all of them` : ''} (zero-delay upstream); the server on its one core, the load generator and the upstream on the other. "per core" is requests/s divided by the share of its core the server used (its CPU from /proc, all threads); "vs passthrough" and "vs portkey" compare that. RSS is the peak VmRSS of the process (its threads, the embedded database's worker included) during the runs.`,
    '',
    '| variant | requests/s | per core | per core, each round | vs passthrough | vs portkey | p50 ms | p99 ms | errors | server CPU % | load CPU % | RSS MB |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const v of ran) {
    const s = v.saturation!;
    const each = s.perCoreRounds ? s.perCoreRounds.map((x) => f(x)).join(', ') : '–';
    out.push(`| ${v.id} | ${f(s.achieved)} | ${f(s.perCore)} | ${each} | ${ratio(v, perCore('passthrough'))} | ${ratio(v, perCore('portkey'))} | ${f(s.p50, 2)} | ${f(s.p99, 2)} | ${s.errors} | ${f(s.serverCpuPct)} | ${f(s.loadCpuPct)} | ${f(s.rssMb)} |`);
  }
  out.push('');
  return out;
}

const METHOD = [
  '- **Upstream** (`bench/upstream.ts`): plain `node:http`, answers built once. Model `bench` answers JSON at once, or streams',
  '  10 content chunks 10 ms apart; `bench-delay` answers JSON after 20 ms. Every streamed chunk carries the',
  '  upstream\'s `process.hrtime` at its write; that clock is the machine\'s monotonic clock, shared by all processes, so',
  '  the client measures each chunk\'s transit through the gateway exactly.',
  '- **Pinning**: every server under test runs alone on core 1 (`taskset -a -cp 1`, all its threads); the load',
  '  generator (the harness) and the upstream share core 0.',
  '- **Load** (`bench/load.ts`): open loop over an undici pool of keep-alive connections. Requests leave on a fixed',
  '  schedule whatever the answers do; latency counts from the moment a request was due (queueing counts). At',
  '  concurrency 1 (one connection, 100 requests/s, nothing queues) it counts from the send, so the load timer\'s own',
  '  lateness is not noise in a sub-millisecond measure.',
  '- **Rounds**: every measure runs in interleaved rounds (variant order rotated each round), so drift of the machine',
  '  hits every variant alike; percentiles are over all rounds. "Added" is the variant\'s percentile minus direct\'s.',
  '- **c=1**: concurrency 1, zero-delay upstream, 100 requests/s. **20 ms upstream**: `bench-delay` at 100 requests/s',
  '  (about 2 in flight). **Stream**: 40 streams/s (about 4 open at once); TTFT is send -> first content chunk;',
  '  "chunk transit" is upstream write -> client arrival of every later chunk; a chunk counts as **held** when its',
  '  transit reaches the 10 ms pace (as late as if it had waited for the next write). A proxy that buffers holds',
  '  nearly every chunk; a few late ones are stalls of the process (GC, a flush), which the pass-through has too.',
  '- **Isolation**: while one server is measured the others are paused (SIGSTOP), so that their timers and idle',
  '  GCs do not run on the shared core; a few unmeasured requests wake the resumed one first.',
  '- **Max throughput**: a geometric ramp of fixed rates (x1.5 from 250/s), then bisection; the highest rate whose',
  '  every answer came back with p99 under 10 ms, with the server on one core. "Keeps up to" goes on past that',
  '  limit: the highest step at which the server still completed 95% of the offered rate with every answer back',
  '  and p99 under a second (its capacity when tail latency is not the limit).',
  '  A server that ends within 15% of direct\'s ramp is marked load-bound: the load side ran out first.',
  '- **CPU µs / request**: CPU time (all threads, from `/proc/<pid>/stat`) the server process spent per request during',
  '  the concurrency-1 runs. It hardly depends on what else runs on the machine, so it is the steadiest measure of',
  '  cost; 1,000,000 / it is the rate one fully busy core could serve.',
  '- **Saturation**: closed loop (bench/saturation.ts): a fixed number of connections, each always busy, as wrk runs;',
  '  after a half-second burst to warm up, in interleaved rounds (the median round counts). It measures capacity',
  '  per core, not latency at a given rate.',
  '- **RSS**: `/proc/<pid>/status` VmRSS: at boot, idle after the warm-up, and the peak during the throughput ramp and',
  '  the saturation run.',
  '- **Noise**: the harness measures the CPU that processes outside the benchmark use meanwhile (`/proc/stat` minus',
  '  its own processes); a measurement during which they used more than 25% of a core is repeated once (within a',
  '  90 s budget), and the report says how busy the machine was.',
];

// ---------------------------------------------------------------------------------------------------- SVG

export function renderSvg(results: Results): string {
  const W = 1000;
  const H = 440;
  const ok = results.variants.filter((v) => !v.skipped && !v.error);
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="12">`);
  parts.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);

  // Panel A: p99 against offered rate, log-log.
  const ax = { x: 60, y: 40, w: 420, h: 330 };
  const steps = ok.flatMap((v) => (v.throughput?.steps ?? []).map((s) => ({ v, s })));
  const rates = steps.map(({ s }) => s.rate).filter((r) => r > 0);
  const xMin = Math.max(10, Math.min(...rates, 250) * 0.8);
  const xMax = Math.max(...rates, 1000) * 1.2;
  const yMin = 0.1;
  const yMax = 1000;
  const lx = (r: number) => ax.x + ((Math.log10(r) - Math.log10(xMin)) / (Math.log10(xMax) - Math.log10(xMin))) * ax.w;
  const ly = (ms: number) => ax.y + ax.h - ((Math.log10(Math.min(yMax, Math.max(yMin, ms))) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * ax.h;
  parts.push(`<text x="${ax.x}" y="24" font-size="14" font-weight="bold">p99 latency against offered load (server on one core)</text>`);
  parts.push(`<rect x="${ax.x}" y="${ax.y}" width="${ax.w}" height="${ax.h}" fill="none" stroke="#333"/>`);
  for (let e = Math.ceil(Math.log10(xMin)); e <= Math.floor(Math.log10(xMax)); e++) {
    const x = lx(10 ** e);
    parts.push(`<line x1="${x}" y1="${ax.y}" x2="${x}" y2="${ax.y + ax.h}" stroke="#ddd"/><text x="${x}" y="${ax.y + ax.h + 16}" text-anchor="middle">${10 ** e}</text>`);
  }
  for (let e = -1; e <= 3; e++) {
    const y = ly(10 ** e);
    parts.push(`<line x1="${ax.x}" y1="${y}" x2="${ax.x + ax.w}" y2="${y}" stroke="#ddd"/><text x="${ax.x - 6}" y="${y + 4}" text-anchor="end">${10 ** e}</text>`);
  }
  parts.push(`<line x1="${ax.x}" y1="${ly(10)}" x2="${ax.x + ax.w}" y2="${ly(10)}" stroke="#000" stroke-dasharray="5,4"/><text x="${ax.x + ax.w - 4}" y="${ly(10) - 4}" text-anchor="end">10 ms</text>`);
  parts.push(`<text x="${ax.x + ax.w / 2}" y="${ax.y + ax.h + 34}" text-anchor="middle">offered requests/s (log)</text>`);
  parts.push(`<text x="16" y="${ax.y + ax.h / 2}" text-anchor="middle" transform="rotate(-90 16 ${ax.y + ax.h / 2})">p99 ms (log)</text>`);
  for (const v of ok) {
    const pts = [...(v.throughput?.steps ?? [])].filter((s) => Number.isFinite(s.p99)).sort((a, b) => a.rate - b.rate);
    if (pts.length === 0) continue;
    const color = COLORS[v.id] ?? '#000';
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map((s) => `${lx(s.rate).toFixed(1)},${ly(s.p99).toFixed(1)}`).join(' ')}"/>`);
    for (const s of pts) parts.push(`<circle cx="${lx(s.rate).toFixed(1)}" cy="${ly(s.p99).toFixed(1)}" r="2.5" fill="${color}"/>`);
  }

  // Panel B: added latency at concurrency 1 and added TTFT, bars.
  const bx = { x: 600, y: 40, w: 370, h: 330 };
  const gateways = ok.filter((v) => v.id !== 'direct');
  const rows = gateways.flatMap((v) => [
    { v, label: `${v.id} c=1`, p50: v.latency?.addedP50, p99: v.latency?.addedP99 },
    { v, label: `${v.id} TTFT`, p50: v.stream?.ttft.addedP50, p99: v.stream?.ttft.addedP99 },
  ]);
  const maxMs = Math.max(1, ...rows.map((r) => r.p99 ?? 0).filter(Number.isFinite));
  const bxScale = (ms: number) => (Math.max(0, ms) / maxMs) * bx.w;
  const rowH = rows.length > 0 ? bx.h / rows.length : bx.h;
  parts.push(`<text x="${bx.x - 140}" y="24" font-size="14" font-weight="bold">added over direct (ms): p50 solid, p99 light</text>`);
  rows.forEach((r, i) => {
    const y = bx.y + i * rowH;
    const color = COLORS[r.v.id] ?? '#000';
    if (r.p99 !== undefined && Number.isFinite(r.p99)) parts.push(`<rect x="${bx.x}" y="${(y + 3).toFixed(1)}" width="${bxScale(r.p99).toFixed(1)}" height="${(rowH - 6).toFixed(1)}" fill="${color}" fill-opacity="0.35"/>`);
    if (r.p50 !== undefined && Number.isFinite(r.p50)) parts.push(`<rect x="${bx.x}" y="${(y + 3).toFixed(1)}" width="${bxScale(r.p50).toFixed(1)}" height="${(rowH - 6).toFixed(1)}" fill="${color}"/>`);
    parts.push(`<text x="${bx.x - 6}" y="${(y + rowH / 2 + 4).toFixed(1)}" text-anchor="end">${esc(r.label)}</text>`);
    if (r.p99 !== undefined && Number.isFinite(r.p99)) parts.push(`<text x="${(bx.x + bxScale(r.p99) + 4).toFixed(1)}" y="${(y + rowH / 2 + 4).toFixed(1)}">${f(r.p50)} / ${f(r.p99)}</text>`);
  });
  const oneMs = bx.x + bxScale(1);
  parts.push(`<line x1="${oneMs}" y1="${bx.y}" x2="${oneMs}" y2="${bx.y + bx.h}" stroke="#000" stroke-dasharray="5,4"/><text x="${oneMs + 3}" y="${bx.y + bx.h + 16}">1 ms</text>`);

  // Legend.
  let lxPos = ax.x;
  for (const v of ok) {
    const color = COLORS[v.id] ?? '#000';
    const label = `${v.id}${v.throughput ? ` (${v.throughput.max}/s)` : ''}`;
    parts.push(`<rect x="${lxPos}" y="${H - 22}" width="12" height="12" fill="${color}"/><text x="${lxPos + 16}" y="${H - 12}">${esc(label)}</text>`);
    lxPos += 28 + label.length * 6.6;
  }
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

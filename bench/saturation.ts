/**
 * The saturation run: what users compare when they put gateways side by side (wrk with a fixed number of
 * connections). Closed loop: each connection sends its next request as soon as the previous answer has ended, so
 * the server is kept busy and the number is its capacity on its one core, whatever the latency. The open-loop
 * rounds and ramps (load.ts) measure latency at given rates; this measures requests per second per core.
 */
import { percentile, pool, type Target } from './load.ts';

export interface ClosedLoopOptions {
  connections: number;
  durationMs: number;
  body: string;
}

export interface ClosedLoopResult {
  ok: number;
  errors: number;
  /** Completed answers per second over the run. */
  achieved: number;
  /** Milliseconds from send to the end of the answer, one per successful request. */
  latencies: number[];
  firstError?: string;
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

export async function runClosedLoop(target: Target, options: ClosedLoopOptions): Promise<ClosedLoopResult> {
  const client = pool(target, options.connections);
  const latencies: number[] = [];
  let ok = 0;
  let errors = 0;
  let firstError: string | undefined;
  const start = nowMs();
  const end = start + options.durationMs;
  const connection = async () => {
    while (nowMs() < end) {
      const sent = nowMs();
      try {
        const { statusCode, body } = await client.request({ path: target.path, method: 'POST', headers: target.headers, body: options.body });
        if (statusCode !== 200) {
          errors++;
          firstError ??= `HTTP ${statusCode}: ${(await body.text()).slice(0, 300)}`;
          continue;
        }
        await body.dump({ limit: 1 << 20 });
        latencies.push(nowMs() - sent);
        ok++;
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: options.connections }, connection));
  const elapsed = nowMs() - start;
  await client.close();
  return { ok, errors, achieved: (ok * 1000) / elapsed, latencies, ...(firstError ? { firstError } : {}) };
}

/** What the report keeps of a saturation run. */
export interface SaturationResult {
  connections: number;
  durationMs: number;
  requests: number;
  errors: number;
  /** Completed requests per second. */
  achieved: number;
  p50: number;
  p99: number;
  /** CPU of the server process (all threads) in % of one core; null for direct (no process under test). */
  serverCpuPct: number | null;
  /** Requests per second per fully busy core: achieved / (serverCpuPct / 100); null for direct. */
  perCore: number | null;
  /** CPU of the load generator and the upstream, in % of one core (they share the other core). */
  loadCpuPct: number;
  /** Peak VmRSS of the server process (its worker threads, such as the embedded database's, included). */
  rssMb: number | null;
  /** Each round's per-core and achieved figures, when the run had rounds (the others are the median round's). */
  perCoreRounds?: Array<number | null>;
  achievedRounds?: number[];
}

/** The round whose per-core figure (achieved requests/s where there is none, as for direct) is the median. */
export function medianRound(rounds: readonly SaturationResult[]): SaturationResult {
  const key = (x: SaturationResult) => x.perCore ?? x.achieved;
  const sorted = [...rounds].sort((a, b) => key(a) - key(b));
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

export function summarize(r: ClosedLoopResult, options: ClosedLoopOptions, cpu: { serverMs: number | null; loadMs: number; wallMs: number }, rssMb: number | null): SaturationResult {
  const serverCpuPct = cpu.serverMs === null ? null : (cpu.serverMs / cpu.wallMs) * 100;
  return {
    connections: options.connections,
    durationMs: options.durationMs,
    requests: r.ok,
    errors: r.errors,
    achieved: r.achieved,
    p50: percentile(r.latencies, 50),
    p99: percentile(r.latencies, 99),
    serverCpuPct,
    perCore: serverCpuPct ? r.achieved / (serverCpuPct / 100) : null,
    loadCpuPct: (cpu.loadMs / cpu.wallMs) * 100,
    rssMb,
  };
}

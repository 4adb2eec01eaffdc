/**
 * The load generator: open-loop (requests leave on a fixed schedule, whatever the answers do), over an undici
 * pool with a fixed number of keep-alive connections. Latency is counted from the moment a request was due,
 * so queueing in front of a saturated server counts against it (no coordinated omission). At concurrency 1 the
 * rate is low enough that the one connection is free when a request is due.
 */
import { Pool } from 'undici';

export interface Target {
  /** Origin of the server under test, e.g. http://127.0.0.1:8080 */
  url: string;
  path: string;
  headers: Record<string, string>;
}

export interface RunOptions {
  rate: number;
  durationMs: number;
  connections: number;
  body: string;
  /**
   * Count latency from the moment the request is handed to the client rather than from its due time. Used at
   * concurrency 1, where nothing queues and the timer's own lateness (up to a millisecond) would only add noise.
   */
  fromSend?: boolean;
}

export interface RunResult {
  offered: number;
  sent: number;
  ok: number;
  errors: number;
  /** Completed answers per second over the run. */
  achieved: number;
  /** Milliseconds from due time to the end of the answer, one per successful request. */
  latencies: number[];
  firstError?: string;
}

export interface StreamResult extends RunResult {
  /** Milliseconds from due time to the first content chunk. */
  ttft: number[];
  /** When each of those started, in wall-clock ms (performance.timeOrigin + performance.now()), in the same order. */
  ttftFrom: number[];
  /** Milliseconds from the upstream's write of a chunk to its arrival here, for every chunk after the first. */
  transit: number[];
  /** The same for first chunks. */
  firstTransit: number[];
  chunks: number;
  /** Chunks whose transit reached the upstream's pace: as late as if they had waited for the next write. */
  held: number;
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function pool(target: Target, connections: number): Pool {
  return new Pool(target.url, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
}

/** Calls `fire(due)` for every request of an open-loop schedule; resolves when the last one has finished. */
async function schedule(rate: number, durationMs: number, fire: (due: number) => Promise<void>): Promise<{ sent: number; elapsed: number }> {
  const total = Math.max(1, Math.round((rate * durationMs) / 1000));
  const interval = 1000 / rate;
  const start = nowMs();
  const pending = new Set<Promise<void>>();
  let sent = 0;
  while (sent < total) {
    const now = nowMs();
    while (sent < total && start + sent * interval <= now) {
      const p = fire(start + sent * interval);
      pending.add(p);
      void p.finally(() => pending.delete(p));
      sent++;
    }
    if (sent < total) await sleep(Math.max(0, Math.min(1, start + sent * interval - nowMs())));
  }
  // Answers still on their way get a bounded grace period; whatever has not come back by then is an error.
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(2000, durationMs));
  });
  await Promise.race([Promise.allSettled([...pending]), grace]);
  clearTimeout(timer);
  return { sent, elapsed: nowMs() - start };
}

export async function runJson(target: Target, options: RunOptions, shared?: Pool): Promise<RunResult> {
  const client = shared ?? pool(target, options.connections);
  const latencies: number[] = [];
  let ok = 0;
  let firstError: string | undefined;
  const fail = (message: string) => {
    firstError ??= message;
  };
  const { sent, elapsed } = await schedule(options.rate, options.durationMs, async (due) => {
    const start = options.fromSend ? nowMs() : due;
    try {
      const { statusCode, body } = await client.request({ path: target.path, method: 'POST', headers: target.headers, body: options.body });
      if (statusCode !== 200) {
        fail(`HTTP ${statusCode}: ${(await body.text()).slice(0, 300)}`);
        return;
      }
      await body.dump({ limit: 1 << 20 });
      latencies.push(nowMs() - start);
      ok++;
    } catch (err) {
      fail((err as Error).message);
    }
  });
  if (!shared) await client.close();
  return { offered: options.rate, sent, ok, errors: sent - ok, achieved: (ok * 1000) / elapsed, latencies, ...(firstError ? { firstError } : {}) };
}

/** A chunk's stamp (bench/upstream.ts): the monotonic clock in ns, in base 36. */
const STAMP = /"content":"t([0-9a-z]+) /g;

function stampNs(base36: string): bigint {
  let ns = 0n;
  for (const digit of base36) ns = ns * 36n + BigInt(parseInt(digit, 36));
  return ns;
}

export async function runStream(target: Target, options: RunOptions & { paceMs: number }, shared?: Pool): Promise<StreamResult> {
  const client = shared ?? pool(target, options.connections);
  const latencies: number[] = [];
  const ttft: number[] = [];
  const ttftFrom: number[] = [];
  const transit: number[] = [];
  const firstTransit: number[] = [];
  let ok = 0;
  let chunks = 0;
  let held = 0;
  let firstError: string | undefined;
  const fail = (message: string) => {
    firstError ??= message;
  };
  const { sent, elapsed } = await schedule(options.rate, options.durationMs, async (due) => {
    const start = options.fromSend ? nowMs() : due;
    try {
      const { statusCode, body } = await client.request({ path: target.path, method: 'POST', headers: target.headers, body: options.body });
      if (statusCode !== 200) {
        fail(`HTTP ${statusCode}: ${(await body.text()).slice(0, 300)}`);
        return;
      }
      let seen = 0;
      let tail = '';
      let done = false;
      for await (const part of body) {
        const arrivedNs = process.hrtime.bigint();
        const arrived = Number(arrivedNs) / 1e6;
        const text = tail + (part as Buffer).toString('latin1');
        // A stamp cut across two reads is completed by the next one.
        const cut = text.lastIndexOf('\n');
        tail = text.slice(cut + 1);
        const whole = text.slice(0, cut + 1);
        STAMP.lastIndex = 0;
        for (let m = STAMP.exec(whole); m; m = STAMP.exec(whole)) {
          const ms = Number(arrivedNs - stampNs(m[1]!)) / 1e6;
          if (seen === 0) {
            ttft.push(arrived - start);
            ttftFrom.push(performance.timeOrigin + performance.now() - (nowMs() - start));
            firstTransit.push(ms);
          } else {
            transit.push(ms);
          }
          if (ms >= options.paceMs) held++;
          seen++;
          chunks++;
        }
        if (whole.includes('data: [DONE]')) done = true;
      }
      if (seen === 0 || !done) {
        fail(`stream ended after ${seen} stamped chunks${done ? '' : ' without [DONE]'}`);
        return;
      }
      latencies.push(nowMs() - start);
      ok++;
    } catch (err) {
      fail((err as Error).message);
    }
  });
  if (!shared) await client.close();
  return { offered: options.rate, sent, ok, errors: sent - ok, achieved: (ok * 1000) / elapsed, latencies, ttft, ttftFrom, transit, firstTransit, chunks, held, ...(firstError ? { firstError } : {}) };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export interface RampStep {
  rate: number;
  achieved: number;
  p50: number;
  p99: number;
  errors: number;
  /** p99 under the limit, every answer back. */
  pass: boolean;
  /** Kept up: every answer back, at least 95% of the offered rate completed, p99 under a second (no growing queue). */
  served: boolean;
}

export interface RampOptions {
  body: string;
  connections: number;
  startRate: number;
  factor: number;
  stepMs: number;
  p99LimitMs: number;
  maxRate: number;
  /** Bisection steps between the last rate that held and the first that did not. */
  refine: number;
  beforeStep?(): void;
  /** Sees every step; 'retry' runs the same rate once more (the step was disturbed from outside). */
  onStep?(step: RampStep, retried: boolean): 'retry' | void;
}

/**
 * The highest fixed rate whose p99 stays under the limit with every answer back (a geometric ramp, then bisection),
 * and past it, the highest rate the server still keeps up with at all (the same ramp, on until it falls behind).
 */
export async function ramp(target: Target, options: RampOptions): Promise<{ max: number; maxServed: number; steps: RampStep[] }> {
  const client = pool(target, options.connections);
  const steps: RampStep[] = [];
  const step = async (rate: number): Promise<boolean> => {
    for (let attempt = 0; ; attempt++) {
      options.beforeStep?.();
      const r = await runJson(target, { rate, durationMs: options.stepMs, connections: options.connections, body: options.body }, client);
      const p99 = percentile(r.latencies, 99);
      const s: RampStep = {
        rate: Math.round(rate), achieved: Math.round(r.achieved), p50: percentile(r.latencies, 50), p99, errors: r.errors,
        pass: r.errors === 0 && p99 < options.p99LimitMs,
        served: r.errors === 0 && r.achieved >= rate * 0.95 && p99 < 1000,
      };
      const verdict = options.onStep?.(s, attempt > 0);
      await sleep(300); // let queues drain between steps
      if (verdict === 'retry' && attempt === 0) continue;
      steps.push(s);
      return s.pass;
    }
  };
  let good = 0;
  let bad = 0;
  try {
    for (let rate = options.startRate; rate <= options.maxRate; rate *= options.factor) {
      if (await step(rate)) good = rate;
      else {
        bad = rate;
        break;
      }
    }
    const servedMax = () => steps.reduce((m, s) => (s.served && s.rate > m ? s.rate : m), 0);
    if (bad === 0) return { max: good, maxServed: servedMax(), steps };
    let low = good;
    let high = bad;
    for (let i = 0; i < options.refine && high - low > Math.max(10, low * 0.04); i++) {
      const mid = (low + high) / 2;
      if (await step(mid)) low = mid;
      else high = mid;
    }
    // On past the latency limit, until the server no longer keeps up.
    if (steps.find((s) => s.rate === Math.round(bad))?.served) {
      for (let rate = bad * options.factor; rate <= options.maxRate; rate *= options.factor) {
        await step(rate);
        if (!steps.at(-1)!.served) break;
      }
    }
    return { max: Math.round(low), maxServed: servedMax(), steps };
  } finally {
    await client.close();
  }
}

/**
 * The gateway's Prometheus series, in a registry of its own (never prom-client's global one: two gateways in one
 * process, as tests run them, keep separate counts). Per-request series are fed once per request from its outcome
 * record (outcome.ts), through label sets cached per (route, model, provider, status); the gauges (breakers,
 * pools, connections, requests in flight, stalled stores) are read from their owners only when scraped.
 * docs/operations.md lists every series.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import type { GatewayConfig } from '../config/types.ts';
import { OTHER, REFUSAL_LEVELS, type LabelBounds } from './labels.ts';
import type { RequestOutcome } from './outcome.ts';
import { CounterFamily, HistogramFamily, type CounterSeries, type HistogramSeries } from './series.ts';

type BreakerState = 'closed' | 'open' | 'half-open';

/** What the scrape-time gauges read (the gateway's breakers, upstream pools, connection limiter and traffic). */
export interface MetricSources {
  inFlight(): number;
  breakers(): Array<{ provider: string; state: BreakerState }>;
  pools(): Array<{ origin: string; inFlight: number; queued: number }>;
  connections(): { open: number; max: number; refused: number; evicted: number };
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const OVERHEAD_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const BREAKER_STATES: readonly BreakerState[] = ['closed', 'open', 'half-open'];

/** The series of one (route, model, provider, status): looked up once per request. */
interface LabelSet {
  requests: CounterSeries;
  duration: HistogramSeries;
  overhead: Map<string, HistogramSeries>;
  values: [string, string, string, string];
}

/** The series of one (model, provider). */
interface TargetSet {
  upstream: HistogramSeries;
  firstToken: HistogramSeries;
  tokensIn: CounterSeries;
  tokensOut: CounterSeries;
  cost: CounterSeries;
}

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly sets = new Map<string, LabelSet>();
  private readonly targets = new Map<string, TargetSet>();
  /** Per pipeline: the overhead `part` of each position (`plugin:<name>`). */
  private readonly parts: Map<string, string[]>;
  private readonly stalled = new Map<string, boolean>();

  private readonly requests: CounterFamily;
  private readonly duration: HistogramFamily;
  private readonly overhead: HistogramFamily;
  private readonly upstream: HistogramFamily;
  private readonly firstToken: HistogramFamily;
  private readonly tokens: CounterFamily;
  private readonly cost: CounterFamily;
  private readonly refusals: CounterFamily;
  private readonly cacheHits: CounterFamily;
  private readonly storeUnavailable: CounterFamily;
  private readonly storeStalls: Counter<string>;

  constructor(config: Pick<GatewayConfig, 'pipelines'>, private readonly labels: LabelBounds, sources: MetricSources) {
    this.parts = new Map(config.pipelines.map((p) => [p.name, p.plugins.map((entry) => `plugin:${entry.name}`)]));
    const registers = [this.registry];
    const byRequest = ['route', 'model', 'provider', 'status'];
    const family = <F extends CounterFamily | HistogramFamily>(made: F): F => {
      this.registry.registerMetric(made as never);
      return made;
    };
    this.requests = family(new CounterFamily('aigw_requests_total', 'Requests answered, by route pattern, model, provider and HTTP status.', byRequest));
    this.duration = family(new HistogramFamily('aigw_request_duration_seconds', 'From arrival to the last byte of the answer (a stream\'s end).', byRequest, LATENCY_BUCKETS));
    this.overhead = family(new HistogramFamily(
      'aigw_gateway_overhead_seconds',
      'Time the gateway adds on dispatch routes: part="total" is the duration minus the time waiting on providers; part="plugin:<name>" is one plugin\'s own time, downstream excluded.',
      [...byRequest, 'part'], OVERHEAD_BUCKETS,
    ));
    this.upstream = family(new HistogramFamily('aigw_upstream_duration_seconds', 'From the first call to a provider until the answer was in hand (a stream\'s last chunk), retries and fallbacks included.', ['provider', 'model'], LATENCY_BUCKETS));
    this.firstToken = family(new HistogramFamily('aigw_upstream_time_to_first_token_seconds', 'Streams: from the first call to a provider until its first chunk.', ['provider', 'model'], LATENCY_BUCKETS));
    this.tokens = family(new CounterFamily('aigw_tokens_total', 'Tokens of answers providers served (reported, or estimated where they reported none).', ['model', 'provider', 'direction']));
    this.cost = family(new CounterFamily('aigw_cost_usd_total', 'USD cost of answers providers served, from the models\' pricing.', ['model', 'provider']));
    this.refusals = family(new CounterFamily('aigw_limit_refusals_total', 'Requests refused by a limit, by error code (429 RATE_LIMIT_EXCEEDED, 402 BUDGET_EXCEEDED) and the level that refused.', ['code', 'level']));
    this.cacheHits = family(new CounterFamily('aigw_cache_hits_total', 'Answers served from the semantic cache, exact or semantic.', ['route', 'kind']));
    this.storeUnavailable = family(new CounterFamily('aigw_store_unavailable_total', 'Requests answered 503 STORE_UNAVAILABLE because a store failed.', ['route']));
    this.storeStalls = new Counter({ name: 'aigw_store_stalls_total', help: 'Times a store stopped answering within its deadline.', labelNames: ['store'], registers });
    this.scrapeGauges(sources, registers);
  }

  /** A store stopped answering within its deadline, or answers again (the gateway's onStall). */
  storeStall(store: string, stalled: boolean): void {
    this.stalled.set(store, stalled);
    if (stalled) this.storeStalls.inc({ store });
  }

  observe(outcome: RequestOutcome): void {
    const model = this.labels.model(outcome.model);
    const provider = this.labels.provider(outcome.provider);
    const set = this.labelSet(this.labels.route(outcome.route), model, provider, String(outcome.status));
    set.requests.inc();
    set.duration.observe(outcome.durationMs / 1000);
    if (outcome.overheadMs !== undefined) {
      this.part(set, 'total').observe(outcome.overheadMs / 1000);
      const names = outcome.pipeline === undefined ? undefined : this.parts.get(outcome.pipeline);
      const pluginMs = outcome.pluginMs;
      if (names && pluginMs) {
        for (let position = 0; position < pluginMs.length; position++) {
          const ms = pluginMs[position]!;
          const part = names[position];
          if (ms >= 0 && part !== undefined) this.part(set, part).observe(ms / 1000);
        }
      }
    }
    if (outcome.upstreamMs !== undefined || outcome.firstTokenMs !== undefined || outcome.tokens || outcome.costUsd !== undefined) {
      const target = this.targetSet(model, provider);
      if (outcome.upstreamMs !== undefined) target.upstream.observe(outcome.upstreamMs / 1000);
      if (outcome.firstTokenMs !== undefined) target.firstToken.observe(outcome.firstTokenMs / 1000);
      if (outcome.tokens) {
        target.tokensIn.inc(outcome.tokens.input);
        target.tokensOut.inc(outcome.tokens.output);
      }
      if (outcome.costUsd !== undefined) target.cost.inc(outcome.costUsd);
    }
    if (outcome.refusal) this.refusals.of(outcome.refusal.code, REFUSAL_LEVELS.has(outcome.refusal.level) ? outcome.refusal.level : OTHER).inc();
    if (outcome.cache) this.cacheHits.of(set.values[0], outcome.cache).inc();
    if (outcome.code === 'STORE_UNAVAILABLE') this.storeUnavailable.of(set.values[0]).inc();
  }

  metrics(): Promise<string> {
    return this.registry.metrics();
  }

  private labelSet(route: string, model: string, provider: string, status: string): LabelSet {
    const key = `${route} ${model} ${provider} ${status}`;
    let set = this.sets.get(key);
    if (!set) {
      set = {
        requests: this.requests.of(route, model, provider, status),
        duration: this.duration.of(route, model, provider, status),
        overhead: new Map(),
        values: [route, model, provider, status],
      };
      this.sets.set(key, set);
    }
    return set;
  }

  private part(set: LabelSet, part: string): HistogramSeries {
    let series = set.overhead.get(part);
    if (!series) {
      series = this.overhead.of(...set.values, part);
      set.overhead.set(part, series);
    }
    return series;
  }

  private targetSet(model: string, provider: string): TargetSet {
    const key = `${model} ${provider}`;
    let set = this.targets.get(key);
    if (!set) {
      set = {
        upstream: this.upstream.of(provider, model),
        firstToken: this.firstToken.of(provider, model),
        tokensIn: this.tokens.of(model, provider, 'input'),
        tokensOut: this.tokens.of(model, provider, 'output'),
        cost: this.cost.of(model, provider),
      };
      this.targets.set(key, set);
    }
    return set;
  }

  private scrapeGauges(sources: MetricSources, registers: Registry[]): void {
    const labels = this.labels;
    const stalled = this.stalled;
    new Gauge({ name: 'aigw_requests_in_flight', help: 'Requests being served (streams until their last byte).', registers, collect() { this.set(sources.inFlight()); } });
    new Gauge({
      name: 'aigw_circuit_breakers', help: 'Circuit breakers (one per provider and base URL) in each state.', labelNames: ['provider', 'state'], registers,
      collect() {
        this.reset();
        for (const breaker of sources.breakers()) {
          const provider = labels.provider(breaker.provider);
          for (const state of BREAKER_STATES) this.inc({ provider, state }, breaker.state === state ? 1 : 0);
        }
      },
    });
    new Gauge({
      name: 'aigw_upstream_pool_requests', help: 'Upstream requests per provider origin: holding a connection (in_flight) or waiting for one (queued).', labelNames: ['provider', 'state'], registers,
      collect() {
        this.reset();
        for (const pool of sources.pools()) {
          const provider = labels.origin(pool.origin);
          this.inc({ provider, state: 'in_flight' }, pool.inFlight);
          this.inc({ provider, state: 'queued' }, pool.queued);
        }
      },
    });
    new Gauge({ name: 'aigw_connections_open', help: 'Open client connections.', registers, collect() { this.set(sources.connections().open); } });
    new Gauge({ name: 'aigw_connections_max', help: 'server.maxConnections.', registers, collect() { this.set(sources.connections().max); } });
    new Counter({ name: 'aigw_connections_refused_total', help: 'New connections closed at once because every open one was busy.', registers, collect() { this.reset(); this.inc(sources.connections().refused); } });
    new Counter({ name: 'aigw_connections_evicted_total', help: 'Idle connections closed to admit a new one.', registers, collect() { this.reset(); this.inc(sources.connections().evicted); } });
    new Gauge({
      name: 'aigw_store_stalled', help: '1 while a store answers nothing within its deadline (its calls fail fast), else 0.', labelNames: ['store'], registers,
      collect() {
        this.reset();
        for (const store of ['database', 'kv']) this.set({ store }, stalled.get(store) ? 1 : 0);
      },
    });
  }
}

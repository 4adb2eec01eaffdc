/**
 * The gateway's Prometheus series, in a registry of its own (never prom-client's global one: two gateways in one
 * process, as tests run them, keep separate counts). Per-request series are fed once per request from its outcome
 * record (outcome.ts), through label sets cached per (route, model, provider, status); the gauges (breakers,
 * pools, connections, requests in flight, stalled stores) are read from their owners only when scraped.
 * docs/operations.md lists every series.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { GatewayConfig } from '../config/types.ts';
import { OTHER, REFUSAL_LEVELS, type LabelBounds } from './labels.ts';
import type { RequestOutcome } from './outcome.ts';

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

type HistogramChild = ReturnType<Histogram<string>['labels']>;
type CounterChild = ReturnType<Counter<string>['labels']>;

/** The children of one (route, model, provider, status): looked up once per request. */
interface LabelSet {
  requests: CounterChild;
  duration: HistogramChild;
  overhead: Map<string, HistogramChild>;
  values: [string, string, string, string];
}

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly sets = new Map<string, LabelSet>();
  /** Per pipeline: the overhead `part` of each position (`plugin:<name>`). */
  private readonly parts: Map<string, string[]>;
  private readonly stalled = new Map<string, boolean>();

  private readonly requests: Counter<string>;
  private readonly duration: Histogram<string>;
  private readonly overhead: Histogram<string>;
  private readonly upstream: Histogram<string>;
  private readonly firstToken: Histogram<string>;
  private readonly tokens: Counter<string>;
  private readonly cost: Counter<string>;
  private readonly refusals: Counter<string>;
  private readonly cacheHits: Counter<string>;
  private readonly storeUnavailable: Counter<string>;
  private readonly storeStalls: Counter<string>;

  constructor(config: Pick<GatewayConfig, 'pipelines'>, private readonly labels: LabelBounds, sources: MetricSources) {
    this.parts = new Map(config.pipelines.map((p) => [p.name, p.plugins.map((entry) => `plugin:${entry.name}`)]));
    const registers = [this.registry];
    const byRequest = ['route', 'model', 'provider', 'status'];
    this.requests = new Counter({ name: 'aigw_requests_total', help: 'Requests answered, by route pattern, model, provider and HTTP status.', labelNames: byRequest, registers });
    this.duration = new Histogram({ name: 'aigw_request_duration_seconds', help: 'From arrival to the last byte of the answer (a stream\'s end).', labelNames: byRequest, buckets: LATENCY_BUCKETS, registers });
    this.overhead = new Histogram({
      name: 'aigw_gateway_overhead_seconds',
      help: 'Time the gateway adds on dispatch routes: part="total" is the duration minus the time waiting on providers; part="plugin:<name>" is one plugin\'s own time, downstream excluded.',
      labelNames: [...byRequest, 'part'], buckets: OVERHEAD_BUCKETS, registers,
    });
    this.upstream = new Histogram({ name: 'aigw_upstream_duration_seconds', help: 'From the first call to a provider until the answer was in hand (a stream\'s last chunk), retries and fallbacks included.', labelNames: ['provider', 'model'], buckets: LATENCY_BUCKETS, registers });
    this.firstToken = new Histogram({ name: 'aigw_upstream_time_to_first_token_seconds', help: 'Streams: from the first call to a provider until its first chunk.', labelNames: ['provider', 'model'], buckets: LATENCY_BUCKETS, registers });
    this.tokens = new Counter({ name: 'aigw_tokens_total', help: 'Tokens of answers providers served (reported, or estimated where they reported none).', labelNames: ['model', 'provider', 'direction'], registers });
    this.cost = new Counter({ name: 'aigw_cost_usd_total', help: 'USD cost of answers providers served, from the models\' pricing.', labelNames: ['model', 'provider'], registers });
    this.refusals = new Counter({ name: 'aigw_limit_refusals_total', help: 'Requests refused by a limit, by error code (429 RATE_LIMIT_EXCEEDED, 402 BUDGET_EXCEEDED) and the level that refused.', labelNames: ['code', 'level'], registers });
    this.cacheHits = new Counter({ name: 'aigw_cache_hits_total', help: 'Answers served from the semantic cache, exact or semantic.', labelNames: ['route', 'kind'], registers });
    this.storeUnavailable = new Counter({ name: 'aigw_store_unavailable_total', help: 'Requests answered 503 STORE_UNAVAILABLE because a store failed.', labelNames: ['route'], registers });
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
    if (outcome.upstreamMs !== undefined) this.upstream.labels(provider, model).observe(outcome.upstreamMs / 1000);
    if (outcome.firstTokenMs !== undefined) this.firstToken.labels(provider, model).observe(outcome.firstTokenMs / 1000);
    if (outcome.tokens) {
      this.tokens.labels(model, provider, 'input').inc(outcome.tokens.input);
      this.tokens.labels(model, provider, 'output').inc(outcome.tokens.output);
    }
    if (outcome.costUsd !== undefined) this.cost.labels(model, provider).inc(outcome.costUsd);
    if (outcome.refusal) this.refusals.labels(outcome.refusal.code, REFUSAL_LEVELS.has(outcome.refusal.level) ? outcome.refusal.level : OTHER).inc();
    if (outcome.cache) this.cacheHits.labels(set.values[0], outcome.cache).inc();
    if (outcome.code === 'STORE_UNAVAILABLE') this.storeUnavailable.labels(set.values[0]).inc();
  }

  metrics(): Promise<string> {
    return this.registry.metrics();
  }

  private labelSet(route: string, model: string, provider: string, status: string): LabelSet {
    const key = `${route} ${model} ${provider} ${status}`;
    let set = this.sets.get(key);
    if (!set) {
      set = {
        requests: this.requests.labels(route, model, provider, status),
        duration: this.duration.labels(route, model, provider, status),
        overhead: new Map(),
        values: [route, model, provider, status],
      };
      this.sets.set(key, set);
    }
    return set;
  }

  private part(set: LabelSet, part: string): HistogramChild {
    let child = set.overhead.get(part);
    if (!child) {
      child = this.overhead.labels(...set.values, part);
      set.overhead.set(part, child);
    }
    return child;
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

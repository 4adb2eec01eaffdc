/**
 * Counters and histograms fed on every request, kept as plain numbers per label set and handed to prom-client's
 * registry only when it is scraped. prom-client's own children hash their label values again on every inc() and
 * observe(): the eleven updates of one request cost about 9 µs that way, a few hundred ns this way. The registry
 * reads these through the interface its own metrics implement (name, help, type, get()), so the exposition is
 * prom-client's, as for every other series.
 */

type Labels = Record<string, string>;

interface MetricValue {
  metricName?: string;
  labels: Labels;
  value: number;
}

/** What prom-client's Registry reads from a metric. */
export interface CollectedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: 'counter' | 'histogram'; aggregator: 'sum'; values: MetricValue[] }>;
}

abstract class Family<S> implements CollectedMetric {
  abstract readonly type: 'counter' | 'histogram';
  readonly aggregator = 'sum' as const;
  private readonly series = new Map<string, { labels: Labels; series: S }>();

  constructor(readonly name: string, readonly help: string, private readonly labelNames: readonly string[]) {}

  /** The series of these label values (in labelNames' order), made on first use; callers keep it. */
  of(...values: string[]): S {
    const key = values.join('\u0000');
    let entry = this.series.get(key);
    if (!entry) {
      if (values.length !== this.labelNames.length) throw new Error(`${this.name}: ${this.labelNames.length} label values expected`);
      const labels: Labels = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i]!));
      entry = { labels, series: this.create() };
      this.series.set(key, entry);
    }
    return entry.series;
  }

  async get() {
    const values: MetricValue[] = [];
    for (const { labels, series } of this.series.values()) this.collect(labels, series, values);
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  protected abstract create(): S;
  protected abstract collect(labels: Labels, series: S, into: MetricValue[]): void;
}

export class CounterSeries {
  value = 0;

  inc(by = 1): void {
    this.value += by;
  }
}

export class CounterFamily extends Family<CounterSeries> {
  readonly type = 'counter' as const;

  protected create(): CounterSeries {
    return new CounterSeries();
  }

  protected collect(labels: Labels, series: CounterSeries, into: MetricValue[]): void {
    into.push({ labels, value: series.value });
  }
}

export class HistogramSeries {
  /** Observations per bucket, not cumulative (the exposition sums them); past the last bound only in count. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    if (i < bounds.length) this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

export class HistogramFamily extends Family<HistogramSeries> {
  readonly type = 'histogram' as const;

  constructor(name: string, help: string, labelNames: readonly string[], private readonly bounds: readonly number[]) {
    super(name, help, labelNames);
    if (bounds.some((b, i) => i > 0 && b <= bounds[i - 1]!)) throw new Error(`${name}: bucket bounds must increase`);
  }

  protected create(): HistogramSeries {
    return new HistogramSeries(this.bounds);
  }

  protected collect(labels: Labels, series: HistogramSeries, into: MetricValue[]): void {
    let cumulative = 0;
    this.bounds.forEach((bound, i) => {
      cumulative += series.counts[i]!;
      into.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: String(bound) }, value: cumulative });
    });
    into.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: series.count });
    into.push({ metricName: `${this.name}_sum`, labels, value: series.sum });
    into.push({ metricName: `${this.name}_count`, labels, value: series.count });
  }
}

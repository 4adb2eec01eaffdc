/** One opossum breaker per upstream (provider + base URL). Caller errors never trip it. */
import CircuitBreaker from 'opossum';
import type { BreakerConfig } from '../config/types.ts';
import { GatewayError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { countsAgainstUpstream, isAbort } from './upstream-errors.ts';

type Call = () => Promise<unknown>;

export interface BreakerState {
  provider: string;
  baseUrl: string;
  state: 'closed' | 'open' | 'half-open';
  failures: number;
  successes: number;
}

export class Breakers {
  private readonly breakers = new Map<string, { breaker: CircuitBreaker<[Call], unknown>; provider: string; baseUrl: string }>();

  /** With a logger, every change of a breaker's state is one log line: an operator's first sign of a failing upstream. */
  constructor(private readonly config: BreakerConfig, private readonly logger?: Logger) {}

  /** Runs `call` through the breaker of this upstream; an open breaker answers UPSTREAM_UNAVAILABLE at once. */
  async run<T>(provider: string, baseUrl: string, call: () => Promise<T>): Promise<T> {
    const breaker = this.get(provider, baseUrl);
    try {
      return (await breaker.fire(call)) as T;
    } catch (err) {
      if ((err as { code?: string }).code === 'EOPENBREAKER') {
        throw new GatewayError('UPSTREAM_UNAVAILABLE', `${provider} is unavailable: its circuit breaker is open after repeated failures`, { provider, breaker: 'open' });
      }
      throw err;
    }
  }

  /**
   * A failure found after `run` had returned (a streamed answer whose body broke midway): counted as one more
   * failed call, by the same filter, so an upstream that keeps breaking its answers opens its breaker.
   */
  countFailure(provider: string, baseUrl: string, err: unknown): void {
    this.get(provider, baseUrl).fire(() => Promise.reject(err)).catch(() => undefined);
  }

  states(): BreakerState[] {
    return [...this.breakers.values()].map(({ breaker, provider, baseUrl }) => ({
      provider,
      baseUrl,
      state: breaker.opened ? 'open' : breaker.halfOpen ? 'half-open' : 'closed',
      failures: breaker.stats.failures,
      successes: breaker.stats.successes,
    }));
  }

  shutdown(): void {
    for (const { breaker } of this.breakers.values()) breaker.shutdown();
    this.breakers.clear();
  }

  private get(provider: string, baseUrl: string): CircuitBreaker<[Call], unknown> {
    const key = `${provider} ${baseUrl}`;
    let entry = this.breakers.get(key);
    if (!entry) {
      const breaker = new CircuitBreaker((call: Call) => call(), {
        timeout: false, // the upstream client owns timeouts
        errorThresholdPercentage: this.config.errorThresholdPercentage,
        volumeThreshold: this.config.volumeThreshold,
        rollingCountTimeout: this.config.rollingCountTimeoutMs,
        resetTimeout: this.config.resetTimeoutMs,
        // true = "this error does not count": caller errors and client aborts.
        errorFilter: (err: unknown) => isAbort(err) || !countsAgainstUpstream(err),
      });
      const fields = { provider, baseUrl };
      // When it last opened: the closing line says how long the upstream was cut off.
      let openedAt = 0;
      breaker.on('open', () => {
        if (openedAt === 0) openedAt = performance.now();
        this.logger?.warn(
          { ...fields, failures: breaker.stats.failures, resetTimeoutMs: this.config.resetTimeoutMs },
          'circuit breaker opened: requests to this upstream get 503 UPSTREAM_UNAVAILABLE until a probe succeeds',
        );
      });
      breaker.on('halfOpen', () => this.logger?.info(fields, 'circuit breaker half-open: one probe request is let through'));
      breaker.on('close', () => {
        const openForMs = openedAt === 0 ? undefined : Math.round(performance.now() - openedAt);
        openedAt = 0;
        this.logger?.info({ ...fields, ...(openForMs === undefined ? {} : { openForMs }) }, 'circuit breaker closed: the upstream answers again');
      });
      entry = { breaker, provider, baseUrl };
      this.breakers.set(key, entry);
    }
    return entry.breaker;
  }
}

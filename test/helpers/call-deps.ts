/** What a call to a provider target needs (upstream client, breakers, provider I/O), for tests that call the core directly. */
import { Breakers } from '../../core/dispatch/breakers.ts';
import type { CallDeps } from '../../core/dispatch/exchange.ts';
import { createProviderIO } from '../../core/dispatch/provider-io.ts';
import { UpstreamClient } from '../../core/dispatch/upstream.ts';

const BREAKER = { errorThresholdPercentage: 50, volumeThreshold: 100, rollingCountTimeoutMs: 10_000, resetTimeoutMs: 1000 };

export function testCallDeps(): CallDeps & { close(): Promise<void> } {
  const upstream = new UpstreamClient({
    connectTimeoutMs: 5000, headersTimeoutMs: 10_000, bodyTimeoutMs: 10_000, keepAliveTimeoutMs: 1000, connectionsPerOrigin: 4, queueTimeoutMs: 5000,
    maxFrameBytes: 1 << 20, maxBodyBytes: 1 << 20, breaker: BREAKER,
  });
  const breakers = new Breakers(BREAKER);
  return {
    upstream, breakers, io: createProviderIO(upstream, Date.now),
    async close() {
      breakers.shutdown();
      await upstream.close();
    },
  };
}

/**
 * Key prefixes for tests that use the shared Redis: each file takes fresh prefixes, and their keys are removed
 * when the file ends, so test runs never see each other's keys.
 */
import { randomUUID } from 'node:crypto';
import { after } from 'node:test';
import { Redis } from 'ioredis';

export function redisPrefixes(redisUrl: string | undefined): () => string {
  const prefixes: string[] = [];
  after(async () => {
    if (!redisUrl || prefixes.length === 0) return;
    const redis = new Redis(redisUrl);
    try {
      for (const prefix of prefixes) {
        const keys = await redis.keys(prefix.replace(/[*?[\]\\]/g, '\\$&') + '*');
        if (keys.length > 0) await redis.del(...keys);
      }
    } finally {
      redis.disconnect();
    }
  });
  return () => {
    const prefix = `aigw-test-${randomUUID()}:`;
    prefixes.push(prefix);
    return prefix;
  };
}

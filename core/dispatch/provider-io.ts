/** The I/O a provider's `authorize` may do: JSON requests through the upstream client, and a credential cache. */
import type { ProviderIO } from './provider.ts';
import { readBody, type UpstreamClient } from './upstream.ts';

/** A cached credential is renewed this long before it expires, so no request carries one that is about to. */
const RENEW_BEFORE_MS = 60_000;
/** A credential exchange shared by many requests is bounded by its own timeout, not by any one request. */
const EXCHANGE_TIMEOUT_MS = 30_000;

export function createProviderIO(upstream: UpstreamClient, now: () => number): ProviderIO {
  const credentials = new Map<string, { value: string; expiresAt: number }>();
  const pending = new Map<string, Promise<string>>();
  return {
    now,
    async fetchJson(url, init, signal) {
      const response = await upstream.send(url, { method: init.method, path: url, headers: init.headers ?? {}, ...(init.body === undefined ? {} : { body: init.body }) }, signal);
      // A token endpoint's answer is small: one past upstream.maxBodyBytes is refused, not held.
      const text = (await readBody(response, upstream.maxBodyBytes)).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: the caller gets the text
      }
      return { status: response.statusCode, body };
    },
    cached(key, fetch) {
      const known = credentials.get(key);
      if (known && known.expiresAt - RENEW_BEFORE_MS > now()) return Promise.resolve(known.value);
      let running = pending.get(key);
      if (!running) {
        running = fetch(AbortSignal.timeout(EXCHANGE_TIMEOUT_MS)).then((fresh) => {
          credentials.set(key, fresh);
          return fresh.value;
        }).finally(() => pending.delete(key));
        pending.set(key, running);
      }
      return running;
    },
  };
}

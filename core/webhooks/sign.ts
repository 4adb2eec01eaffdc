/**
 * The webhook signature of the spec's Events section: HMAC-SHA256 over `<timestamp>.<body>` with the
 * per-batch secret, sent as `X-Gateway-Signature: t=<unix-seconds>,v1=<hex>`.
 */
import { createHmac, randomBytes } from 'node:crypto';

/** The header value for `body` (the exact bytes sent) signed at `timestamp` (unix seconds). */
export function sign(secret: string, timestamp: number, body: string): string {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new RangeError(`the timestamp must be whole unix seconds, got ${timestamp}`);
  const digest = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},v1=${digest}`;
}

/**
 * A new per-batch secret: `whsec_` and 32 random bytes in base64url (43 characters). The whole string,
 * prefix included, is the HMAC key, so a receiver uses it exactly as the submit response returned it.
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

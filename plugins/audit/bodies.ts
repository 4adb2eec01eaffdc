/**
 * Bodies in audit records, only when configured: serialised, credential-looking strings replaced by
 * `[REDACTED]`, then cut at `maxBodyBytes` (the record says it was cut). A credential is never meant to be in a
 * body, but callers paste keys into prompts and providers echo them: the log must not become a key store.
 */
import { SECRETS } from '../guards/secrets.ts';

export type BodiesSetting = 'none' | 'request' | 'response' | 'both';

export const REDACTED = '[REDACTED]';

/**
 * Each pattern matches a whole credential; what it matches is replaced. The well-known key formats are the
 * guards plugin's list (one list to keep current); the rest are what an audit body adds: the gateway's own keys,
 * Authorization values, publishable and restricted keys, and `key: value` pairs named like a secret.
 */
const CREDENTIALS: readonly RegExp[] = [
  SECRETS,
  /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}/g, // shorter and publishable variants the guards' formats do not block
  /\baigw_sk_[A-Za-z0-9_-]{8,}/g, // the gateway's own API keys
  /\b(?:api[_-]?key|secret|password|passwd|token)(["']?\s*[:=]\s*["']?)[^\s"',}]{6,}/gi,
];

export function redactCredentials(text: string): string {
  let out = text;
  for (const pattern of CREDENTIALS) {
    out = out.replace(pattern, (match, separator: unknown) => (typeof separator === 'string' ? match.slice(0, match.indexOf(separator) + separator.length) + REDACTED : REDACTED));
  }
  return out;
}

/** A body for the record: JSON text (a string stays itself), redacted, cut at maxBytes of UTF-8. */
export function auditBody(value: unknown, maxBytes: number): { text: string; truncated: boolean } {
  const raw = typeof value === 'string' ? value : JSON.stringify(value) ?? 'null';
  // Redacted before the cut, so that a credential split by the cut is still found whole.
  // eslint-disable-next-line no-control-regex
  const text = redactCredentials(raw).replace(/\u0000/g, '');
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text, truncated: false };
  // Cut on a character boundary: drop a trailing partial UTF-8 sequence.
  let end = maxBytes;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return { text: bytes.subarray(0, end).toString('utf8'), truncated: true };
}

export const wantsRequest = (bodies: BodiesSetting) => bodies === 'request' || bodies === 'both';
export const wantsResponse = (bodies: BodiesSetting) => bodies === 'response' || bodies === 'both';

/**
 * Gemini's function calls have no ids, so the gateway makes them. Gemini 3 models also attach a
 * thoughtSignature to a function call and refuse the next turn if it does not come back with that call; the
 * canonical format has no place for it, so it travels inside the id (base64url: ids stay [A-Za-z0-9_-], which
 * every provider accepts) and is restored when the caller sends the assistant turn back.
 */
import { createHash, randomBytes } from 'node:crypto';

const MARK = '_ts_';
const WITH_SIGNATURE = /^call_[A-Za-z0-9]+_ts_([A-Za-z0-9_-]+)$/;

/**
 * `call_<index>x<12 hex>`: derived from the response id when there is one (a stream and its replay get the
 * same ids), random otherwise.
 */
export function toolCallId(index: number, signature?: string, responseKey?: string): string {
  const suffix = responseKey ? createHash('sha256').update(`${responseKey}:${index}`).digest('hex').slice(0, 12) : randomBytes(6).toString('hex');
  const base = `call_${index}x${suffix}`;
  if (!signature) return base;
  return `${base}${MARK}${Buffer.from(signature, 'base64').toString('base64url')}`;
}

/** The thoughtSignature a gateway-made id carries, as the standard base64 Gemini sent. */
export function signatureOf(id: string | undefined): string | undefined {
  const match = id ? WITH_SIGNATURE.exec(id) : null;
  return match ? Buffer.from(match[1]!, 'base64url').toString('base64') : undefined;
}

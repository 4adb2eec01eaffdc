/**
 * Bedrock errors: an HTTP answer is {message} with its type in the x-amzn-errortype header; inside a stream
 * an exception frame names its type (decoded as the event `exception:<type>`) over the same {message}. S3 (files,
 * batch results) answers `<Error><Code/><Message/></Error>` in XML.
 */
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { upstreamStatusError } from '../../core/dispatch/upstream-errors.ts';
import { GatewayError } from '../../core/errors.ts';
import { s3ErrorOf } from './xml.ts';

/** The HTTP status AWS documents for each exception a ConverseStream may carry. */
const EXCEPTION_STATUS: Record<string, number> = {
  validationException: 400,
  accessDeniedException: 403,
  resourceNotFoundException: 404,
  modelTimeoutException: 408,
  throttlingException: 429,
  modelNotReadyException: 429,
  modelStreamErrorException: 424,
  modelErrorException: 424,
  internalServerException: 500,
  serviceUnavailableException: 503,
};

/**
 * 424 (ModelErrorException, modelStreamErrorException) means the model behind Bedrock failed: an upstream
 * failure to retry elsewhere, not a request the caller must change, so it maps as a 5xx would.
 */
const mappedStatus = (status: number) => (status === 424 ? 502 : status);

function messageOf(body: unknown, status: number): string {
  const b = body as { message?: unknown; Message?: unknown } | null;
  if (typeof b?.message === 'string') return b.message;
  if (typeof b?.Message === 'string') return b.Message;
  if (typeof body === 'string' && body !== '') return body.slice(0, 500);
  return `HTTP ${status}`;
}

/** `ValidationException:http://internal.amazon.com/coral/...` -> ValidationException */
function typeOf(headers: Record<string, string | string[] | undefined> | undefined, body: unknown): string | undefined {
  const header = headers?.['x-amzn-errortype'];
  const raw = (Array.isArray(header) ? header[0] : header) ?? (body as { __type?: unknown } | null)?.__type;
  if (typeof raw !== 'string' || raw === '') return undefined;
  return raw.split(':')[0]!.split('#').at(-1);
}

export function bedrockHttpError(target: ProviderTarget, status: number, body: unknown, headers?: Record<string, string | string[] | undefined>): GatewayError {
  const s3 = typeof body === 'string' ? s3ErrorOf(body) : null;
  const message = s3 ? s3.message || `HTTP ${status}` : messageOf(body, status);
  const type = s3 ? s3.code : typeOf(headers, body);
  const upstreamError = { ...(type ? { type } : {}), message, ...(status === 424 ? { status } : {}) };
  return upstreamStatusError(target.slug, mappedStatus(status), type ? `${type}: ${message}` : message, upstreamError);
}

/** An exception frame in a ConverseStream -> the caller's error (the stream has started: it is not retried). */
export function bedrockStreamException(target: ProviderTarget, type: string, data: string): GatewayError {
  let body: unknown = data;
  try {
    body = JSON.parse(data);
  } catch {
    // a payload that is not JSON is the message itself
  }
  const status = EXCEPTION_STATUS[type] ?? 500;
  const message = messageOf(body, status);
  const upstreamError = { ...(typeof body === 'object' && body ? body : {}), type, message };
  return upstreamStatusError(target.slug, mappedStatus(status), `${type}: ${message}`, upstreamError);
}

export function malformed(target: ProviderTarget, what: string): GatewayError {
  return new GatewayError('UPSTREAM_ERROR', `${target.slug} returned a malformed ${what}`, { provider: target.slug });
}

/**
 * The error catalogue: every code the gateway answers with, its HTTP status, and the envelopes it is
 * rendered in. Nothing else in the code base picks a status for a gateway error.
 */
export const ERROR_CATALOGUE = {
  VALIDATION_ERROR: 400,
  CAPABILITY_NOT_SUPPORTED: 400,
  GUARD_BLOCKED: 400,
  FILE_PROVIDER_MISMATCH: 400,
  UPSTREAM_BAD_REQUEST: 400,
  AUTH_REQUIRED: 401,
  AUTH_INVALID_TOKEN: 401,
  AUTH_TOKEN_EXPIRED: 401,
  AUTH_INVALID_API_KEY: 401,
  AUTH_API_KEY_EXPIRED: 401,
  AUTH_API_KEY_REVOKED: 401,
  BUDGET_EXCEEDED: 402,
  AUTH_FORBIDDEN: 403,
  MODEL_NOT_ALLOWED: 403,
  NOT_FOUND: 404,
  MODEL_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMIT_EXCEEDED: 429,
  UPSTREAM_RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  UPSTREAM_ERROR: 502,
  UPSTREAM_UNAVAILABLE: 503,
  SHUTTING_DOWN: 503,
  STORE_UNAVAILABLE: 503,
  UPSTREAM_TIMEOUT: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: unknown;
  /** Extra response headers that belong to this error (Retry-After, ...). */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, details?: unknown, headers: Record<string, string> = {}) {
    // Messages and details quote caller input (a model id, a path, a claim): bounded here, once for every error.
    super(clipMessage(message));
    this.name = 'GatewayError';
    this.code = code;
    this.status = ERROR_CATALOGUE[code];
    this.details = clipDetails(details ?? null, 0);
    this.headers = headers;
  }
}

/** How much of one piece of caller input an error echoes, in characters; longer ones end with an ellipsis. */
export const ECHO_LIMIT = 200;
/** A whole error message, in characters. */
export const MESSAGE_LIMIT = 1000;
/** Entries of one array in details (validation issues, ...). */
export const DETAILS_ITEMS_LIMIT = 100;

/** The first `limit` characters and an ellipsis, never splitting a surrogate pair. */
export function clipText(text: string, limit = ECHO_LIMIT): string {
  if (text.length <= limit) return text;
  const code = text.charCodeAt(limit - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit;
  return `${text.slice(0, end)}…`;
}

const LONG_RUN = new RegExp(`\\S{${ECHO_LIMIT + 1},}`, 'g');

/** Gateway prose has no word this long: such a run is echoed input, and is cut; then the whole is capped. */
function clipMessage(message: string): string {
  const cut = message.length > ECHO_LIMIT ? message.replace(LONG_RUN, (run) => clipText(run)) : message;
  return clipText(cut, MESSAGE_LIMIT);
}

/** Strings clipped, arrays capped, nesting bounded; the same value back when nothing needed clipping. */
function clipDetails(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return clipText(value);
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= 8) return '…';
  if (Array.isArray(value)) {
    const items = value.slice(0, DETAILS_ITEMS_LIMIT).map((item) => clipDetails(item, depth + 1));
    return items.length === value.length && items.every((item, i) => item === value[i]) ? value : items;
  }
  const entries = Object.entries(value);
  const clipped = entries.map(([key, item]) => [clipText(key), clipDetails(item, depth + 1)] as const);
  return clipped.every(([key, item], i) => key === entries[i]![0] && item === entries[i]![1]) ? value : Object.fromEntries(clipped);
}

/** Fastify-style shorthand: `throw createError('NOT_FOUND', 'no such file')`. */
export function createError(code: ErrorCode, message: string, details?: unknown): GatewayError {
  return new GatewayError(code, message, details);
}

export interface ValidationIssue {
  path: string;
  message: string;
}

export function validationError(issues: ValidationIssue[], message?: string): GatewayError {
  const summary = message ?? issues.map((i) => `${i.path || '/'}: ${i.message}`).join('; ');
  return new GatewayError('VALIDATION_ERROR', summary, issues);
}

/** Anything thrown that is not a GatewayError becomes INTERNAL_ERROR; its message is not leaked. */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError('INTERNAL_ERROR', 'Internal error');
}

/** The three wire envelopes of the spec. */
export type ErrorEnvelope = 'canonical' | 'messages' | 'legacy';

export function renderError(err: GatewayError, envelope: ErrorEnvelope): unknown {
  // The canonical envelope on every endpoint for the spec's cases: validation, auth, and the gateway's own rate
  // limit. An upstream 429 is a runtime error, in the endpoint's envelope.
  if (envelope === 'canonical' || err.code === 'VALIDATION_ERROR' || err.status === 401 || err.status === 403 || err.code === 'RATE_LIMIT_EXCEEDED') {
    return { error: { code: err.code, message: err.message, details: err.details } };
  }
  if (envelope === 'messages') {
    return { type: 'error', error: { type: messagesErrorType(err.status), message: err.message } };
  }
  return { error: { message: err.message, type: legacyErrorType(err.status) } };
}

/** The Messages envelope's error.type for a status; also the type of a Messages stream's `error` event. */
export function messagesErrorType(status: number): string {
  if (status === 400) return 'invalid_request_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 503) return 'overloaded_error';
  if (status >= 500) return 'server_error';
  return 'api_error';
}

function legacyErrorType(status: number): string {
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

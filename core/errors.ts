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

/** The core's codes; plugins add theirs with registerErrorCode (PluginDefinition.errors). */
export type CoreErrorCode = keyof typeof ERROR_CATALOGUE;
/** A core code, or one a plugin registered. */
export type ErrorCode = CoreErrorCode | (string & {});

export const ERROR_CODE_PATTERN = /^[A-Z][A-Z0-9_]{2,63}$/;

/**
 * Registered codes live on globalThis: a plugin package may load its own copy of this module (the gateway's
 * compiled build beside a source checkout), and both copies must see one catalogue.
 */
interface RegisteredCode {
  status: number;
  origin: string;
  /** Rendered in the canonical envelope on every endpoint, as the core's auth and validation errors are. */
  alwaysCanonical: boolean;
}

const registry = ((globalThis as Record<symbol, unknown>)[Symbol.for('aigw.errorCodes')] ??= new Map<string, RegisteredCode>()) as Map<string, RegisteredCode>;

/** What is wrong with a code a plugin declares (its name or its status), or null: checked at definition and registration alike. */
export function errorCodeProblem(code: string, status: unknown): string | null {
  if (!ERROR_CODE_PATTERN.test(code)) return `error code ${JSON.stringify(code)} must match ${ERROR_CODE_PATTERN}`;
  if (!Number.isInteger(status) || (status as number) < 400 || (status as number) > 599) return `error code ${code} needs an HTTP status from 400 to 599, got ${String(status)}`;
  return null;
}

/**
 * Adds a code to the catalogue. Registering a code again with the same status is harmless (many gateways in one
 * process); another status, or a core code, is refused.
 */
export function registerErrorCode(code: string, status: number, origin: string, envelope: 'endpoint' | 'canonical' = 'endpoint'): void {
  const problem = errorCodeProblem(code, status);
  if (problem) throw new Error(`${origin}: ${problem}`);
  if (code in ERROR_CATALOGUE) throw new Error(`${origin}: error code ${code} is one of the core's`);
  const known = registry.get(code);
  const alwaysCanonical = envelope === 'canonical';
  if (known && (known.status !== status || known.alwaysCanonical !== alwaysCanonical)) {
    throw new Error(`${origin}: error code ${code} is already registered by ${known.origin} with status ${known.status} in the ${known.alwaysCanonical ? 'canonical' : "endpoint's"} envelope`);
  }
  if (!known) registry.set(code, { status, origin, alwaysCanonical });
}

/** Every code the gateway may answer with, and its status: the core's, then the registered ones. */
export function errorCatalogue(): Record<string, number> {
  return { ...ERROR_CATALOGUE, ...Object.fromEntries([...registry].map(([code, { status }]) => [code, status])) };
}

export function errorStatus(code: string): number | undefined {
  return (ERROR_CATALOGUE as Record<string, number>)[code] ?? registry.get(code)?.status;
}

/** Marks gateway errors across copies of this module, so that `instanceof` holds for a plugin's errors too. */
const BRAND = Symbol.for('aigw.GatewayError');

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: unknown;
  /** Extra response headers that belong to this error (Retry-After, ...). */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, details?: unknown, headers: Record<string, string> = {}) {
    const status = errorStatus(code);
    // A code nobody registered is a bug of its thrower: it surfaces as INTERNAL_ERROR, with this message logged.
    if (status === undefined) throw new Error(`unknown error code ${JSON.stringify(code)}: a plugin registers its codes in its definition's errors`);
    // Messages and details quote caller input (a model id, a path, a claim): bounded here, once for every error.
    super(clipMessage(message));
    this.name = 'GatewayError';
    this.code = code;
    this.status = status;
    this.details = clipDetails(details ?? null, 0);
    this.headers = headers;
    Object.defineProperty(this, BRAND, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
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
  if (envelope === 'canonical' || err.code === 'VALIDATION_ERROR' || err.status === 401 || err.status === 403 || err.code === 'RATE_LIMIT_EXCEEDED'
    || registry.get(err.code)?.alwaysCanonical) {
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

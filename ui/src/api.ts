/**
 * Calls to /admin/v1 with the signed-in token. The token lives in sessionStorage only: it goes with the tab,
 * never into the URL or localStorage.
 */
const TOKEN_KEY = 'aigw.adminToken';

export const getToken = (): string | null => sessionStorage.getItem(TOKEN_KEY);
export const setToken = (token: string): void => sessionStorage.setItem(TOKEN_KEY, token);
export const clearToken = (): void => sessionStorage.removeItem(TOKEN_KEY);

/** An error envelope from the gateway ({error: {code, message, details}}), or a network failure. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly details: unknown = null) {
    super(message);
  }
}

export async function api<T = any>(method: string, path: string, body?: unknown, token = getToken()): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`/admin/v1${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  } catch (err) {
    throw new ApiError(0, 'NETWORK_ERROR', `The gateway did not answer: ${(err as Error).message}`);
  }
  const text = await response.text();
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON: shown as text below.
  }
  if (!response.ok) {
    const error = parsed?.error;
    throw new ApiError(response.status, error?.code ?? `HTTP_${response.status}`, error?.message ?? (text || response.statusText), error?.details ?? null);
  }
  return parsed as T;
}

/** Every page of a cursor-paginated list, up to `max` items. */
export async function listAll<T = any>(path: string, max = 1000): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const page: { data: T[]; has_more?: boolean; next_cursor?: string | null } = await api('GET', `${path}${separator}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    items.push(...page.data);
    cursor = page.has_more ? (page.next_cursor ?? null) : null;
  } while (cursor && items.length < max);
  return items;
}

/** A message for the page: the API's own message (validation errors list their issues in it) and code. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return `${err.message} [${err.code}]`;
  return err instanceof Error ? err.message : String(err);
}

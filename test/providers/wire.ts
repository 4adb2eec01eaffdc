/** Sends a translator's UpstreamRequest to a loopback fake as the gateway would, for translator-level tests. */
import type { UpstreamRequest } from '../../core/dispatch/provider.ts';

export async function sendUpstream(baseUrl: string, request: UpstreamRequest): Promise<{ status: number; body: unknown }> {
  const url = /^https?:\/\//.test(request.path) ? request.path : `${baseUrl}${request.path}`;
  const response = await fetch(url, { method: request.method, headers: request.headers, ...(request.body !== undefined ? { body: request.body } : {}) });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the text as it is
  }
  return { status: response.status, body };
}

/**
 * The loopback server under every conformance fake (the chat kit's, the embeddings and rerank kit's, the
 * embeddings provider tests'): it reads each request whole, records it as a RecordedUpstreamRequest and lets the
 * fake answer it. Extra routes (a token exchange) are served first and not recorded, so that `requests` holds
 * only the calls the test is about. An answer that throws destroys the connection rather than leaving it hanging.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RecordedUpstreamRequest } from './kit.ts';

export type Route = (req: RecordedUpstreamRequest, res: ServerResponse) => boolean | Promise<boolean>;

export interface RecordingServer {
  url: string;
  requests: RecordedUpstreamRequest[];
  close(): Promise<void>;
}

export async function startRecordingServer(
  extraRoutes: Route | undefined,
  answer: (req: RecordedUpstreamRequest, res: ServerResponse) => void | Promise<void>,
): Promise<RecordingServer> {
  const requests: RecordedUpstreamRequest[] = [];
  const server = createServer((raw, res) => {
    const parts: Buffer[] = [];
    raw.on('data', (p: Buffer) => parts.push(p));
    raw.on('end', () => void (async () => {
      const rawBody = Buffer.concat(parts).toString('utf8');
      let json: unknown = null;
      try {
        json = rawBody ? JSON.parse(rawBody) : null;
      } catch {
        json = null;
      }
      const req: RecordedUpstreamRequest = { method: raw.method ?? '', url: raw.url ?? '', headers: raw.headers, rawBody, json };
      if (await extraRoutes?.(req, res)) return;
      requests.push(req);
      await answer(req, res);
    })().catch(() => res.destroy()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

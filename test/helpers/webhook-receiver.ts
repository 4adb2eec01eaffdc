/**
 * A loopback webhook receiver that answers from a script and records what it got, and the receiver-side
 * signature check as docs/files-and-batches.md shows it (loaded from the page, so the doc cannot drift).
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { REPO } from './imports.ts';

export interface Received { headers: IncomingHttpHeaders; body: string; at: number }

/** How the receiver answers its n-th request (0-based): a status, or a function that takes over the response. */
export type Answer = number | ((res: ServerResponse) => void);

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  close(): Promise<void>;
}

export async function startReceiver(answers: (n: number) => Answer): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = received.length;
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const answer = answers(n);
      if (typeof answer === 'number') res.writeHead(answer, { 'content-type': 'text/plain' }).end(`answer ${n}`);
      else answer(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

export type VerifyWebhook = (secret: string, signatureHeader: string, rawBody: string, nowMs?: number) => boolean;

/** The `js` block of the doc's "Verifying a signature" section, imported as a module. */
export async function docVerifier(): Promise<VerifyWebhook> {
  const doc = readFileSync(join(REPO, 'docs/files-and-batches.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### Verifying a signature'));
  const block = /```js\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('docs/files-and-batches.md: no js block under "Verifying a signature"');
  const module = await import(`data:text/javascript,${encodeURIComponent(block[1]!)}`) as { verifyWebhook: VerifyWebhook };
  return module.verifyWebhook;
}

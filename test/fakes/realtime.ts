/**
 * A loopback OpenAI Realtime API: a WebSocket at /v1/realtime?model=<model> speaking OpenAI's realtime events.
 * It sends `session.created` on connection, answers `session.update` with `session.updated`, and a
 * `response.create` with a response of text and 0.1 s of pcm16 audio ending in `response.done` with usage. Every
 * frame it sends and receives is kept, as text, per connection.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export const RESPONSE_USAGE = { total_tokens: 46, input_tokens: 12, output_tokens: 34 };
/** 0.1 s of pcm16 at 24 kHz mono. */
export const RESPONSE_AUDIO_BYTES = 4800;

export interface FakeRealtimeConnection {
  url: string;
  headers: IncomingHttpHeaders;
  received: string[];
  sent: string[];
  socket: WebSocket;
  closed?: { code: number; reason: string };
}

export interface FakeRealtime {
  origin: string;
  connections: FakeRealtimeConnection[];
  /** When set, a connection is refused with this HTTP status. */
  refuseWith?: number;
  close(): Promise<void>;
}

export async function startFakeRealtime(): Promise<FakeRealtime> {
  const server: Server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true });
  const fake: FakeRealtime = {
    origin: '',
    connections: [],
    async close() {
      for (const c of fake.connections) c.socket.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on('upgrade', (req, socket, head) => {
    if (fake.refuseWith) {
      socket.end(`HTTP/1.1 ${fake.refuseWith} Refused\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const connection: FakeRealtimeConnection = { url: req.url ?? '', headers: req.headers, received: [], sent: [], socket: ws };
      fake.connections.push(connection);
      const send = (event: object) => {
        const text = JSON.stringify(event);
        connection.sent.push(text);
        ws.send(text);
      };
      ws.on('close', (code, reason) => (connection.closed = { code, reason: reason.toString() }));
      ws.on('message', (data) => {
        const text = data.toString();
        connection.received.push(text);
        const event = JSON.parse(text) as { type: string; session?: object };
        if (event.type === 'session.update') send({ type: 'session.updated', event_id: `ev_${connection.sent.length}`, session: { id: 'sess_fake', object: 'realtime.session', ...event.session } });
        // Not OpenAI's: a test's way to make the provider send more than a slow client reads.
        if (event.type === 'test.flood') {
          const { count, bytes } = event as unknown as { count: number; bytes: number };
          for (let i = 0; i < count; i++) ws.send(JSON.stringify({ type: 'response.audio.delta', event_id: `ev_f${i}`, delta: 'A'.repeat(bytes) }));
        }
        if (event.type === 'response.create') {
          send({ type: 'response.created', event_id: 'ev_r1', response: { id: 'resp_fake', status: 'in_progress' } });
          send({ type: 'response.text.delta', event_id: 'ev_r2', response_id: 'resp_fake', delta: 'Hello' });
          send({ type: 'response.audio.delta', event_id: 'ev_r3', response_id: 'resp_fake', delta: Buffer.alloc(RESPONSE_AUDIO_BYTES, 7).toString('base64') });
          send({ type: 'response.done', event_id: 'ev_r4', response: { id: 'resp_fake', status: 'completed', usage: RESPONSE_USAGE } });
        }
      });
      send({ type: 'session.created', event_id: 'ev_0', session: { id: 'sess_fake', object: 'realtime.session', model: new URL(req.url!, 'http://x').searchParams.get('model') } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

/** Providers on the fake, the auth plugin on the realtime routes, the tally plugin; `extra` is appended. */
export function realtimeConfig(origin: string, extra = ''): string {
  return `
plugins: [./tally.mjs]
providers:
  openai:
    baseUrl: ${origin}/v1
    apiKey: sk-upstream-secret
models:
  - id: gpt-4o-realtime
    provider: openai
    upstreamModel: gpt-4o-realtime-preview-2024-12-17
    pricing: { input: 5, output: 20, audioSecond: 0.001 }
pipelines:
  - name: realtime
    routes: [/v1/realtime/sessions, /v1/budget]
    plugins: [auth, budget]
jobs:
  pollIntervalMs: 10
${extra}`;
}

/**
 * The video half of the conformance kit, its wire side: how a loopback fake speaks one provider's video task API.
 * The kit keeps the tasks (their status, progress and reason to fail) and moves them; a wire only reads the
 * provider's requests (which one starts a task, polls one, downloads one's video) and writes its answers. A
 * provider whose video is a public URL points it at /kit-files/<task>.mp4 on the fake's origin, which the kit
 * serves and where it checks that no provider credential is ever sent.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface VideoWireRequest {
  method: string;
  /** The request target as sent (path and query, encoded as the client encoded them): what a signature covers. */
  url: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  /** The body parsed as JSON, or null. */
  json: any;
  /** The body's bytes, as a signature covers them. */
  body: Buffer;
}

/** A fake's answer: status 200 unless given; a JSON body is a string, the video's bytes a list of chunks. */
export interface VideoWireAnswer {
  status?: number;
  headers?: Record<string, string>;
  body: string | Buffer[];
}

export interface KitTask {
  id: string;
  model: string;
  prompt: string;
  /** As the provider took them (null: its default). */
  seconds: number | null;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  progress: number;
  /** Failed: the provider's reason. */
  reason?: string;
}

export interface VideoWire {
  /**
   * A request outside the task API that the provider's client makes first (Vertex's OAuth token exchange): its
   * answer, or null. Such requests carry no provider credential: they are neither recorded nor answered with errors.
   */
  route?(req: VideoWireRequest): VideoWireAnswer | null;
  /** The request starts a task: what it asks; null for any other request. */
  create(req: VideoWireRequest): { model: string; prompt: string; seconds: number | null } | null;
  /** The answer to the create request. */
  created(task: KitTask, files: string): VideoWireAnswer;
  /** The task a status request reads (its id as the wire gave it), or null. */
  polled(req: VideoWireRequest): string | null;
  /** The answer to a status request; `files` is the origin of /kit-files/. */
  status(task: KitTask, files: string): VideoWireAnswer;
  /** The task whose video a request downloads through the provider's API (a credential needed), or null. */
  downloaded(req: VideoWireRequest): string | null;
  errorBody(status: number, message: string): VideoWireAnswer;
  assertAuth(req: VideoWireRequest, credential: string): void;
}

export interface VideoFake {
  origin: string;
  requests: VideoWireRequest[];
  fileRequests: VideoWireRequest[];
  tasks: Map<string, KitTask>;
  /** Answers every API request with this error status while set. */
  error: number | null;
  close(): Promise<void>;
}

async function send(res: ServerResponse, answer: VideoWireAnswer): Promise<void> {
  const json = typeof answer.body === 'string';
  res.writeHead(answer.status ?? 200, { ...(json ? { 'content-type': 'application/json' } : {}), ...(answer.headers ?? {}) });
  if (!Array.isArray(answer.body)) return void res.end(answer.body);
  for (const chunk of answer.body) {
    res.write(chunk);
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

export async function startVideoFake(wire: VideoWire, video: Buffer[]): Promise<VideoFake> {
  let next = 0;
  let origin = '';
  const fake = { requests: [] as VideoWireRequest[], fileRequests: [] as VideoWireRequest[], tasks: new Map<string, KitTask>(), error: null as number | null };
  const server = createServer((raw, res) => {
    const parts: Buffer[] = [];
    raw.on('data', (p: Buffer) => parts.push(p));
    raw.on('end', () => void (async () => {
      const body = Buffer.concat(parts);
      const text = body.toString('utf8');
      const url = new URL(raw.url ?? '/', 'http://fake');
      let json: unknown = null;
      try { json = text.length > 0 ? JSON.parse(text) : null; } catch { json = null; }
      const req: VideoWireRequest = { method: raw.method ?? '', url: raw.url ?? '/', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: raw.headers, json, body };
      const file = /^\/kit-files\/(.+)\.mp4$/.exec(url.pathname);
      if (file) {
        fake.fileRequests.push(req);
        const task = fake.tasks.get(decodeURIComponent(file[1]!));
        if (task?.status !== 'completed') return send(res, { status: 404, body: JSON.stringify({ error: 'no such video' }) });
        return send(res, { headers: { 'content-type': 'video/mp4' }, body: video });
      }
      const routed = wire.route?.(req);
      if (routed) return send(res, routed);
      fake.requests.push(req);
      if (fake.error !== null) return send(res, { ...wire.errorBody(fake.error, `scripted ${fake.error}`), status: fake.error });
      const asked = wire.create(req);
      if (asked) {
        const task: KitTask = { id: `task_${(++next).toString(16).padStart(6, '0')}`, ...asked, status: 'queued', progress: 0 };
        fake.tasks.set(task.id, task);
        return send(res, wire.created(task, origin));
      }
      const downloaded = wire.downloaded(req);
      if (downloaded !== null) {
        const task = fake.tasks.get(downloaded);
        if (task?.status !== 'completed') return send(res, { ...wire.errorBody(404, 'no such video'), status: 404 });
        return send(res, { headers: { 'content-type': 'video/mp4' }, body: video });
      }
      const polled = wire.polled(req);
      const task = polled === null ? undefined : fake.tasks.get(polled);
      if (!task) return send(res, { ...wire.errorBody(404, `fake: no route ${req.method} ${req.path}`), status: 404 });
      return send(res, wire.status(task, origin));
    })().catch(() => res.destroy()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(fake, {
    origin,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  });
}

/**
 * A loopback upstream speaking the video task APIs of four OpenAI-compatible hosts, each under a path prefix of
 * its own (point the provider's baseUrl at `hostBase(host)`):
 * - together-ai: POST /together/v2/videos, GET /together/v2/videos/{id} (queued -> in_progress -> completed);
 * - xai: POST /xai/v1/videos/generations {request_id}, GET /xai/v1/videos/{id} (a bodiless 202, then pending with
 *   progress, then done);
 * - zhipu: POST /zhipu/api/paas/v4/videos/generations, GET /zhipu/api/paas/v4/async-result/{id} (PROCESSING twice,
 *   then SUCCESS);
 * - volcengine: POST /ark/api/v3/contents/generations/tasks, GET .../tasks/{id} (queued -> running -> succeeded).
 * Every status request answers the task's current step and then moves it one step on. A prompt containing
 * "explode" ends in the host's failure shape; one containing "forbidden" is refused at creation with the host's
 * 400 error body. Each host takes only its own key (`Bearer <host>-key`). Every request is recorded, and every
 * status answered.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type VideoHost = 'together-ai' | 'xai' | 'zhipu' | 'volcengine';

export interface VideoHostCall {
  host: VideoHost;
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown> | null;
}

interface Task { host: VideoHost; id: string; failing: boolean; at: number; body: Record<string, unknown> }

export interface FakeCompatibleVideo {
  origin: string;
  calls: VideoHostCall[];
  /** The statuses answered to one task's polls, in order ('202' for xAI's bodiless answer). */
  answered: Map<string, string[]>;
  /** The base URL a provider of this host is configured with. */
  hostBase(host: VideoHost): string;
  polls(taskId: string): VideoHostCall[];
  close(): Promise<void>;
}

const PREFIX: Record<VideoHost, string> = { 'together-ai': '/together/v1', xai: '/xai/v1', zhipu: '/zhipu/api/paas/v4', volcengine: '/ark/api/v3' };
const CREATE: Record<VideoHost, RegExp> = {
  'together-ai': /^\/together\/v2\/videos$/, xai: /^\/xai\/v1\/videos\/generations$/,
  zhipu: /^\/zhipu\/api\/paas\/v4\/videos\/generations$/, volcengine: /^\/ark\/api\/v3\/contents\/generations\/tasks$/,
};
const READ: Record<VideoHost, RegExp> = {
  'together-ai': /^\/together\/v2\/videos\/([^/]+)$/, xai: /^\/xai\/v1\/videos\/([^/]+)$/,
  zhipu: /^\/zhipu\/api\/paas\/v4\/async-result\/([^/]+)$/, volcengine: /^\/ark\/api\/v3\/contents\/generations\/tasks\/([^/]+)$/,
};
const HOSTS = Object.keys(PREFIX) as VideoHost[];

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | null> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const text = Buffer.concat(parts).toString('utf8');
  return text === '' ? null : JSON.parse(text) as Record<string, unknown>;
}

const promptOf = (host: VideoHost, body: Record<string, unknown>): string => {
  if (host !== 'volcengine') return String(body.prompt ?? '');
  const content = Array.isArray(body.content) ? body.content as Array<{ type?: string; text?: string }> : [];
  return content.find((part) => part.type === 'text')?.text ?? '';
};

/** The host's answer to the creation: its task id as the host names it. */
function created(task: Task): unknown {
  switch (task.host) {
    case 'together-ai': return { id: task.id, object: 'video', model: task.body.model, status: 'queued' };
    case 'xai': return { request_id: task.id };
    case 'zhipu': return { model: task.body.model, id: task.id, request_id: `req-${task.id}`, task_status: 'PROCESSING' };
    case 'volcengine': return { id: task.id };
  }
}

/** The host's answer to a poll at the task's step (0, 1, then 2 and after: the end); null for a bodiless 202. */
function step(task: Task, origin: string): { status: number; body: unknown; label: string } {
  const url = `${origin}/files/${task.id}.mp4`;
  const end = task.at >= 2;
  switch (task.host) {
    case 'together-ai': {
      if (!end) return { status: 200, body: { id: task.id, status: task.at === 0 ? 'queued' : 'in_progress' }, label: task.at === 0 ? 'queued' : 'in_progress' };
      if (task.failing) return { status: 200, body: { id: task.id, status: 'failed', error: { code: 'content_policy', message: 'the prompt was rejected' } }, label: 'failed' };
      return { status: 200, body: { id: task.id, status: 'completed', seconds: String(task.body.seconds ?? '5'), outputs: { cost: 0.28, video_url: url } }, label: 'completed' };
    }
    case 'xai': {
      if (task.at === 0) return { status: 202, body: null, label: '202' };
      if (!end) return { status: 200, body: { status: 'pending', progress: 50, model: task.body.model }, label: 'pending' };
      if (task.failing) return { status: 200, body: { status: 'failed', error: { code: 'internal_error', message: 'video generation failed' } }, label: 'failed' };
      return { status: 200, body: { status: 'done', model: task.body.model, video: { url, duration: task.body.duration ?? 6, respect_moderation: true } }, label: 'done' };
    }
    case 'zhipu': {
      if (!end) return { status: 200, body: { model: task.body.model, request_id: `req-${task.id}`, task_status: 'PROCESSING' }, label: 'PROCESSING' };
      if (task.failing) return { status: 200, body: { model: task.body.model, request_id: `req-${task.id}`, task_status: 'FAIL' }, label: 'FAIL' };
      return { status: 200, body: { model: task.body.model, request_id: `req-${task.id}`, task_status: 'SUCCESS', video_result: [{ url, cover_image_url: `${origin}/files/${task.id}.png` }] }, label: 'SUCCESS' };
    }
    case 'volcengine': {
      const base = { id: task.id, model: task.body.model, created_at: 1743414619, updated_at: 1743414673 };
      if (!end) return { status: 200, body: { ...base, status: task.at === 0 ? 'queued' : 'running' }, label: task.at === 0 ? 'queued' : 'running' };
      if (task.failing) return { status: 200, body: { ...base, status: 'failed', error: { code: 'OutputVideoSensitiveContentDetected', message: 'The output video may contain sensitive information.' } }, label: 'failed' };
      return { status: 200, body: { ...base, status: 'succeeded', content: { video_url: url }, usage: { completion_tokens: 108900, total_tokens: 108900 }, duration: 5, ratio: '16:9', resolution: '720p', framespersecond: 24 }, label: 'succeeded' };
    }
  }
}

/** The host's 400 for a request it refuses. */
function refusal(host: VideoHost): unknown {
  if (host === 'xai') return { code: 'Client specified an invalid argument', error: 'The prompt violates the usage guidelines.' };
  return { error: { code: host === 'zhipu' ? '1301' : 'InputTextSensitiveContentDetected', message: 'The prompt violates the usage guidelines.', type: 'invalid_request_error' } };
}

export async function startFakeCompatibleVideo(): Promise<FakeCompatibleVideo> {
  let next = 0;
  const tasks = new Map<string, Task>();
  const fake = {
    calls: [] as VideoHostCall[], answered: new Map<string, string[]>(),
    polls(taskId: string) {
      return fake.calls.filter((c) => c.method === 'GET' && c.path.endsWith(`/${taskId}`));
    },
  } as FakeCompatibleVideo;
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const body = await readJson(req);
    const host = HOSTS.find((h) => CREATE[h].test(url.pathname) || READ[h].test(url.pathname));
    if (!host) return json(res, 404, { error: { message: `fake: no route ${req.method} ${url.pathname}` } });
    fake.calls.push({ host, method: req.method ?? '', path: url.pathname + url.search, headers: req.headers, body });
    if (req.headers.authorization !== `Bearer ${host}-key`) return json(res, 401, { error: { message: 'invalid api key', code: 'invalid_api_key' } });
    if (req.method === 'POST' && CREATE[host].test(url.pathname)) {
      const prompt = promptOf(host, body ?? {});
      if (prompt.includes('forbidden')) return json(res, 400, refusal(host));
      const task: Task = { host, id: `${host}-task-${++next}`, failing: prompt.includes('explode'), at: 0, body: body ?? {} };
      tasks.set(task.id, task);
      fake.answered.set(task.id, []);
      return json(res, 200, created(task));
    }
    const read = READ[host].exec(url.pathname);
    const task = read && req.method === 'GET' ? tasks.get(decodeURIComponent(read[1]!)) : undefined;
    if (!task || task.host !== host) return json(res, 404, { error: { message: 'task not found', code: 'not_found' } });
    const answer = step(task, fake.origin);
    fake.answered.get(task.id)!.push(answer.label);
    task.at++;
    if (answer.body === null) {
      res.writeHead(answer.status);
      return res.end();
    }
    return json(res, answer.status, answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return Object.assign(fake, {
    origin,
    hostBase: (host: VideoHost) => `${origin}${PREFIX[host]}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  });
}

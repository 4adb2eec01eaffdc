/**
 * A loopback Runway API (api.dev.runwayml.com/v1) as its API reference describes it, for images and video:
 * - POST /v1/text_to_image `{model, promptText, ratio}`, /v1/image_to_video `{model, promptImage, promptText,
 *   ratio, duration, seed}`, /v1/text_to_video -> `{id}`;
 * - GET /v1/tasks/{id} walks each task through `steps` (default PENDING, RUNNING 0.3, RUNNING 0.7, SUCCEEDED), one
 *   step per read and staying on the last; a SUCCEEDED task's `output` is a URL on this same host
 *   (/outputs/{id}.png or .mp4) that anyone may fetch; a promptText containing "unsafe" ends FAILED with
 *   failureCode SAFETY.INPUT.TEXT instead.
 * Every request needs `Authorization: Bearer <key>` (401 `{error}`) and `X-Runway-Version: 2024-11-06`
 * (400 `{error}`); a body Runway would refuse answers 400 `{error, issues}`. Requests are recorded with their
 * JSON bodies, and the status each task read answered in `polls`. Reusable: start one per test file.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PNG_BASE64 } from './stability.ts';

export const RUNWAY_KEY = 'key_runway_test';
export const RUNWAY_VERSION = '2024-11-06';
/** A few bytes standing for an MP4 (its ftyp box). */
export const MP4_BYTES = Buffer.from('000000186674797069736f6d0000020069736f6d69736f32', 'hex');
export const RUNWAY_PNG = Buffer.from(PNG_BASE64, 'base64');

export interface RunwayStep {
  status: 'PENDING' | 'THROTTLED' | 'RUNNING' | 'SUCCEEDED';
  progress?: number;
}

export const DEFAULT_STEPS: RunwayStep[] = [{ status: 'PENDING' }, { status: 'RUNNING', progress: 0.3 }, { status: 'RUNNING', progress: 0.7 }, { status: 'SUCCEEDED' }];

export interface RunwayRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  json?: Record<string, unknown>;
}

export interface RunwayTaskRecord {
  id: string;
  kind: 'image' | 'video';
  body: Record<string, unknown>;
  reads: number;
}

export interface FakeRunway {
  origin: string;
  /** The base URL to configure: the origin and /v1. */
  baseUrl: string;
  requests: RunwayRequest[];
  tasks: Map<string, RunwayTaskRecord>;
  /** Each task read, in order: the task id and the status answered. */
  polls: Array<{ id: string; status: string; progress?: number }>;
  /** The walk new reads follow; change it between tests. */
  steps: RunwayStep[];
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>);
}

/** What Runway refuses of a create body (a few of its rules, enough to catch a translator's mistakes). */
function issuesOf(route: string, body: Record<string, unknown>): string[] {
  const issues: string[] = [];
  if (typeof body.model !== 'string') issues.push('model: Required');
  if (route !== '/image_to_video' && typeof body.promptText !== 'string') issues.push('promptText: Required');
  if (typeof body.ratio !== 'string' || !/^\d+:\d+$/.test(body.ratio)) issues.push('ratio: Invalid enum value');
  if (route === '/image_to_video' && typeof body.promptImage !== 'string') issues.push('promptImage: Required');
  if (route === '/text_to_image' && body.model !== 'gen4_image') issues.push('model: Invalid enum value. Expected \'gen4_image\'');
  return issues;
}

export async function startFakeRunway(steps: RunwayStep[] = DEFAULT_STEPS): Promise<FakeRunway> {
  const fake = { requests: [], tasks: new Map(), polls: [], steps } as unknown as FakeRunway;
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const record: RunwayRequest = { method: req.method ?? 'GET', path, headers: req.headers, json: await readJson(req).catch(() => undefined) };
    fake.requests.push(record);
    const output = /^\/outputs\/([^/]+)\.(png|mp4)$/.exec(path);
    if (output && req.method === 'GET') {
      // Public, as Runway's output URLs are: no credential asked.
      if (!fake.tasks.has(output[1]!)) return json(res, 404, { error: 'Not found' });
      res.writeHead(200, { 'content-type': output[2] === 'png' ? 'image/png' : 'video/mp4' });
      return res.end(output[2] === 'png' ? RUNWAY_PNG : MP4_BYTES);
    }
    if (req.headers.authorization !== `Bearer ${RUNWAY_KEY}`) return json(res, 401, { error: 'Invalid API key' });
    if (req.headers['x-runway-version'] !== RUNWAY_VERSION) return json(res, 400, { error: 'Invalid or missing X-Runway-Version header' });
    const route = path.replace(/^\/v1/, '');
    if (req.method === 'POST' && ['/text_to_image', '/image_to_video', '/text_to_video'].includes(route)) {
      const body = record.json ?? {};
      const issues = issuesOf(route, body);
      if (issues.length > 0) return json(res, 400, { error: 'Validation of body failed', issues });
      const id = randomUUID();
      fake.tasks.set(id, { id, kind: route === '/text_to_image' ? 'image' : 'video', body, reads: 0 });
      return json(res, 200, { id });
    }
    const taskId = /^\/tasks\/([^/]+)$/.exec(route)?.[1];
    const task = taskId ? fake.tasks.get(taskId) : undefined;
    if (req.method !== 'GET' || !task) return json(res, 404, { error: 'Not found' });
    const step = fake.steps[Math.min(task.reads, fake.steps.length - 1)]!;
    task.reads += 1;
    const createdAt = new Date().toISOString();
    if (step.status === 'SUCCEEDED' && String(task.body.promptText ?? '').includes('unsafe')) {
      fake.polls.push({ id: task.id, status: 'FAILED' });
      return json(res, 200, { id: task.id, createdAt, status: 'FAILED', failure: 'The prompt was flagged by content moderation.', failureCode: 'SAFETY.INPUT.TEXT' });
    }
    fake.polls.push({ id: task.id, status: step.status, ...(step.progress !== undefined ? { progress: step.progress } : {}) });
    if (step.status === 'SUCCEEDED') {
      return json(res, 200, { id: task.id, createdAt, status: 'SUCCEEDED', output: [`${fake.origin}/outputs/${task.id}.${task.kind === 'image' ? 'png' : 'mp4'}`] });
    }
    json(res, 200, { id: task.id, createdAt, status: step.status, ...(step.progress !== undefined ? { progress: step.progress } : {}) });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.baseUrl = `${fake.origin}/v1`;
  fake.close = () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
  return fake;
}

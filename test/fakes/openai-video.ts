/**
 * A loopback upstream speaking OpenAI's video API (Sora): POST {base}/videos {model, prompt, seconds, size} makes a
 * video object {id, object: "video", status, progress, seconds, size, error}; GET {base}/videos/{id} reads it, and
 * the test moves it one step along its walk (queued -> in_progress 33 -> in_progress 66 -> completed) with advance();
 * GET {base}/videos/{id}/content sends the MP4 in chunks once it is completed, and only with the API key. A
 * prompt containing "explode" walks to failed (error {code, message}); `failPolls` answers that many status
 * requests with a 500 first; `breakContent` cuts a download after its first chunk. Every request is recorded:
 * method, path, headers, JSON body.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

export interface VideoCall {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown> | null;
}

interface Step { status: 'queued' | 'in_progress' | 'completed' | 'failed'; progress: number }

export interface FakeVideo {
  id: string;
  model: string;
  prompt: string;
  seconds: string;
  size: string;
  walk: Step[];
  at: number;
}

export interface FakeOpenAiVideo {
  origin: string;
  calls: VideoCall[];
  videos: Map<string, FakeVideo>;
  /** The MP4's chunks, in order. */
  chunks: Buffer[];
  /** Moves a video one step along its walk; returns the step's status. */
  advance(id: string): string;
  /** Status requests still to answer with a 500. */
  failPolls: number;
  /** While true, a content download is cut after its first chunk. */
  breakContent: boolean;
  /** When set, a content download is redirected there (a file host of the provider's). */
  redirectContent?: string;
  /** The status requests made for one video. */
  polls(id: string): VideoCall[];
  close(): Promise<void>;
}

const KEY = 'Bearer sk-upstream';
const WALK: Step[] = [{ status: 'queued', progress: 0 }, { status: 'in_progress', progress: 33 }, { status: 'in_progress', progress: 66 }, { status: 'completed', progress: 100 }];
const FAILING: Step[] = [{ status: 'queued', progress: 0 }, { status: 'in_progress', progress: 20 }, { status: 'failed', progress: 20 }];

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

function videoObject(video: FakeVideo) {
  const step = video.walk[video.at]!;
  return {
    id: video.id, object: 'video', created_at: 1758941485, status: step.status, model: video.model, progress: step.progress,
    seconds: video.seconds, size: video.size,
    ...(step.status === 'failed' ? { error: { code: 'moderation_blocked', message: 'The video was blocked by moderation.' } } : {}),
  };
}

export async function startFakeOpenAiVideo(): Promise<FakeOpenAiVideo> {
  let next = 0;
  const fake = {
    calls: [] as VideoCall[], videos: new Map<string, FakeVideo>(), failPolls: 0, breakContent: false,
    chunks: [Buffer.from('\x00\x00\x00\x18ftypmp42'), Buffer.from('-frames-one-'), Buffer.from('-frames-two-')],
    advance(id: string) {
      const video = fake.videos.get(id)!;
      if (video.at < video.walk.length - 1) video.at++;
      return video.walk[video.at]!.status;
    },
    polls(id: string) {
      return fake.calls.filter((c) => c.method === 'GET' && c.path.endsWith(`/videos/${id}`));
    },
  } as FakeOpenAiVideo;
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const body = await readJson(req);
    fake.calls.push({ method: req.method ?? '', path: url.pathname + url.search, headers: req.headers, body });
    if (req.headers.authorization !== KEY) return json(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } });
    const create = url.pathname.match(/\/videos$/);
    if (req.method === 'POST' && create) {
      if (typeof body?.prompt !== 'string' || typeof body.model !== 'string') return json(res, 400, { error: { message: 'prompt and model are required', type: 'invalid_request_error' } });
      const video: FakeVideo = {
        id: `video_${(++next).toString(16).padStart(8, '0')}`, model: body.model, prompt: body.prompt,
        seconds: typeof body.seconds === 'string' ? body.seconds : '4', size: typeof body.size === 'string' ? body.size : '720x1280',
        walk: body.prompt.includes('explode') ? FAILING : WALK, at: 0,
      };
      fake.videos.set(video.id, video);
      return json(res, 200, videoObject(video));
    }
    const read = url.pathname.match(/\/videos\/([^/]+)(\/content)?$/);
    const video = read ? fake.videos.get(decodeURIComponent(read[1]!)) : undefined;
    if (req.method !== 'GET' || !read) return json(res, 404, { error: { message: `fake: no route ${req.method} ${url.pathname}` } });
    if (!video) return json(res, 404, { error: { message: 'Video not found', type: 'invalid_request_error', code: 'not_found' } });
    if (read[2]) {
      if (video.walk[video.at]!.status !== 'completed') return json(res, 404, { error: { message: 'Video is not ready', type: 'invalid_request_error' } });
      if (fake.redirectContent) return void res.writeHead(302, { location: fake.redirectContent }).end();
      res.writeHead(200, { 'content-type': 'video/mp4', 'transfer-encoding': 'chunked' });
      for (const chunk of fake.chunks) {
        res.write(chunk);
        if (fake.breakContent) return void setTimeout(() => res.destroy(), 20);
        await delay(5);
      }
      return res.end();
    }
    if (fake.failPolls > 0) {
      fake.failPolls--;
      return json(res, 500, { error: { message: 'The server had an error while processing your request.', type: 'server_error' } });
    }
    return json(res, 200, videoObject(video));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  });
}

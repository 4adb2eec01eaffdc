/**
 * Replicate's predictions wire (replicate.com/docs/reference/http, /docs/topics/predictions, /docs/streaming):
 * POST /v1/models/{owner}/{name}/predictions (or /v1/predictions with a version) with {input, stream?} and
 * `Prefer: wait`; a prediction {id, status, output, error, metrics, urls {get, cancel, stream}} that goes
 * starting -> processing -> succeeded; GET urls.get polls it; urls.stream is SSE `output` events (data: the text
 * piece), then `done`. The fake keeps each prediction it created, so its poll and stream URLs answer for it.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import type { ScriptedAnswer, WireSummary, WireTurn } from '../fixtures.ts';
import type { FamilyWire, RecordedUpstreamRequest } from '../kit.ts';

const CREATED_AT = '2025-06-15T12:00:00.000Z';

/** The model as the request names it: owner/name from the path, or the version from the body. */
function modelOf(req: RecordedUpstreamRequest): string {
  const official = /^\/v1\/(?:models|deployments)\/([^/]+)\/([^/]+)\/predictions$/.exec(req.url);
  return official ? `${decodeURIComponent(official[1]!)}/${decodeURIComponent(official[2]!)}` : String(req.json?.version);
}

/** The prompt back into turns: a transcript's `User:` / `Assistant:` paragraphs, or one user turn. */
function turnsOf(prompt: string): WireTurn[] {
  if (!prompt.endsWith('\n\nAssistant:') || !/^(User|Assistant|Tool): /.test(prompt)) return [{ role: 'user', text: prompt }];
  const roles = { User: 'user', Assistant: 'assistant', Tool: 'tool' } as const;
  return prompt.slice(0, -'\n\nAssistant:'.length).split(/\n\n(?=(?:User|Assistant|Tool): )/).map((paragraph) => {
    const [, label, text] = /^(User|Assistant|Tool): ([\s\S]*)$/.exec(paragraph)!;
    return { role: roles[label as keyof typeof roles], text: text! };
  });
}

export function summarizeReplicateRequest(req: RecordedUpstreamRequest): WireSummary {
  const input = req.json?.input ?? {};
  return {
    model: modelOf(req),
    stream: req.json?.stream === true,
    system: input.system_prompt ?? null,
    turns: turnsOf(String(input.prompt ?? '')),
    tools: [],
    toolChoice: null,
    maxTokens: input.max_tokens ?? input.max_new_tokens ?? null,
    temperature: input.temperature ?? null,
    stop: typeof input.stop_sequences === 'string' && input.stop_sequences !== '' ? input.stop_sequences.split(',') : [],
    jsonSchema: null,
  };
}

/** Text the way a language model streams it: words, each with its leading space. */
const pieces = (text: string) => text.match(/\s*\S+|\s+$/g) ?? [];

/** The output stream's bytes: one `output` event per piece (multi-line pieces as several data lines), then done. */
export function replicateStreamEvents(answer: ScriptedAnswer): string[] {
  const events = pieces(answer.text).map((piece, i) => `event: output\nid: 1750000000:${i}\n${piece.split('\n').map((l) => `data: ${l}`).join('\n')}\n\n`);
  return [...events, 'event: done\ndata: {}\n\n'];
}

interface Stored { answer: ScriptedAnswer; polls: number; prediction: Record<string, unknown> }

export interface ReplicateFake {
  wire: FamilyWire;
  /** The poll (GET /v1/predictions/:id) and stream (GET /stream/:id) URLs of the predictions created. */
  routes(req: RecordedUpstreamRequest, res: ServerResponse): boolean;
  /** How many polls a prediction takes to succeed (default 2: processing, then succeeded). */
  pollsToFinish: number;
}

export function replicateFake(): ReplicateFake {
  const predictions = new Map<string, Stored>();
  let created = 0;
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const fake: ReplicateFake = {
    pollsToFinish: 2,
    wire: {
      summarize: summarizeReplicateRequest,
      // Creation always answers JSON; the stream is the follow-up to urls.stream.
      isStream: () => false,
      answerJson(answer, req) {
        const id = `rp${String(++created).padStart(4, '0')}conformance`;
        const origin = `http://${req.headers.host}`;
        const prediction = {
          id, model: modelOf(req), version: req.json?.version ?? 'hidden', input: req.json?.input, logs: '', output: null,
          data_removed: false, error: null, status: 'starting', created_at: CREATED_AT,
          urls: {
            get: `${origin}/v1/predictions/${id}`, cancel: `${origin}/v1/predictions/${id}/cancel`, web: `https://replicate.com/p/${id}`,
            ...(req.json?.stream ? { stream: `${origin}/stream/${id}` } : {}),
          },
        };
        predictions.set(id, { answer, polls: 0, prediction });
        return { headers: { location: prediction.urls.get }, body: JSON.stringify(prediction) };
      },
      answerStream: (answer) => ({ headers: { 'content-type': 'text/event-stream' }, body: new TextEncoder().encode(replicateStreamEvents(answer).join('')) }),
      errorBody: (status, message) => ({ headers: { 'content-type': 'application/problem+json' }, body: JSON.stringify({ title: status === 429 ? 'Request was throttled' : 'Invalid input', detail: message, status }) }),
      assertAuth(req, credential) {
        assert.equal(req.headers.authorization, `Bearer ${credential}`);
        assert.match(req.url, /^\/v1\/(models\/[^/]+\/[^/]+\/predictions|predictions)$/);
        if (!req.json?.stream) assert.match(String(req.headers.prefer), /^wait(=\d+)?$/);
      },
    },
    routes(req, res) {
      const poll = /^\/v1\/predictions\/([^/]+)$/.exec(req.url);
      const stream = /^\/stream\/([^/]+)$/.exec(req.url);
      const stored = predictions.get((poll ?? stream)?.[1] ?? '');
      if (!stored) return false;
      if (poll) {
        stored.polls++;
        const { answer } = stored;
        const done = stored.polls >= fake.pollsToFinish;
        const output = pieces(answer.text);
        json(res, 200, {
          ...stored.prediction,
          status: done ? 'succeeded' : 'processing',
          output: done ? output : output.slice(0, 1),
          ...(done ? {
            completed_at: CREATED_AT,
            metrics: { predict_time: 0.42, input_token_count: answer.usage.prompt, output_token_count: answer.usage.completion, tokens_per_second: 50 },
          } : {}),
        });
        return true;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      res.end(replicateStreamEvents(stored.answer).join(''));
      return true;
    },
  };
  return fake;
}

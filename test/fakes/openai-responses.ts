/**
 * A loopback upstream that speaks OpenAI's Responses API: POST /v1/responses (or any path ending in /responses,
 * so Azure's /openai/v1/responses too), answered as JSON or as its named SSE events, each event cut in two at an
 * awkward byte offset and some written together with the next. It keeps the responses it made (store true) by
 * id, resolves previous_response_id against them, and can forget them all: then it answers OpenAI's 400
 * `previous_response_not_found`, as OpenAI does for an expired or deleted response.
 */
import type { ServerResponse } from 'node:http';
import { startRecordingServer } from '../conformance/recording-server.ts';
import type { RecordedUpstreamRequest } from '../conformance/kit.ts';
import { writeSplit } from './openai.ts';

export interface ScriptedResponse {
  text?: string;
  calls?: Array<{ call_id: string; name: string; arguments: string }>;
  /** `incomplete`: cut at max_output_tokens. */
  status?: 'completed' | 'incomplete';
  /** Items the provider adds before the answer (reasoning, web_search_call), as it sends them. */
  extraItems?: Array<Record<string, unknown>>;
}

export interface FakeResponsesApi {
  url: string;
  requests: RecordedUpstreamRequest[];
  /** What the next answers say. */
  script: ScriptedResponse;
  /** The responses it knows, by id. */
  stored: Map<string, Record<string, unknown>>;
  /** Replaces the answer for the next requests (a stream that fails); undefined restores it. */
  handle?: (req: RecordedUpstreamRequest, res: ServerResponse) => void | Promise<void>;
  forget(): void;
  close(): Promise<void>;
}

export const RESPONSES_USAGE = {
  input_tokens: 20, input_tokens_details: { cached_tokens: 4 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 2 }, total_tokens: 27,
};

let counter = 0;
const hex = (prefix: string) => `${prefix}_${(++counter).toString(16).padStart(8, '0')}${'ab'.repeat(12)}`;

function outputOf(script: ScriptedResponse): Array<Record<string, unknown>> {
  const items: Array<Record<string, unknown>> = [...(script.extraItems ?? [])];
  const status = script.status === 'incomplete' ? 'incomplete' : 'completed';
  if (script.text !== undefined) {
    items.push({ id: hex('msg'), type: 'message', status, role: 'assistant', content: [{ type: 'output_text', text: script.text, annotations: [] }] });
  }
  for (const call of script.calls ?? []) items.push({ id: hex('fc'), type: 'function_call', status: 'completed', ...call });
  return items;
}

function responseOf(body: Record<string, unknown>, script: ScriptedResponse): Record<string, unknown> {
  const incomplete = script.status === 'incomplete';
  return {
    id: hex('resp'), object: 'response', created_at: 1_750_000_000, status: incomplete ? 'incomplete' : 'completed',
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null, error: null, model: `${String(body.model)}-2025-04-14`,
    instructions: body.instructions ?? null, previous_response_id: body.previous_response_id ?? null,
    output: outputOf(script), usage: RESPONSES_USAGE, store: body.store !== false,
  };
}

const sse = (event: Record<string, unknown>) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`;

/** The events OpenAI streams for a response: created, the items and their deltas, then the end. */
export function responseStreamEvents(response: Record<string, unknown>): string[] {
  let seq = 0;
  const events: Array<Record<string, unknown>> = [];
  const push = (event: Record<string, unknown>) => events.push({ ...event, sequence_number: seq++ });
  const started = { ...response, status: 'in_progress', output: [], usage: null };
  push({ type: 'response.created', response: started });
  push({ type: 'response.in_progress', response: started });
  (response.output as Array<Record<string, unknown>>).forEach((item, outputIndex) => {
    if (item.type === 'message') {
      const text = (item.content as Array<{ text: string }>)[0]!.text;
      push({ type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } });
      push({ type: 'response.content_part.added', item_id: item.id, output_index: outputIndex, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      for (const piece of text.match(/.{1,4}/gsu) ?? []) push({ type: 'response.output_text.delta', item_id: item.id, output_index: outputIndex, content_index: 0, delta: piece, logprobs: [] });
      push({ type: 'response.output_text.done', item_id: item.id, output_index: outputIndex, content_index: 0, text, logprobs: [] });
      push({ type: 'response.content_part.done', item_id: item.id, output_index: outputIndex, content_index: 0, part: { type: 'output_text', text, annotations: [] } });
    } else if (item.type === 'function_call') {
      const args = String(item.arguments);
      push({ type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const piece of args.match(/.{1,5}/gsu) ?? []) push({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index: outputIndex, delta: piece });
      push({ type: 'response.function_call_arguments.done', item_id: item.id, output_index: outputIndex, arguments: args });
    } else {
      push({ type: 'response.output_item.added', output_index: outputIndex, item });
    }
    push({ type: 'response.output_item.done', output_index: outputIndex, item });
  });
  push({ type: response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', response });
  const frames = events.map(sse);
  // Some events share a write with the next one: a frame boundary in the middle of a network chunk.
  const joined: string[] = [];
  frames.forEach((frame, i) => (i % 3 === 1 ? (joined[joined.length - 1] += frame) : joined.push(frame)));
  return joined;
}

export async function startFakeResponsesApi(): Promise<FakeResponsesApi> {
  const fake: Pick<FakeResponsesApi, 'script' | 'stored' | 'handle' | 'forget'> = {
    script: { text: 'Hello from the Responses API' },
    stored: new Map(),
    forget: () => fake.stored.clear(),
  };
  const server = await startRecordingServer(undefined, async (req, res) => {
    if (fake.handle) return fake.handle(req, res);
    const body = (req.json ?? {}) as Record<string, unknown>;
    if (req.method !== 'POST' || !req.url.split('?')[0]!.endsWith('/responses')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error', param: null, code: null } }));
      return;
    }
    const previous = body.previous_response_id;
    if (typeof previous === 'string' && !fake.stored.has(previous)) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Previous response with id '${previous}' not found.`, type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found' } }));
      return;
    }
    const response = responseOf(body, fake.script);
    if (body.store !== false) fake.stored.set(String(response.id), response);
    if (body.stream === true) return writeSplit(res, responseStreamEvents(response), 1);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(response));
  });
  return Object.assign(fake, server);
}

/**
 * The Anthropic Messages wire as its docs describe it: POST /v1/messages with x-api-key and anthropic-version;
 * answers `{type: message, content: [blocks], stop_reason, usage}`; streams of named SSE events (message_start,
 * content_block_start / delta / stop, ping, message_delta, message_stop); errors `{type: error, error}`.
 * The body helpers are exported for the other hosts of this wire (Claude on Vertex AI).
 */
import assert from 'node:assert/strict';
import { JSON_TOOL_DESCRIPTION } from '../../../providers/anthropic/index.ts';
import type { ScriptedAnswer, WireSummary, WireTurn } from '../fixtures.ts';
import type { FamilyWire, RecordedUpstreamRequest } from '../kit.ts';

type Block = { type: string; text?: string; id?: string; name?: string; input?: unknown; tool_use_id?: string; content?: unknown };

const blocksOf = (content: unknown): Block[] => (typeof content === 'string' ? [{ type: 'text', text: content }] : (content as Block[] | undefined) ?? []);
const textOf = (blocks: Block[]) => blocks.filter((b) => b.type === 'text').map((b) => b.text ?? '').join('');

/** The tool standing in for response_format (the gateway marks it by its description). */
function jsonTool(body: any): string | null {
  const tool = (body?.tools ?? []).find((t: { description?: string }) => t.description?.startsWith(JSON_TOOL_DESCRIPTION));
  return tool ? tool.name : null;
}

export function summarizeMessagesBody(body: any): WireSummary {
  const turns: WireTurn[] = [];
  for (const message of (body.messages ?? []) as Array<{ role: string; content: unknown }>) {
    const blocks = blocksOf(message.content);
    if (message.role === 'user') {
      const results = blocks.filter((b) => b.type === 'tool_result');
      for (const r of results) turns.push({ role: 'tool', text: textOf(blocksOf(r.content)), toolCallId: r.tool_use_id! });
      const rest = blocks.filter((b) => b.type !== 'tool_result');
      if (rest.length === 0 && results.length > 0) continue;
      const turn: WireTurn = { role: 'user', text: textOf(rest) };
      const images = rest.filter((b) => b.type === 'image').length;
      if (images > 0) turn.images = images;
      turns.push(turn);
    } else {
      const turn: WireTurn = { role: 'assistant', text: textOf(blocks) };
      const calls = blocks.filter((b) => b.type === 'tool_use');
      if (calls.length > 0) turn.toolCalls = calls.map((c) => ({ id: c.id!, name: c.name!, arguments: c.input }));
      turns.push(turn);
    }
  }
  const choice = body.tool_choice as { type: string; name?: string } | undefined;
  const system = body.system === undefined ? null : typeof body.system === 'string' ? body.system : textOf(body.system);
  return {
    model: body.model,
    stream: body.stream === true,
    system,
    turns,
    tools: (body.tools ?? []).map((t: { name: string }) => t.name),
    toolChoice: !choice ? null : choice.type === 'any' ? 'required' : choice.type === 'tool' ? choice.name! : choice.type,
    maxTokens: body.max_tokens ?? null,
    temperature: body.temperature ?? null,
    stop: body.stop_sequences ?? [],
    jsonSchema: jsonTool(body),
  };
}

const STOP: Record<ScriptedAnswer['finish'], string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use' };

/** The content blocks the model answers with; a forced response_format tool is answered by calling it. */
function contentOf(answer: ScriptedAnswer, body: any): { content: Block[]; stopReason: string } {
  const forced = jsonTool(body);
  if (forced && body?.tool_choice?.name === forced && answer.toolCalls.length === 0) {
    return { content: [{ type: 'tool_use', id: 'toolu_conformance_json', name: forced, input: JSON.parse(answer.text) }], stopReason: 'tool_use' };
  }
  const content: Block[] = answer.text === '' ? [] : [{ type: 'text', text: answer.text }];
  for (const call of answer.toolCalls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: JSON.parse(call.arguments) });
  return { content, stopReason: STOP[answer.finish] };
}

const ID = 'msg_01Conformance';
const usageOf = (answer: ScriptedAnswer) => ({ input_tokens: answer.usage.prompt, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: answer.usage.completion });

export function messagesAnswer(answer: ScriptedAnswer, body: any) {
  const { content, stopReason } = contentOf(answer, body);
  return { id: ID, type: 'message', role: 'assistant', model: body?.model ?? 'claude-model', content, stop_reason: stopReason, stop_sequence: null, usage: usageOf(answer) };
}

/** The answer as Anthropic streams it: text in pieces, tool input as input_json_delta fragments, a ping. */
export function messagesStreamEvents(answer: ScriptedAnswer, body: any): string[] {
  const { content, stopReason } = contentOf(answer, body);
  const events: Array<[string, unknown]> = [['message_start', {
    type: 'message_start',
    message: { id: ID, type: 'message', role: 'assistant', content: [], model: body?.model ?? 'claude-model', stop_reason: null, stop_sequence: null, usage: { ...usageOf(answer), output_tokens: 1 } },
  }]];
  content.forEach((block, index) => {
    const start = block.type === 'text' ? { type: 'text', text: '' } : { type: 'tool_use', id: block.id, name: block.name, input: {} };
    events.push(['content_block_start', { type: 'content_block_start', index, content_block: start }]);
    if (index === 0) events.push(['ping', { type: 'ping' }]);
    const pieces = block.type === 'text' ? block.text!.match(/.{1,5}/gs) ?? [] : JSON.stringify(block.input).match(/.{1,4}/gs) ?? [];
    for (const piece of pieces) {
      const delta = block.type === 'text' ? { type: 'text_delta', text: piece } : { type: 'input_json_delta', partial_json: piece };
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta }]);
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  events.push(['message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: answer.usage.completion } }]);
  events.push(['message_stop', { type: 'message_stop' }]);
  return events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error',
  413: 'request_too_large', 429: 'rate_limit_error', 500: 'api_error', 529: 'overloaded_error',
};

export function messagesErrorBody(status: number, message: string): string {
  return JSON.stringify({ type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } });
}

export const anthropicWire: FamilyWire = {
  summarize(req: RecordedUpstreamRequest) {
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/v1/messages');
    return summarizeMessagesBody(req.json);
  },
  isStream: (req) => req.json?.stream === true,
  answerJson: (answer, req) => ({ headers: { 'request-id': 'req_conformance' }, body: JSON.stringify(messagesAnswer(answer, req.json)) }),
  answerStream: (answer, req) => ({
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
    body: new TextEncoder().encode(messagesStreamEvents(answer, req.json).join('')),
  }),
  errorBody: (status, message) => ({
    headers: { 'request-id': 'req_conformance', ...(status === 429 ? { 'retry-after': '1' } : {}) },
    body: messagesErrorBody(status, message),
  }),
  assertAuth(req, credential) {
    assert.equal(req.headers['x-api-key'], credential);
    assert.equal(req.headers['anthropic-version'], '2023-06-01');
    assert.equal(req.headers.authorization, undefined, 'no caller credential reaches Anthropic');
  },
};

/**
 * The wires of the OpenAI-compatible providers: OpenAI's chat-completions format with each provider's
 * documented differences (where its stream puts usage, its finish reasons, Mistral's tool-call ids and
 * strict fields, DeepSeek's reasoning_content, its error body). The fake is as strict as the provider:
 * a field the provider rejects fails the summary.
 */
import assert from 'node:assert/strict';
import type { ScriptedAnswer, WireSummary } from '../fixtures.ts';
import type { FamilyWire, RecordedUpstreamRequest } from '../kit.ts';
import { openAiCompletion, summarizeOpenAiBody } from './openai.ts';

export interface CompatibleWireStyle {
  /** The path (under the fake's root) the provider serves chat completions on. */
  path: string;
  /**
   * Where its stream reports usage: a last chunk without choices when stream_options asks for it (OpenAI's
   * way), the finishing chunk unasked, Groq's `x_groq.usage`, Moonshot's `choices[0].usage`, or every chunk
   * (Perplexity, cumulative).
   */
  streamUsage: 'asked-chunk' | 'final-chunk' | 'x_groq' | 'in-choice' | 'every-chunk';
  /** Its own name for a canonical finish reason (Together: eos). */
  finish?: Partial<Record<ScriptedAnswer['finish'], string>>;
  /** Mistral: 9-character alphanumeric tool-call ids both ways, tool calls streamed whole, `any` for required. */
  mistral?: boolean;
  /** DeepSeek: the reasoning the model returns beside the answer. */
  reasoningContent?: string;
  /** Fields the provider answers 4xx for. */
  rejects?: string[];
  /** For providers that reject unknown fields: every field they accept. */
  accepts?: string[];
  /** No key is sent (Ollama). */
  noAuth?: boolean;
  /** Its error body for a status. */
  error?: 'openai' | 'mistral' | 'string' | 'cloudflare' | 'databricks';
  /** Extra top-level answer fields (Perplexity's citations). */
  extra?: Record<string, unknown>;
}

const ID = 'chatcmpl-compat';
const CREATED = 1_700_000_000;
const MISTRAL_ID = /^[A-Za-z0-9]{9}$/;

/** How the fake Mistral names a scripted call: its own ids are 9 alphanumerics. */
export const mistralWireId = (id: string) => `${id.replace(/[^A-Za-z0-9]/g, '')}000000000`.slice(0, 9);

const usageOf = (a: ScriptedAnswer) => ({ prompt_tokens: a.usage.prompt, completion_tokens: a.usage.completion, total_tokens: a.usage.prompt + a.usage.completion });

function scripted(answer: ScriptedAnswer, style: CompatibleWireStyle): ScriptedAnswer {
  const toolCalls = style.mistral ? answer.toolCalls.map((c) => ({ ...c, id: mistralWireId(c.id) })) : answer.toolCalls;
  return { ...answer, toolCalls };
}

function checkMistralIds(body: any): void {
  const known = new Set<string>();
  for (const m of body.messages ?? []) {
    for (const c of m.tool_calls ?? []) {
      assert.match(c.id, MISTRAL_ID, 'Mistral takes 9-character alphanumeric tool-call ids');
      known.add(c.id);
    }
    if (m.tool_call_id !== undefined) {
      assert.match(m.tool_call_id, MISTRAL_ID, 'Mistral takes 9-character alphanumeric tool_call_id');
      assert.ok(known.has(m.tool_call_id), 'the tool result answers a call id the assistant turn carries');
    }
  }
}

function summarize(style: CompatibleWireStyle, req: RecordedUpstreamRequest): WireSummary {
  assert.equal(req.method, 'POST');
  assert.equal(req.url, style.path, 'the provider serves chat completions on this path');
  const body = req.json;
  for (const field of style.rejects ?? []) assert.equal(body[field], undefined, `the provider rejects ${field}`);
  if (style.accepts) for (const field of Object.keys(body)) assert.ok(style.accepts.includes(field), `the provider rejects the unknown field ${field}`);
  if (style.mistral) {
    checkMistralIds(body);
    assert.notEqual(body.tool_choice, 'required', 'Mistral is asked for any, not required');
  }
  const summary = summarizeOpenAiBody(body);
  if (style.mistral && summary.toolChoice === 'any') summary.toolChoice = 'required';
  return summary;
}

function answerJson(style: CompatibleWireStyle, answer: ScriptedAnswer, req: RecordedUpstreamRequest): string {
  const completion = openAiCompletion(scripted(answer, style), req.json?.model ?? 'model') as any;
  const choice = completion.choices[0];
  choice.finish_reason = style.finish?.[answer.finish] ?? answer.finish;
  if (style.reasoningContent) choice.message.reasoning_content = style.reasoningContent;
  return JSON.stringify({ ...completion, ...(style.extra ?? {}) });
}

/** The stream's chunks, in the provider's own arrangement. */
function streamChunks(style: CompatibleWireStyle, answer: ScriptedAnswer, req: RecordedUpstreamRequest): unknown[] {
  const model = req.json?.model ?? 'model';
  const usage = usageOf(answer);
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
    ({ id: ID, object: 'chat.completion.chunk', created: CREATED, model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }], ...extra });
  const chunks: Array<Record<string, any>> = [chunk({ role: 'assistant', content: '' }, null, style.streamUsage === 'x_groq' ? { x_groq: { id: 'req_fake' } } : {})];
  if (style.reasoningContent) for (const piece of style.reasoningContent.match(/.{1,6}/gs)!) chunks.push(chunk({ content: null, reasoning_content: piece }));
  for (const piece of answer.text.match(/.{1,5}/gs) ?? []) chunks.push(chunk({ content: piece }));
  if (style.mistral && answer.toolCalls.length > 0) {
    // Mistral sends every call whole in one delta.
    chunks.push(chunk({ tool_calls: answer.toolCalls.map((c, index) => ({ id: c.id, type: 'function', index, function: { name: c.name, arguments: c.arguments } })) }));
  } else {
    answer.toolCalls.forEach((call, index) => {
      chunks.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
      for (const piece of call.arguments.match(/.{1,4}/gs) ?? []) chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    });
  }
  const last: Record<string, any> = chunk({}, style.finish?.[answer.finish] ?? answer.finish);
  chunks.push(last);
  switch (style.streamUsage) {
    case 'asked-chunk':
      // Only when asked, as OpenAI does: the gateway must ask.
      if (req.json === null || req.json?.stream_options?.include_usage === true) chunks.push({ id: ID, object: 'chat.completion.chunk', created: CREATED, model, choices: [], usage });
      break;
    case 'final-chunk':
      last.usage = usage;
      break;
    case 'x_groq':
      last.x_groq = { id: 'req_fake', usage: { queue_time: 0.01, prompt_time: 0.002, completion_time: 0.03, total_time: 0.042, ...usage } };
      break;
    case 'in-choice':
      last.choices[0].usage = usage;
      break;
    case 'every-chunk':
      chunks.forEach((c, i) => {
        c.usage = i === chunks.length - 1 ? usage : { ...usage, completion_tokens: i, total_tokens: usage.prompt_tokens + i };
      });
      Object.assign(last, style.extra ?? {});
      break;
  }
  return chunks;
}

function errorBody(style: CompatibleWireStyle, status: number, message: string): string {
  switch (style.error ?? 'openai') {
    case 'mistral': return JSON.stringify({ object: 'error', message, type: 'invalid_request_error', param: null, code: String(status) });
    case 'string': return JSON.stringify({ error: message });
    case 'cloudflare': return JSON.stringify({ success: false, errors: [{ code: 5006, message }], messages: [], result: null });
    case 'databricks': return JSON.stringify({ error_code: status === 429 ? 'REQUEST_LIMIT_EXCEEDED' : 'BAD_REQUEST', message });
    default: return JSON.stringify({ error: { message, type: status === 429 ? 'rate_limit_exceeded' : 'invalid_request_error', code: null, param: null } });
  }
}

export function compatibleWire(style: CompatibleWireStyle): FamilyWire {
  return {
    summarize: (req) => summarize(style, req),
    isStream: (req) => req.json?.stream === true,
    answerJson: (answer, req) => ({ body: answerJson(style, answer, req) }),
    answerStream: (answer, req) => ({
      headers: { 'content-type': 'text/event-stream' },
      body: new TextEncoder().encode([...streamChunks(style, scripted(answer, style), req).map((c) => `data: ${JSON.stringify(c)}\n\n`), 'data: [DONE]\n\n'].join('')),
    }),
    errorBody: (status, message) => ({ body: errorBody(style, status, message) }),
    assertAuth: (req, credential) => {
      if (style.noAuth) assert.equal(req.headers.authorization, undefined, 'no key, no Authorization header');
      else assert.equal(req.headers.authorization, `Bearer ${credential}`);
    },
  };
}

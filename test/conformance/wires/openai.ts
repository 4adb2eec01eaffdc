/** The OpenAI chat-completions wire, as the reference FamilyWire (also used by every OpenAI-compatible provider). */
import assert from 'node:assert/strict';
import type { ScriptedAnswer, WireSummary, WireTurn } from '../fixtures.ts';
import type { FamilyWire, RecordedUpstreamRequest } from '../kit.ts';

type Message = { role: string; content: unknown; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string };

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.filter((p) => p.type === 'text').map((p) => p.text as string).join('');
  return '';
}

export function summarizeOpenAiBody(body: any): WireSummary {
  const messages = (body.messages ?? []) as Message[];
  const system = messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => text(m.content));
  const turns: WireTurn[] = messages.filter((m) => m.role !== 'system' && m.role !== 'developer').map((m) => {
    const turn: WireTurn = { role: m.role as WireTurn['role'], text: text(m.content) };
    if (m.tool_calls) turn.toolCalls = m.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: JSON.parse(c.function.arguments) as unknown }));
    if (m.tool_call_id) turn.toolCallId = m.tool_call_id;
    const images = Array.isArray(m.content) ? m.content.filter((p: { type: string }) => p.type === 'image_url').length : 0;
    if (images > 0) turn.images = images;
    return turn;
  });
  const choice = body.tool_choice;
  return {
    model: body.model,
    stream: body.stream === true,
    system: system.length > 0 ? system.join('\n') : null,
    turns,
    tools: (body.tools ?? []).map((t: { function: { name: string } }) => t.function.name),
    toolChoice: choice === undefined ? null : typeof choice === 'string' ? choice : choice.function.name,
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? null,
    temperature: body.temperature ?? null,
    stop: body.stop === undefined ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop,
    jsonSchema: body.response_format?.type === 'json_schema' ? body.response_format.json_schema.name : null,
  };
}

const ID = 'chatcmpl-conformance';
const CREATED = 1_700_000_000;

function usageOf(answer: ScriptedAnswer) {
  return { prompt_tokens: answer.usage.prompt, completion_tokens: answer.usage.completion, total_tokens: answer.usage.prompt + answer.usage.completion };
}

export function openAiCompletion(answer: ScriptedAnswer, model: string) {
  return {
    id: ID,
    object: 'chat.completion',
    created: CREATED,
    model,
    choices: [{
      index: 0,
      message: {
        role: 'assistant',
        content: answer.toolCalls.length > 0 && answer.text === '' ? null : answer.text,
        ...(answer.toolCalls.length > 0 ? { tool_calls: answer.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
      },
      finish_reason: answer.finish,
      logprobs: null,
    }],
    usage: usageOf(answer),
  };
}

/** The chunks OpenAI streams for an answer: role, text in pieces, tool calls with fragmented arguments, finish, usage. */
export function openAiStreamEvents(answer: ScriptedAnswer, model: string): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    ({ id: ID, object: 'chat.completion.chunk', created: CREATED, model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }], usage: null });
  const chunks: unknown[] = [chunk({ role: 'assistant', content: '' })];
  for (const piece of answer.text.match(/.{1,5}/gs) ?? []) chunks.push(chunk({ content: piece }));
  answer.toolCalls.forEach((call, index) => {
    chunks.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const piece of call.arguments.match(/.{1,4}/gs) ?? []) chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  chunks.push(chunk({}, answer.finish));
  chunks.push({ id: ID, object: 'chat.completion.chunk', created: CREATED, model, choices: [], usage: usageOf(answer) });
  return [...chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`), 'data: [DONE]\n\n'];
}

export const openAiWire: FamilyWire = {
  summarize: (req: RecordedUpstreamRequest) => summarizeOpenAiBody(req.json),
  isStream: (req) => req.json?.stream === true,
  answerJson: (answer, req) => ({ body: JSON.stringify(openAiCompletion(answer, req.json?.model ?? 'model')) }),
  answerStream: (answer, req) => ({
    headers: { 'content-type': 'text/event-stream' },
    body: new TextEncoder().encode(openAiStreamEvents(answer, req.json?.model ?? 'model').join('')),
  }),
  errorBody: (status, message) => ({ body: JSON.stringify({ error: { message, type: status === 429 ? 'rate_limit_exceeded' : 'invalid_request_error', code: null, param: null } }) }),
  assertAuth: (req, credential) => assert.equal(req.headers.authorization, `Bearer ${credential}`),
};

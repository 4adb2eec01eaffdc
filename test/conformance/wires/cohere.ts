/**
 * Cohere's v2 chat wire (https://docs.cohere.com/reference/chat, /reference/chat-stream): POST /v2/chat with
 * role messages, OpenAI-like function tools, tool_choice REQUIRED/NONE; answers {id, finish_reason, message
 * {role, content [{type text}], tool_plan, tool_calls, citations}, usage {billed_units, tokens}}; streams as
 * SSE events named by their type (message-start ... message-end), each data also carrying `type`.
 */
import assert from 'node:assert/strict';
import type { ScriptedAnswer, WireSummary, WireTurn } from '../fixtures.ts';
import type { FamilyWire, RecordedUpstreamRequest } from '../kit.ts';

type Part = { type: string; text?: string };
type Message = { role: string; content?: string | Part[]; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string };

const textOf = (content: Message['content']): string =>
  typeof content === 'string' ? content : (content ?? []).filter((p) => p.type === 'text').map((p) => p.text ?? '').join('');

export function summarizeCohereBody(body: any): WireSummary {
  const messages = (body.messages ?? []) as Message[];
  const system = messages.filter((m) => m.role === 'system').map((m) => textOf(m.content));
  const turns = messages.filter((m) => m.role !== 'system').map((m) => {
    const turn: WireTurn = { role: m.role as WireTurn['role'], text: textOf(m.content) };
    if (m.tool_calls) turn.toolCalls = m.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: JSON.parse(c.function.arguments) as unknown }));
    if (m.tool_call_id) turn.toolCallId = m.tool_call_id;
    const images = Array.isArray(m.content) ? m.content.filter((p) => p.type === 'image_url').length : 0;
    if (images > 0) turn.images = images;
    return turn;
  });
  const tools = ((body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);
  // Cohere's default is auto; REQUIRED with a single tool offered is a forced call of that tool.
  const choice = body.tool_choice === undefined ? (tools.length > 0 ? 'auto' : null)
    : body.tool_choice === 'NONE' ? 'none'
    : tools.length === 1 ? tools[0]! : 'required';
  return {
    model: body.model,
    stream: body.stream === true,
    system: system.length > 0 ? system.join('\n') : null,
    turns,
    tools,
    toolChoice: choice,
    maxTokens: body.max_tokens ?? null,
    temperature: body.temperature ?? null,
    stop: body.stop_sequences ?? [],
    jsonSchema: null, // Cohere's json_object format carries the schema without its name
  };
}

const FINISH = { stop: 'COMPLETE', length: 'MAX_TOKENS', tool_calls: 'TOOL_CALL' } as const;
const ID = 'c0ffee00-cohere-conformance';
const TOOL_PLAN = 'I will look that up with the tools.';

/** billed_units are what the gateway reports; tokens (the model's own count, template included) are larger. */
export function cohereUsage(answer: ScriptedAnswer) {
  return {
    billed_units: { input_tokens: answer.usage.prompt, output_tokens: answer.usage.completion },
    tokens: { input_tokens: answer.usage.prompt + 180, output_tokens: answer.usage.completion + 2 },
  };
}

export function cohereAnswer(answer: ScriptedAnswer) {
  const calls = answer.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  return {
    id: ID,
    finish_reason: FINISH[answer.finish],
    message: {
      role: 'assistant',
      ...(answer.text !== '' ? { content: [{ type: 'text', text: answer.text }] } : {}),
      ...(calls.length > 0 ? { tool_plan: TOOL_PLAN, tool_calls: calls } : {}),
      citations: [],
    },
    usage: cohereUsage(answer),
  };
}

const pieces = (text: string, size: number) => text.match(new RegExp(`.{1,${size}}`, 'gs')) ?? [];

/** The events Cohere streams for an answer, each as `event: <type>` plus its JSON data. */
export function cohereStreamEvents(answer: ScriptedAnswer): string[] {
  const events: Array<Record<string, unknown>> = [
    { id: ID, type: 'message-start', delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } },
  ];
  if (answer.text !== '') {
    events.push({ type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } });
    for (const text of pieces(answer.text, 5)) events.push({ type: 'content-delta', index: 0, delta: { message: { content: { text } } } });
    events.push({ type: 'content-end', index: 0 });
  }
  if (answer.toolCalls.length > 0) {
    for (const tool_plan of pieces(TOOL_PLAN, 6)) events.push({ type: 'tool-plan-delta', delta: { message: { tool_plan } } });
  }
  answer.toolCalls.forEach((call, index) => {
    events.push({ type: 'tool-call-start', index, delta: { message: { tool_calls: { id: call.id, type: 'function', function: { name: call.name, arguments: '' } } } } });
    for (const args of pieces(call.arguments, 4)) events.push({ type: 'tool-call-delta', index, delta: { message: { tool_calls: { function: { arguments: args } } } } });
    events.push({ type: 'tool-call-end', index });
  });
  events.push({ type: 'message-end', delta: { finish_reason: FINISH[answer.finish], usage: cohereUsage(answer) } });
  return events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`);
}

export const cohereWire: FamilyWire = {
  summarize: (req: RecordedUpstreamRequest) => summarizeCohereBody(req.json),
  isStream: (req) => req.json?.stream === true,
  answerJson: (answer) => ({ body: JSON.stringify(cohereAnswer(answer)) }),
  answerStream: (answer) => ({
    headers: { 'content-type': 'text/event-stream' },
    body: new TextEncoder().encode(cohereStreamEvents(answer).join('')),
  }),
  errorBody: (status, message) => ({ body: JSON.stringify({ id: `err-${status}`, message }) }),
  assertAuth: (req, credential) => {
    assert.equal(req.url, '/v2/chat');
    assert.equal(req.headers.authorization, `Bearer ${credential}`);
  },
};

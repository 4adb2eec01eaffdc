/**
 * The generateContent wire (Gemini API and Vertex AI's Gemini models): the model and the streaming choice
 * are in the URL (`models/{model}:generateContent`, `:streamGenerateContent?alt=sse`), the body is a
 * GenerateContentRequest, answers are GenerateContentResponse objects, streamed one per SSE event.
 */
import assert from 'node:assert/strict';
import type { ScriptedAnswer, WireSummary, WireTurn } from '../fixtures.ts';
import type { FamilyWire, RecordedUpstreamRequest } from '../kit.ts';

type Part = Record<string, any>;
type Content = { role: string; parts: Part[] };

const partsText = (parts: Part[]) => parts.filter((p) => typeof p.text === 'string' && !p.thought).map((p) => p.text as string).join('');

function turnsOf(contents: Content[]): WireTurn[] {
  const turns: WireTurn[] = [];
  for (const content of contents) {
    if (content.role === 'model') {
      const turn: WireTurn = { role: 'assistant', text: partsText(content.parts) };
      const calls = content.parts.filter((p) => p.functionCall);
      if (calls.length > 0) turn.toolCalls = calls.map((p) => ({ name: p.functionCall.name, arguments: p.functionCall.args }));
      turns.push(turn);
      continue;
    }
    // Tool results travel in user turns, as functionResponse parts; Gemini identifies the call by name.
    for (const part of content.parts.filter((p) => p.functionResponse)) {
      const response = part.functionResponse.response;
      const keys = Object.keys(response ?? {});
      const wrapped = keys.length === 1 && keys[0] === 'content';
      const value = wrapped ? response.content : response;
      turns.push({ role: 'tool', text: typeof value === 'string' ? value : JSON.stringify(value), toolCallId: part.functionResponse.name });
    }
    const rest = content.parts.filter((p) => !p.functionResponse);
    if (rest.length === 0) continue;
    const turn: WireTurn = { role: 'user', text: partsText(rest) };
    const images = rest.filter((p) => p.inlineData || p.fileData).length;
    if (images > 0) turn.images = images;
    turns.push(turn);
  }
  return turns;
}

function toolChoiceOf(config: any): string | null {
  const calling = config?.functionCallingConfig;
  if (!calling) return null;
  if (calling.mode === 'ANY') return calling.allowedFunctionNames?.length === 1 ? calling.allowedFunctionNames[0] : 'required';
  return String(calling.mode).toLowerCase();
}

export function modelInUrl(url: string): string {
  return /models\/([^/:?]+):/.exec(url)?.[1] ?? '';
}

export function summarizeGemini(req: RecordedUpstreamRequest): WireSummary {
  const body = req.json ?? {};
  const generation = body.generationConfig ?? {};
  const system = body.systemInstruction ? (body.systemInstruction.parts as Part[]).map((p) => p.text).join('\n') : null;
  return {
    model: modelInUrl(req.url),
    stream: req.url.includes(':streamGenerateContent'),
    system,
    turns: turnsOf(body.contents ?? []),
    tools: (body.tools ?? []).flatMap((t: any) => (t.functionDeclarations ?? []).map((f: { name: string }) => f.name)),
    toolChoice: toolChoiceOf(body.toolConfig),
    maxTokens: generation.maxOutputTokens ?? null,
    temperature: generation.temperature ?? null,
    stop: generation.stopSequences ?? [],
    jsonSchema: generation.responseMimeType === 'application/json' && generation.responseJsonSchema ? generation.responseJsonSchema.title ?? '' : null,
  };
}

const FINISH = { stop: 'STOP', tool_calls: 'STOP', length: 'MAX_TOKENS' } as const;

function usageMetadata(answer: ScriptedAnswer) {
  return { promptTokenCount: answer.usage.prompt, candidatesTokenCount: answer.usage.completion, totalTokenCount: answer.usage.prompt + answer.usage.completion };
}

const callPart = (call: ScriptedAnswer['toolCalls'][number]) => ({ functionCall: { name: call.name, args: JSON.parse(call.arguments) } });

export function geminiResponse(answer: ScriptedAnswer, model: string) {
  const parts: Part[] = [];
  if (answer.text) parts.push({ text: answer.text });
  parts.push(...answer.toolCalls.map(callPart));
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: FINISH[answer.finish], index: 0 }],
    usageMetadata: usageMetadata(answer),
    modelVersion: model,
    responseId: 'gemini-conformance',
  };
}

/** The events Gemini streams: text in pieces, function calls whole, the finish and full usage in the last. */
export function geminiStreamEvents(answer: ScriptedAnswer, model: string): string[] {
  const base = { modelVersion: model, responseId: 'gemini-conformance' };
  const partial = { promptTokenCount: answer.usage.prompt, totalTokenCount: answer.usage.prompt };
  const events: unknown[] = [];
  for (const piece of answer.text.match(/.{1,6}/gs) ?? []) {
    events.push({ candidates: [{ content: { role: 'model', parts: [{ text: piece }] }, index: 0 }], usageMetadata: partial, ...base });
  }
  for (const call of answer.toolCalls) {
    events.push({ candidates: [{ content: { role: 'model', parts: [callPart(call)] }, index: 0 }], usageMetadata: partial, ...base });
  }
  events.push({ candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: FINISH[answer.finish], index: 0 }], usageMetadata: usageMetadata(answer), ...base });
  return events.map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`);
}

const STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE' };

export function geminiWire(assertAuth: FamilyWire['assertAuth']): FamilyWire {
  return {
    summarize: summarizeGemini,
    isStream: (req) => req.url.includes(':streamGenerateContent'),
    answerJson: (answer, req) => ({ body: JSON.stringify(geminiResponse(answer, modelInUrl(req.url) || 'model')) }),
    answerStream: (answer, req) => ({
      headers: { 'content-type': 'text/event-stream' },
      body: new TextEncoder().encode(geminiStreamEvents(answer, modelInUrl(req.url) || 'model').join('')),
    }),
    errorBody: (status, message) => ({ body: JSON.stringify({ error: { code: status, message, status: STATUS[status] ?? 'UNKNOWN' } }) }),
    assertAuth,
  };
}

export const geminiApiWire = geminiWire((req, credential) => {
  assert.equal(req.headers['x-goog-api-key'], credential);
  assert.equal(req.headers.authorization, undefined, 'no bearer credential besides the API key');
  assert.ok(!req.url.includes('key='), 'the key is not in the URL');
});

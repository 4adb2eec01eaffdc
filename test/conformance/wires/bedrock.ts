/**
 * The Bedrock Converse wire: POST /model/{modelId}/converse answers JSON; /converse-stream answers
 * application/vnd.amazon.eventstream frames (each event's members as JSON, with AWS's "p" padding field);
 * errors are {message} with the type in x-amzn-errortype. The fake checks every request's credential as
 * AWS would: it recomputes the SigV4 signature over the bytes it received (its own implementation, not the
 * gateway's), or compares the Bedrock API key.
 */
import assert from 'node:assert/strict';
import { createHash, createHmac, randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { encodeEventStreamMessage } from '../../../core/streaming/aws-eventstream.ts';
import { JSON_TOOL_DESCRIPTION } from '../../../providers/bedrock/request.ts';
import type { ScriptedAnswer, WireSummary, WireTurn } from '../fixtures.ts';
import type { FamilyWire, RecordedUpstreamRequest } from '../kit.ts';

export type BedrockAuth =
  | { kind: 'sigv4'; accessKeyId: string; secretAccessKey: string; sessionToken?: string; region: string }
  | { kind: 'apiKey'; apiKey: string };

const PATH = /^(.*)\/model\/([^/?]+)\/(converse|converse-stream)$/;

// --- SigV4, as the service checks it ------------------------------------------------------------------

const hex = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');
const mac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
const strict = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Why the request's signature is not valid for these credentials, or null when it is. */
export function sigv4Problem(req: RecordedUpstreamRequest, auth: Extract<BedrockAuth, { kind: 'sigv4' }>, now = Date.now()): string | null {
  const header = String(req.headers.authorization ?? '');
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(header);
  if (!m) return `malformed Authorization: ${header}`;
  const [, keyId, day, region, service, signedHeaders, signature] = m as unknown as string[];
  if (keyId !== auth.accessKeyId) return `unknown access key ${keyId}`;
  if (region !== auth.region || service !== 'bedrock') return `scope ${region}/${service} is not ${auth.region}/bedrock`;
  const stamp = String(req.headers['x-amz-date'] ?? '');
  if (!/^\d{8}T\d{6}Z$/.test(stamp) || stamp.slice(0, 8) !== day) return `x-amz-date ${stamp} does not match the scope ${day}`;
  const signedAt = Date.UTC(+stamp.slice(0, 4), +stamp.slice(4, 6) - 1, +stamp.slice(6, 8), +stamp.slice(9, 11), +stamp.slice(11, 13), +stamp.slice(13, 15));
  if (Math.abs(now - signedAt) > 5 * 60_000) return 'signed more than 5 minutes away from now';
  const names = signedHeaders!.split(';');
  for (const required of ['host', 'x-amz-date', ...(auth.sessionToken ? ['x-amz-security-token'] : [])]) {
    if (!names.includes(required)) return `${required} is not signed`;
  }
  if (auth.sessionToken && req.headers['x-amz-security-token'] !== auth.sessionToken) return 'wrong session token';
  const [path, query = ''] = req.url.split('?') as [string, string?];
  const canonical = [
    req.method,
    path.split('/').map(strict).join('/'),
    query.split('&').filter(Boolean).sort().join('&'),
    names.map((n) => `${n}:${[req.headers[n] ?? ''].flat().join(',').trim().replace(/\s+/g, ' ')}\n`).join(''),
    signedHeaders,
    hex(req.rawBody),
  ].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const key = mac(mac(mac(mac(`AWS4${auth.secretAccessKey}`, day!), region!), service!), 'aws4_request');
  const expected = createHmac('sha256', key).update(['AWS4-HMAC-SHA256', stamp, scope, hex(canonical)].join('\n'), 'utf8').digest('hex');
  return expected === signature ? null : `signature mismatch; canonical request was:\n${canonical}`;
}

// --- requests -----------------------------------------------------------------------------------------

type Block = { text?: string; image?: unknown; toolUse?: { toolUseId: string; name: string; input: unknown }; toolResult?: { toolUseId: string; content: Array<{ text?: string; json?: unknown }> } };

/** The JSON-answer tool the gateway adds to emulate response_format (see providers/bedrock/request.ts). */
function jsonTool(body: any): string | null {
  const spec = (body?.toolConfig?.tools ?? []).find((t: any) => String(t.toolSpec?.description ?? '').startsWith(JSON_TOOL_DESCRIPTION));
  return spec ? spec.toolSpec.name as string : null;
}

function summarize(req: RecordedUpstreamRequest): WireSummary {
  const body = req.json ?? {};
  const match = PATH.exec(req.url);
  const json = jsonTool(body);
  const turns: WireTurn[] = [];
  for (const message of (body.messages ?? []) as Array<{ role: 'user' | 'assistant'; content: Block[] }>) {
    // A user turn carries tool results first: each is a `tool` turn of the family-neutral summary.
    for (const block of message.content.filter((b) => b.toolResult)) {
      const text = block.toolResult!.content.map((c) => c.text ?? JSON.stringify(c.json)).join('');
      turns.push({ role: 'tool', text, toolCallId: block.toolResult!.toolUseId });
    }
    const rest = message.content.filter((b) => !b.toolResult);
    if (rest.length === 0) continue;
    const turn: WireTurn = { role: message.role, text: rest.map((b) => b.text ?? '').join('') };
    const calls = rest.filter((b) => b.toolUse).map((b) => ({ id: b.toolUse!.toolUseId, name: b.toolUse!.name, arguments: b.toolUse!.input }));
    if (calls.length > 0) turn.toolCalls = calls;
    const images = rest.filter((b) => b.image).length;
    if (images > 0) turn.images = images;
    turns.push(turn);
  }
  const choice = body.toolConfig?.toolChoice;
  const tools = ((body.toolConfig?.tools ?? []) as Array<{ toolSpec: { name: string } }>).map((t) => t.toolSpec.name).filter((n) => n !== json);
  return {
    model: match ? decodeURIComponent(match[2]!) : '',
    stream: match?.[3] === 'converse-stream',
    system: body.system ? (body.system as Array<{ text: string }>).map((s) => s.text).join('\n') : null,
    turns,
    tools,
    toolChoice: !choice ? null : choice.auto ? 'auto' : choice.any ? 'required' : choice.tool.name === json ? null : choice.tool.name,
    maxTokens: body.inferenceConfig?.maxTokens ?? null,
    temperature: body.inferenceConfig?.temperature ?? null,
    stop: body.inferenceConfig?.stopSequences ?? [],
    jsonSchema: json,
  };
}

// --- answers ------------------------------------------------------------------------------------------

const STOP = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use' } as const;

/** The answer as content blocks; asked for JSON through the forced tool, the model answers by calling it. */
function blocks(answer: ScriptedAnswer, req: RecordedUpstreamRequest): { content: Block[]; stopReason: string } {
  const json = jsonTool(req.json);
  if (json && answer.toolCalls.length === 0) {
    return { content: [{ toolUse: { toolUseId: 'tooluse_json01', name: json, input: JSON.parse(answer.text) } }], stopReason: 'tool_use' };
  }
  const content: Block[] = answer.text ? [{ text: answer.text }] : [];
  for (const call of answer.toolCalls) content.push({ toolUse: { toolUseId: call.id, name: call.name, input: JSON.parse(call.arguments) } });
  return { content, stopReason: STOP[answer.finish] };
}

const usage = (answer: ScriptedAnswer) => ({ inputTokens: answer.usage.prompt, outputTokens: answer.usage.completion, totalTokens: answer.usage.prompt + answer.usage.completion });

/** AWS pads every event with "p" so that sizes do not reveal the content. */
const padded = (members: Record<string, unknown>, n: number) => JSON.stringify({ ...members, p: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0'.slice(0, 1 + (n * 7) % 40) });

export function bedrockEvent(type: string, payload: string): Uint8Array {
  return encodeEventStreamMessage({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, payload);
}

export function bedrockException(type: string, message: string): Uint8Array {
  return encodeEventStreamMessage({ ':exception-type': type, ':content-type': 'application/json', ':message-type': 'exception' }, JSON.stringify({ message }));
}

/** The frames ConverseStream sends for an answer: text in pieces, tool input JSON in fragments, usage last. */
export function bedrockStreamFrames(answer: ScriptedAnswer, req: RecordedUpstreamRequest): Uint8Array[] {
  const { content, stopReason } = blocks(answer, req);
  const frames = [bedrockEvent('messageStart', padded({ role: 'assistant' }, 0))];
  content.forEach((block, index) => {
    if (block.text !== undefined) {
      for (const piece of block.text.match(/.{1,5}/gs) ?? []) frames.push(bedrockEvent('contentBlockDelta', padded({ contentBlockIndex: index, delta: { text: piece } }, frames.length)));
    } else if (block.toolUse) {
      const { toolUseId, name, input } = block.toolUse;
      frames.push(bedrockEvent('contentBlockStart', padded({ contentBlockIndex: index, start: { toolUse: { toolUseId, name } } }, frames.length)));
      for (const piece of JSON.stringify(input).match(/.{1,4}/gs) ?? []) {
        frames.push(bedrockEvent('contentBlockDelta', padded({ contentBlockIndex: index, delta: { toolUse: { input: piece } } }, frames.length)));
      }
    }
    frames.push(bedrockEvent('contentBlockStop', padded({ contentBlockIndex: index }, frames.length)));
  });
  frames.push(bedrockEvent('messageStop', padded({ stopReason }, frames.length)));
  frames.push(bedrockEvent('metadata', padded({ usage: usage(answer), metrics: { latencyMs: 321 } }, frames.length)));
  return frames;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'ValidationException', 401: 'UnrecognizedClientException', 403: 'AccessDeniedException', 404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException', 424: 'ModelErrorException', 429: 'ThrottlingException', 500: 'InternalServerException', 503: 'ServiceUnavailableException',
};

export function bedrockErrorBody(status: number, message: string): { headers: Record<string, string>; body: string } {
  return { headers: { 'x-amzn-errortype': `${ERROR_TYPES[status] ?? 'InternalServerException'}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': randomUUID() }, body: JSON.stringify({ message }) };
}

// --- the wire -----------------------------------------------------------------------------------------

export interface BedrockWire extends FamilyWire {
  /** Why the request's credential would be refused, or null. */
  authProblem(req: RecordedUpstreamRequest): string | null;
  /** Every refusal so far (a test asserts there were none). */
  refused: string[];
  /** For the kit's extraRoutes: answers a request with a bad credential as AWS does (403), and records why. */
  refuse(req: RecordedUpstreamRequest, res: ServerResponse): boolean;
}

export function bedrockWire(auth: BedrockAuth): BedrockWire {
  const wire: BedrockWire = {
    refused: [],
    authProblem(req) {
      const leaked = Object.values(req.headers).flat().some((v) => String(v).includes('aigw_sk_'));
      if (leaked) return "the caller's gateway key reached the upstream";
      if (auth.kind === 'sigv4') return sigv4Problem(req, auth);
      if (req.headers.authorization !== `Bearer ${auth.apiKey}`) return `Authorization is ${String(req.headers.authorization)}`;
      if (req.headers['x-amz-date'] || req.headers['x-amz-security-token']) return 'an API-key request was also signed';
      return null;
    },
    refuse(req, res) {
      const problem = wire.authProblem(req);
      if (!problem) return false;
      wire.refused.push(`${req.method} ${req.url}: ${problem}`);
      const error = bedrockErrorBody(403, 'The request signature we calculated does not match the signature you provided.');
      res.writeHead(403, { 'content-type': 'application/json', ...error.headers, 'x-amzn-errortype': 'InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/' });
      res.end(error.body);
      return true;
    },
    summarize,
    isStream: (req) => PATH.exec(req.url)?.[3] === 'converse-stream',
    answerJson(answer, req) {
      const { content, stopReason } = blocks(answer, req);
      return {
        headers: { 'x-amzn-requestid': randomUUID() },
        body: JSON.stringify({ output: { message: { role: 'assistant', content } }, stopReason, usage: usage(answer), metrics: { latencyMs: 321 } }),
      };
    },
    answerStream(answer, req) {
      const frames = bedrockStreamFrames(answer, req);
      const body = new Uint8Array(frames.reduce((n, f) => n + f.length, 0));
      frames.reduce((at, f) => (body.set(f, at), at + f.length), 0);
      return { headers: { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': randomUUID() }, body };
    },
    errorBody: bedrockErrorBody,
    assertAuth(req, credential) {
      assert.equal(wire.authProblem(req), null);
      if (auth.kind === 'sigv4') assert.match(String(req.headers.authorization), new RegExp(`Credential=${credential}/`));
      else assert.equal(req.headers.authorization, `Bearer ${credential}`);
    },
  };
  return wire;
}

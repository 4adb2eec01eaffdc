/**
 * The conformance fixtures every chat translator runs: a canonical request, the answer the fake upstream is
 * scripted to give (in its own wire format), and what the upstream must have been sent, family-neutrally.
 */
import type { ChatCompletionRequest } from '../../core/canonical/chat.ts';

export interface ScriptedToolCall {
  id: string;
  name: string;
  /** JSON text. */
  arguments: string;
}

/** What the fake upstream answers, before its family writes it in its wire format. */
export interface ScriptedAnswer {
  text: string;
  toolCalls: ScriptedToolCall[];
  finish: 'stop' | 'length' | 'tool_calls';
  usage: { prompt: number; completion: number };
}

/** One turn of the request as the upstream saw it, whatever its format. */
export interface WireTurn {
  role: 'user' | 'assistant' | 'tool';
  text: string;
  toolCalls?: Array<{ id?: string; name: string; arguments: unknown }>;
  /** For tool turns: the id (or, for families without ids, the name) of the call answered. */
  toolCallId?: string;
  images?: number;
}

/** The request as the upstream saw it, reduced to what every family can say. */
export interface WireSummary {
  model: string;
  stream: boolean;
  system: string | null;
  turns: WireTurn[];
  tools: string[];
  /** auto | none | required | the forced function's name; null when not sent. */
  toolChoice: string | null;
  maxTokens: number | null;
  temperature: number | null;
  stop: string[];
  /** The JSON schema's name when a json_schema response format was asked for. */
  jsonSchema: string | null;
}

export interface Fixture {
  name: string;
  request: Omit<ChatCompletionRequest, 'model'>;
  answer: ScriptedAnswer;
  /** Fields of the summary this fixture checks, with their expected values. */
  expect: Partial<WireSummary>;
  /** Also run it streaming. */
  stream: boolean;
}

const usage = { prompt: 21, completion: 7 };
const hello: ScriptedAnswer = { text: 'Hello there, friend.', toolCalls: [], finish: 'stop', usage };
const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};
const timeTool = {
  type: 'function' as const,
  function: { name: 'get_time', description: 'Local time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } },
};
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

export const FIXTURES: Fixture[] = [
  {
    name: 'plain text',
    request: { messages: [{ role: 'user', content: 'Say hello' }] },
    answer: hello,
    expect: { system: null, turns: [{ role: 'user', text: 'Say hello' }] },
    stream: true,
  },
  {
    name: 'system prompt',
    request: { messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Say hello' }] },
    answer: hello,
    expect: { system: 'You are terse.', turns: [{ role: 'user', text: 'Say hello' }] },
    stream: false,
  },
  {
    name: 'multi-turn',
    request: {
      messages: [
        { role: 'user', content: 'My name is Ada.' },
        { role: 'assistant', content: 'Nice to meet you, Ada.' },
        { role: 'user', content: 'What is my name?' },
      ],
    },
    answer: { ...hello, text: 'Your name is Ada.' },
    expect: {
      turns: [
        { role: 'user', text: 'My name is Ada.' },
        { role: 'assistant', text: 'Nice to meet you, Ada.' },
        { role: 'user', text: 'What is my name?' },
      ],
    },
    stream: false,
  },
  {
    name: 'a tool call',
    request: { messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weatherTool], tool_choice: 'auto' },
    answer: { text: '', toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: '{"location":"Paris"}' }], finish: 'tool_calls', usage },
    expect: { tools: ['get_weather'], toolChoice: 'auto' },
    stream: true,
  },
  {
    name: 'parallel tool calls',
    request: { messages: [{ role: 'user', content: 'Weather and time in Paris?' }], tools: [weatherTool, timeTool], tool_choice: 'required' },
    answer: {
      text: '',
      toolCalls: [
        { id: 'call_w1', name: 'get_weather', arguments: '{"location":"Paris"}' },
        { id: 'call_t1', name: 'get_time', arguments: '{"zone":"Europe/Paris"}' },
      ],
      finish: 'tool_calls',
      usage,
    },
    expect: { tools: ['get_weather', 'get_time'], toolChoice: 'required' },
    stream: true,
  },
  {
    name: 'a named tool choice',
    request: { messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools: [weatherTool, timeTool], tool_choice: { type: 'function', function: { name: 'get_weather' } } },
    answer: { text: '', toolCalls: [{ id: 'call_w2', name: 'get_weather', arguments: '{"location":"Oslo"}' }], finish: 'tool_calls', usage },
    expect: { toolChoice: 'get_weather' },
    stream: false,
  },
  {
    name: 'a tool result turn',
    request: {
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_w1', content: '{"temp":21}' },
      ],
      tools: [weatherTool],
    },
    answer: { ...hello, text: 'It is 21 degrees in Paris.' },
    expect: {
      turns: [
        { role: 'user', text: 'Weather in Paris?' },
        { role: 'assistant', text: '', toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: { location: 'Paris' } }] },
        { role: 'tool', text: '{"temp":21}', toolCallId: 'call_w1' },
      ],
    },
    stream: false,
  },
  {
    name: 'an image',
    request: {
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL}` } }] }],
    },
    answer: { ...hello, text: 'A single pixel.' },
    expect: { turns: [{ role: 'user', text: 'What is this?', images: 1 }] },
    stream: false,
  },
  {
    name: 'a json_schema response format',
    request: {
      messages: [{ role: 'user', content: 'Give me a number as JSON.' }],
      response_format: { type: 'json_schema', json_schema: { name: 'number_answer', schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } } },
    },
    answer: { ...hello, text: '{"n":42}' },
    expect: { jsonSchema: 'number_answer' },
    stream: false,
  },
  {
    name: 'stop, max_tokens and temperature',
    request: { messages: [{ role: 'user', content: 'Count to ten.' }], stop: ['seven'], max_tokens: 50, temperature: 0.2 },
    answer: { text: 'one two three four five six', toolCalls: [], finish: 'length', usage },
    expect: { stop: ['seven'], maxTokens: 50, temperature: 0.2 },
    stream: true,
  },
];

/** Upstream failures and the answer the caller must get for each. */
export const ERROR_CASES: Array<{ status: number; expectStatus: number; expectCode: string }> = [
  { status: 400, expectStatus: 400, expectCode: 'UPSTREAM_BAD_REQUEST' },
  { status: 401, expectStatus: 502, expectCode: 'UPSTREAM_ERROR' },
  { status: 429, expectStatus: 429, expectCode: 'UPSTREAM_RATE_LIMITED' },
  { status: 500, expectStatus: 502, expectCode: 'UPSTREAM_ERROR' },
];

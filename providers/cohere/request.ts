/** Canonical request -> Cohere v2 /v2/chat body. */
import type { ChatCompletionRequest, ChatMessage, FunctionTool } from '../../core/canonical/chat.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';

type Part = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: string } };

function parts(content: ChatMessage['content']): string | Part[] {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  return content.map((p): Part => {
    if (p.type === 'text') return { type: 'text', text: p.text };
    // The dispatcher refuses file parts for a provider that does not declare chat.files; this is its backstop.
    if (p.type === 'file') throw new GatewayError('CAPABILITY_NOT_SUPPORTED', 'Provider cohere does not support file inputs', { provider: 'cohere', capability: 'files' });
    return { type: 'image_url', image_url: { url: p.image_url.url, ...(p.image_url.detail ? { detail: p.image_url.detail } : {}) } };
  });
}

/** System, assistant and tool turns take text only: their parts are joined. */
function text(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('');
}

function message(m: ChatMessage): Record<string, unknown> {
  switch (m.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: text(m.content) };
    case 'assistant': {
      const out: Record<string, unknown> = { role: 'assistant' };
      const said = text(m.content);
      // Cohere refuses an empty content string beside tool calls: the key is left out instead.
      if (said !== '' || !m.tool_calls?.length) out.content = said;
      if (m.tool_calls?.length) {
        out.tool_calls = m.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments } }));
      }
      return out;
    }
    case 'tool':
      return { role: 'tool', tool_call_id: m.tool_call_id ?? '', content: text(m.content) };
    default:
      return { role: 'user', content: parts(m.content) };
  }
}

function toolsAndChoice(request: ChatCompletionRequest, body: Record<string, unknown>): void {
  let tools = (request.tools ?? []).filter((t): t is FunctionTool => t.type === 'function');
  const choice = request.tool_choice as string | { type?: string; function?: { name?: string } } | undefined;
  if (choice === 'none') body.tool_choice = 'NONE';
  else if (choice === 'required') body.tool_choice = 'REQUIRED';
  else if (typeof choice === 'object' && choice?.function?.name) {
    // Cohere cannot name a tool; offering only that one and requiring a call says the same.
    const named = choice.function.name;
    tools = tools.filter((t) => t.function.name === named);
    if (tools.length === 0) {
      throw new GatewayError('VALIDATION_ERROR', `tool_choice names the function "${named}", which is not among tools`, [{ path: '/tool_choice', message: `no function "${named}" in tools` }]);
    }
    body.tool_choice = 'REQUIRED';
  }
  // 'auto' is Cohere's default: nothing to send. REQUIRED and NONE mean nothing without tools.
  if (tools.length === 0) delete body.tool_choice;
  else {
    body.tools = tools.map((t) => ({
      type: 'function',
      function: {
        name: t.function.name,
        ...(t.function.description !== undefined ? { description: t.function.description } : {}),
        parameters: t.function.parameters ?? { type: 'object', properties: {} },
      },
    }));
  }
}

/** reasoning_effort / reasoning -> Cohere's `thinking`: a token budget, or on and off (no effort levels). */
function thinking(request: ChatCompletionRequest): Record<string, unknown> | undefined {
  const budget = request.reasoning?.budget_tokens;
  if (budget !== undefined) return { type: 'enabled', token_budget: budget };
  const effort = request.reasoning_effort ?? request.reasoning?.effort;
  if (effort === undefined) return undefined;
  return { type: effort === 'minimal' ? 'disabled' : 'enabled' };
}

export function cohereBody(request: ChatCompletionRequest, target: ProviderTarget, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: target.upstreamModel,
    messages: request.messages.map(message),
    stream,
  };
  toolsAndChoice(request, body);
  const format = request.response_format;
  if (format?.type === 'json_object') body.response_format = { type: 'json_object' };
  if (format?.type === 'json_schema') {
    const schema = (format.json_schema as { schema?: unknown } | undefined)?.schema;
    body.response_format = { type: 'json_object', ...(schema ? { json_schema: schema } : {}) };
  }
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (maxTokens !== undefined) body.max_tokens = maxTokens;
  if (request.stop !== undefined) body.stop_sequences = typeof request.stop === 'string' ? [request.stop] : request.stop;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.top_p !== undefined) body.p = request.top_p;
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.frequency_penalty !== undefined) body.frequency_penalty = request.frequency_penalty;
  if (request.presence_penalty !== undefined) body.presence_penalty = request.presence_penalty;
  if (request.logprobs !== undefined) body.logprobs = request.logprobs;
  const think = thinking(request);
  if (think) body.thinking = think;
  const { safetyMode } = target.options as { safetyMode?: string };
  if (safetyMode) body.safety_mode = safetyMode;
  return body;
}

export function cohereHeaders(target: ProviderTarget, stream: boolean): Record<string, string> {
  const headers: Record<string, string> = {
    ...target.headers,
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
  };
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  const { clientName } = target.options as { clientName?: string };
  if (clientName) headers['x-client-name'] = clientName;
  return headers;
}

/**
 * An aigw provider in a package of its own: `example-compat` translates chat completions for a server that
 * speaks OpenAI's wire format at POST {baseUrl}/chat/completions with a bearer key (a local vLLM, llama.cpp or
 * Ollama server, say). Plain JavaScript: Node loads it as it is, in a compiled gateway or from source.
 */
import { defineProvider, upstreamStatusError } from 'aigw/provider';

const SLUG = 'example-compat';
const malformed = (what) => upstreamStatusError(SLUG, 502, `returned a malformed ${what}`);

export default defineProvider({
  slug: SLUG,
  family: SLUG,
  displayName: 'Example OpenAI-compatible server',
  defaultBaseUrl: 'http://127.0.0.1:8000/v1',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      organization: { type: 'string', description: 'Sent as OpenAI-Organization, for servers that bill by it.' },
    },
  },
  capabilities: { chat: { stream: true, tools: true, vision: true, n: false } },
  chat: {
    toUpstream(request, target, stream) {
      // Fields of the canonical request that such servers do not take.
      const { reasoning: _reasoning, cache_control: _cache, stream_options: _options, ...rest } = request;
      const headers = { 'content-type': 'application/json' };
      if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
      if (target.options.organization) headers['openai-organization'] = target.options.organization;
      const body = { ...rest, model: target.upstreamModel, stream };
      // Usage is asked for on streams too, so that budgets and usage records get the real counts.
      if (stream) body.stream_options = { include_usage: true };
      return { method: 'POST', path: '/chat/completions', headers, body: JSON.stringify(body) };
    },
    fromUpstream(body) {
      if (!body || typeof body !== 'object' || !Array.isArray(body.choices)) throw malformed('completion');
      return body;
    },
    streamFormat: 'sse',
    streamDecoder() {
      return {
        event(event) {
          if (event.data === '[DONE]') return { chunks: [], done: true };
          try {
            return { chunks: [JSON.parse(event.data)] };
          } catch {
            throw malformed('stream event');
          }
        },
        end: () => [],
      };
    },
  },
  mapError(status, body) {
    const message = typeof body?.error?.message === 'string' ? body.error.message : `HTTP ${status}`;
    return upstreamStatusError(SLUG, status, message, body?.error);
  },
});

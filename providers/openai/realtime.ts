/**
 * OpenAI's Realtime API over WebSocket: wss://api.openai.com/v1/realtime?model=<model>, the gateway's key as a
 * Bearer and `OpenAI-Beta: realtime=v1`. Settings are applied with a `session.update` client event. Tokens come
 * from `response.done` (response.usage input_tokens / output_tokens); audio travels base64 in
 * `input_audio_buffer.append` (audio) from the client and `response.audio.delta` (delta) from the provider.
 */
import type { ProviderTarget, RealtimeEventUsage, RealtimeHook, RealtimeSessionSettings } from '../../core/dispatch/provider.ts';
import { openaiHeaders } from './chat.ts';

function realtimeUrl(target: ProviderTarget): string {
  const url = new URL(`${target.baseUrl.replace(/\/+$/, '')}/realtime`);
  url.protocol = url.protocol === 'http:' ? 'ws:' : 'wss:';
  url.searchParams.set('model', target.upstreamModel);
  return url.href;
}

const record = (value: unknown): Record<string, unknown> | null =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;

export const openaiRealtime: RealtimeHook = {
  connect(target) {
    const headers = openaiHeaders(target);
    delete headers['content-type'];
    return { url: realtimeUrl(target), headers: { ...headers, 'openai-beta': 'realtime=v1' } };
  },
  sessionUpdate(settings: RealtimeSessionSettings) {
    const session: Record<string, unknown> = { modalities: settings.modalities };
    for (const field of ['voice', 'instructions', 'input_audio_format', 'output_audio_format', 'tools'] as const) {
      if (settings[field] !== undefined) session[field] = settings[field];
    }
    return { type: 'session.update', session };
  },
  count(event, from): RealtimeEventUsage | null {
    const e = record(event);
    if (!e) return null;
    if (from === 'client') {
      return e.type === 'input_audio_buffer.append' && typeof e.audio === 'string' ? { audio: e.audio } : null;
    }
    if (e.type === 'response.audio.delta' && typeof e.delta === 'string') return { audio: e.delta };
    if (e.type === 'response.done') {
      const usage = record(record(e.response)?.usage);
      if (!usage) return null;
      const inputTokens = count(usage.input_tokens);
      const outputTokens = count(usage.output_tokens);
      return { ...(inputTokens !== undefined ? { inputTokens } : {}), ...(outputTokens !== undefined ? { outputTokens } : {}) };
    }
    return null;
  },
};

/**
 * A prediction's output stream (urls.stream): SSE events `output` (data: the next piece of text, as is), `error`
 * (data: {detail}) and `done` (data: {} or {reason: canceled | error}). It carries no usage: the core estimates it.
 */
import type { ChatCompletionChunk } from '../../core/canonical/chat.ts';
import type { ChatStreamDecoder, ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';

function detailOf(data: string): string {
  try {
    const parsed = JSON.parse(data) as { detail?: unknown; error?: unknown };
    if (typeof parsed?.detail === 'string') return parsed.detail;
    if (typeof parsed?.error === 'string') return parsed.error;
  } catch {
    // a plain-text error
  }
  return data.slice(0, 500) || 'no detail given';
}

function reasonOf(data: string): unknown {
  try {
    return (JSON.parse(data || '{}') as { reason?: unknown } | null)?.reason;
  } catch {
    return undefined;
  }
}

export function replicateStreamDecoder(target: ProviderTarget): ChatStreamDecoder {
  const created = Math.floor(Date.now() / 1000);
  const id = `chatcmpl-${target.slug}-stream`;
  let started = false;
  let done = false;
  const chunk = (delta: ChatCompletionChunk['choices'][number]['delta'], finish: 'stop' | null = null): ChatCompletionChunk => ({
    id, object: 'chat.completion.chunk', created, model: target.upstreamModel, choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const fail = (message: string, upstreamError: unknown) =>
    new GatewayError('UPSTREAM_ERROR', `${target.slug}: ${message}`, { provider: target.slug, upstreamError });

  return {
    event(event) {
      switch (event.event) {
        case 'output': {
          if (event.data === '') return { chunks: [] };
          const delta = started ? { content: event.data } : { role: 'assistant' as const, content: event.data };
          started = true;
          return { chunks: [chunk(delta)] };
        }
        case 'error':
          throw fail(`the prediction failed while streaming: ${detailOf(event.data)}`, { event: 'error', data: event.data });
        case 'done': {
          const reason = reasonOf(event.data);
          if (reason === 'canceled' || reason === 'error') throw fail(`the prediction's stream ended with reason ${reason}`, { event: 'done', reason });
          done = true;
          return { chunks: [chunk(started ? {} : { role: 'assistant' }, 'stop')], done: true };
        }
        default:
          return { chunks: [] }; // other event kinds (logs, comments) are not the answer
      }
    },
    end() {
      if (!done) throw fail('the prediction\'s stream ended before its done event', null);
      return [];
    },
  };
}

/**
 * Text to speech in OpenAI's wire format (POST /audio/speech {model, input, voice, response_format, speed}): the
 * answer is the audio itself, which the core streams to the caller. `createOpenAiSpeech` is the family's one
 * translator: Azure passes hooks for its path and headers, the OpenAI-compatible hosts for their body.
 */
import type { SpeechRequest } from '../../core/canonical/audio.ts';
import type { ProviderTarget, SpeechTranslator } from '../../core/dispatch/provider.ts';
import { openaiHeaders } from './chat.ts';

export interface OpenAiSpeechHooks {
  /** The request path under the base URL, query included (default `/audio/speech`). */
  path?(target: ProviderTarget): string;
  /** The request headers, credential included (default: Bearer and OpenAI's organization/project). */
  headers?(target: ProviderTarget): Record<string, string>;
  /**
   * Reshapes the JSON body after OpenAI's fields are set (a host's own names and values); throws a
   * CAPABILITY_NOT_SUPPORTED refusal, before any I/O, for what the host cannot give.
   */
  body?(body: Record<string, unknown>, request: SpeechRequest, target: ProviderTarget): void;
}

export function createOpenAiSpeech(hooks: OpenAiSpeechHooks = {}): SpeechTranslator {
  return {
    toUpstream(request, target) {
      const body: Record<string, unknown> = { model: target.upstreamModel, input: request.input, voice: request.voice, response_format: request.response_format };
      if (request.speed !== undefined) body.speed = request.speed;
      hooks.body?.(body, request, target);
      const headers = { ...(hooks.headers?.(target) ?? openaiHeaders(target)), 'content-type': 'application/json' };
      return { method: 'POST', path: hooks.path?.(target) ?? '/audio/speech', headers, body: JSON.stringify(body) };
    },
  };
}

export const openaiSpeech = createOpenAiSpeech();

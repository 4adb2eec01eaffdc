/**
 * What every text-to-speech translator checks before any I/O: the asked format is one the provider can give,
 * and the asked speed is inside the range it documents. Anything else is refused (400 CAPABILITY_NOT_SUPPORTED)
 * rather than sent to fail upstream or silently changed, so the dispatcher may try the model's next target.
 */
import { SPEECH_FORMATS, type SpeechFormat, type SpeechRequest } from '../../core/canonical/audio.ts';
import type { ProviderTarget } from '../../core/dispatch/provider.ts';
import { GatewayError } from '../../core/errors.ts';

/** The formats a provider gives, each with what asks for it on its wire (body fields or query parameters). */
export type SpeechFormatTable<T> = Partial<Record<SpeechFormat, T>>;

/** The provider's way of asking for the request's format, or a refusal naming the format and those it has. */
export function speechFormat<T>(table: SpeechFormatTable<T>, request: SpeechRequest, target: ProviderTarget): T {
  const wire = table[request.response_format];
  if (wire !== undefined) return wire;
  const supported = SPEECH_FORMATS.filter((format) => table[format] !== undefined);
  throw new GatewayError('CAPABILITY_NOT_SUPPORTED',
    `Provider ${target.slug} does not support response_format ${request.response_format} for speech (it gives ${supported.join(', ')})`,
    { provider: target.slug, parameter: 'response_format', value: request.response_format, supported });
}

export interface SpeedRange {
  min: number;
  max: number;
}

/**
 * The speed to send: undefined when the caller left it out or asked 1, every provider's default (so a provider
 * without the setting, or with it in early access only, is not sent one). A speed outside `range` (none: the
 * provider has no speed) is refused.
 */
export function speechSpeed(range: SpeedRange | undefined, request: SpeechRequest, target: ProviderTarget): number | undefined {
  const { speed } = request;
  if (speed === undefined || speed === 1) return undefined;
  if (range && speed >= range.min && speed <= range.max) return speed;
  const why = range ? `speed from ${range.min} to ${range.max}` : 'no speed other than 1';
  throw new GatewayError('CAPABILITY_NOT_SUPPORTED', `Provider ${target.slug} takes ${why} for speech (got ${speed})`,
    { provider: target.slug, parameter: 'speed', value: speed, ...(range ? { range } : {}) });
}

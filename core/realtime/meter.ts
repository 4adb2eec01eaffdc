/**
 * A session's running usage: tokens from the provider's events (the provider hook reads them), seconds of audio
 * from the bytes of audio either side sent. pcm16 is 24 kHz mono 16-bit (48,000 bytes a second); G.711 u-law and
 * A-law are 8 kHz 8-bit (8,000 bytes a second).
 */
import type { RealtimeEventUsage, RealtimeHook } from '../dispatch/provider.ts';
import type { RealtimeSettings, RealtimeUsage } from '../store/realtime-sessions.ts';

const BYTES_PER_SECOND: Record<string, number> = { pcm16: 48_000, g711_ulaw: 8_000, g711_alaw: 8_000 };

/** Decoded length of base64 text, without decoding it. */
export function base64Bytes(text: string): number {
  let length = text.length;
  while (length > 0 && text[length - 1] === '=') length--;
  return Math.floor((length * 3) / 4);
}

export class SessionMeter {
  private inputTokens = 0;
  private outputTokens = 0;
  private audioBytes = { client: 0, provider: 0 };

  constructor(private readonly hook: RealtimeHook, private readonly settings: RealtimeSettings) {}

  /** A text frame: parsed when it is JSON, counted by the provider's hook. */
  text(frame: string, from: 'client' | 'provider'): void {
    let event: unknown;
    try {
      event = JSON.parse(frame);
    } catch {
      return;
    }
    this.add(this.hook.count(event, from), from);
  }

  /** A binary frame is raw audio at that side's format. */
  binary(bytes: number, from: 'client' | 'provider'): void {
    this.audioBytes[from] += bytes;
  }

  private add(usage: RealtimeEventUsage | null, from: 'client' | 'provider'): void {
    if (!usage) return;
    this.inputTokens += usage.inputTokens ?? 0;
    this.outputTokens += usage.outputTokens ?? 0;
    if (usage.audio) this.audioBytes[from] += base64Bytes(usage.audio);
  }

  usage(): RealtimeUsage {
    const rate = (format: string | undefined) => BYTES_PER_SECOND[format ?? 'pcm16'] ?? BYTES_PER_SECOND.pcm16!;
    const seconds = this.audioBytes.client / rate(this.settings.input_audio_format) + this.audioBytes.provider / rate(this.settings.output_audio_format);
    return { input_tokens: this.inputTokens, output_tokens: this.outputTokens, audio_seconds: Math.round(seconds * 1000) / 1000 };
  }
}

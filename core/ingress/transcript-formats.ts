/**
 * A canonical transcription in the caller's response_format. srt and vtt are rendered here from the segments (one
 * cue per segment; a provider that gives no segments gets one cue over the whole duration), so every provider
 * answers every format.
 */
import type { TranscriptionFormat, TranscriptionResult, TranscriptSegment } from '../canonical/audio.ts';

/** hh:mm:ss,mmm (srt) or hh:mm:ss.mmm (vtt). */
export function timestamp(seconds: number, separator: ',' | '.'): string {
  const ms = Math.round(Math.max(0, seconds) * 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

function cues(result: TranscriptionResult): TranscriptSegment[] {
  if (result.segments && result.segments.length > 0) return result.segments;
  if (result.text.trim() === '') return [];
  return [{ id: 0, start: 0, end: result.duration ?? result.usage.audio_seconds ?? 0, text: result.text }];
}

export function toSrt(result: TranscriptionResult): string {
  return cues(result).map((cue, i) => `${i + 1}\n${timestamp(cue.start, ',')} --> ${timestamp(cue.end, ',')}\n${cue.text.trim()}\n`).join('\n');
}

export function toVtt(result: TranscriptionResult): string {
  return ['WEBVTT\n', ...cues(result).map((cue) => `${timestamp(cue.start, '.')} --> ${timestamp(cue.end, '.')}\n${cue.text.trim()}\n`)].join('\n');
}

export interface RenderedTranscript {
  contentType: string;
  body: string | Record<string, unknown>;
}

export function renderTranscript(result: TranscriptionResult, format: TranscriptionFormat, task: 'transcribe' | 'translate'): RenderedTranscript {
  const seconds = result.usage.audio_seconds ?? 0;
  switch (format) {
    case 'text': return { contentType: 'text/plain; charset=utf-8', body: `${result.text}\n` };
    case 'srt': return { contentType: 'text/plain; charset=utf-8', body: toSrt(result) };
    case 'vtt': return { contentType: 'text/vtt; charset=utf-8', body: toVtt(result) };
    case 'json': return { contentType: 'application/json', body: { text: result.text, usage: { type: 'duration', seconds } } };
    case 'verbose_json': return {
      contentType: 'application/json',
      body: {
        task, language: result.language ?? null, duration: result.duration ?? seconds, text: result.text,
        segments: result.segments ?? [], usage: { type: 'duration', seconds },
      },
    };
  }
}

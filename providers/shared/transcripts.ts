/**
 * Reading the speech-to-text answers of providers that time words, not segments (ElevenLabs, AssemblyAI): their
 * words become the canonical segments the gateway renders srt, vtt and verbose_json from, one per sentence or one
 * per word, and the helpers every such translator needs to read an answer without trusting its shape.
 */
import type { TranscriptSegment } from '../../core/canonical/audio.ts';

/** A timed word, in seconds from the start of the audio. */
export interface TimedWord {
  text: string;
  start: number;
  end: number;
}

export type SegmentGrouping = 'sentence' | 'word';

export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A finite, non-negative number, or undefined. */
export const seconds = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined);

/** A sentence ends on a word whose text ends with . ? ! or … (a closing quote or bracket may follow). */
const SENTENCE_END = /[.?!…。？！]["'”’)\]]*$/;

/** Words -> segments: one per sentence (a trailing unfinished one included), or one per word. */
export function segmentsFromWords(words: TimedWord[], grouping: SegmentGrouping = 'sentence'): TranscriptSegment[] {
  if (grouping === 'word') return words.map((w, id) => ({ id, start: w.start, end: w.end, text: w.text }));
  const segments: TranscriptSegment[] = [];
  let current: TimedWord[] = [];
  const close = () => {
    if (current.length === 0) return;
    segments.push({ id: segments.length, start: current[0]!.start, end: current.at(-1)!.end, text: current.map((w) => w.text).join(' ') });
    current = [];
  };
  for (const word of words) {
    current.push(word);
    if (SENTENCE_END.test(word.text)) close();
  }
  close();
  return segments;
}

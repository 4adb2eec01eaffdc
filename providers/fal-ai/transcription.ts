/**
 * Speech to text on fal (fal-ai/whisper, fal-ai/wizper): the audio travels inside the submitted JSON as a data:
 * URI (fal's models take data URIs wherever they take a file URL), so no upload step is needed. Input: `{audio_url,
 * task: transcribe | translate, language, chunk_level: segment, version: "3", prompt}`; output: `{text, chunks:
 * [{timestamp: [start, end], text}], inferred_languages}`. fal reports no duration: the core meters the last
 * chunk's end (else the file's own length).
 */
import type { TranscriptionResult, TranscriptSegment } from '../../core/canonical/audio.ts';
import type { TranscriptionTranslator } from '../../core/dispatch/provider.ts';
import { isRecord, seconds } from '../shared/transcripts.ts';
import { malformed, queueStep, submit } from './queue.ts';

function segmentsOf(chunks: unknown): TranscriptSegment[] | undefined {
  if (!Array.isArray(chunks) || chunks.length === 0) return undefined;
  return chunks.filter(isRecord).map((chunk, id) => {
    const [start, end] = Array.isArray(chunk.timestamp) ? chunk.timestamp : [];
    const from = seconds(start) ?? 0;
    // Whisper leaves the last chunk's end null when the audio stops mid-chunk: it ends where it starts.
    return { id, start: from, end: seconds(end) ?? from, text: typeof chunk.text === 'string' ? chunk.text.trim() : '' };
  });
}

export const falTranscription: TranscriptionTranslator = {
  toUpstream(request, target, task) {
    const { audio } = request;
    const input: Record<string, unknown> = {
      audio_url: `data:${audio.mimeType};base64,${audio.bytes.toString('base64')}`,
      task: task === 'translation' ? 'translate' : 'transcribe',
      // Segment-level timestamps: what srt, vtt and verbose_json show.
      chunk_level: 'segment',
      version: '3',
    };
    if (task === 'transcription' && request.language !== undefined) input.language = request.language;
    if (request.prompt !== undefined) input.prompt = request.prompt;
    return { kind: 'json', request: submit(target, input) };
  },
  followUp: (body, target) => queueStep(body, target),
  fromUpstream(body, target, request): TranscriptionResult {
    if (!isRecord(body) || typeof body.text !== 'string') throw malformed(target, 'a transcription output without text');
    const segments = segmentsOf(body.chunks);
    const inferred = Array.isArray(body.inferred_languages) ? body.inferred_languages.find((l): l is string => typeof l === 'string') : undefined;
    const language = request.language ?? inferred;
    return { object: 'transcription', text: body.text.trim(), ...(language ? { language } : {}), ...(segments ? { segments } : {}), usage: {} };
  },
};

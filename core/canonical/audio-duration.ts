/**
 * The duration of an audio file, read from its container (music-metadata: WAV, MP3, FLAC, Ogg/Opus, MP4/M4A,
 * WebM and more): what a transcription is metered by when its provider reports no duration. Loaded on first use;
 * a file it cannot read has no duration (null), never a guessed one.
 */
type Parse = (bytes: Uint8Array, mimeType: string) => Promise<number | null>;
let parser: Promise<Parse> | undefined;

function loadParser(): Promise<Parse> {
  parser ??= import('music-metadata').then((mm) => async (bytes: Uint8Array, mimeType: string) => {
    const { format } = await mm.parseBuffer(bytes, { mimeType, size: bytes.length }, { duration: true, skipCovers: true });
    return typeof format.duration === 'number' && Number.isFinite(format.duration) && format.duration > 0 ? format.duration : null;
  });
  return parser;
}

export async function audioDuration(bytes: Uint8Array, mimeType: string): Promise<number | null> {
  try {
    return await (await loadParser())(bytes, mimeType);
  } catch {
    return null;
  }
}

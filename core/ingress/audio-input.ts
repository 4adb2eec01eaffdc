/**
 * The audio of a transcription or translation request, from a multipart form (as the official `openai` client
 * sends it: the part `file`, the rest as fields) or a JSON body (`file` as base64 or a data: URI). Providers decide
 * the format by the file name's extension (OpenAI does), so audio without a usable name is named from its bytes.
 */
import type { AudioInput } from '../canonical/audio.ts';
import { validationError } from '../errors.ts';
import type { FormFile } from './form.ts';

/** Container signatures -> extension and media type. */
const SIGNATURES: Array<{ test: (b: Buffer) => boolean; ext: string; type: string }> = [
  { test: (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WAVE', ext: 'wav', type: 'audio/wav' },
  { test: (b) => b.subarray(0, 4).toString('latin1') === 'fLaC', ext: 'flac', type: 'audio/flac' },
  { test: (b) => b.subarray(0, 4).toString('latin1') === 'OggS', ext: 'ogg', type: 'audio/ogg' },
  { test: (b) => b.subarray(4, 8).toString('latin1') === 'ftyp', ext: 'm4a', type: 'audio/mp4' },
  { test: (b) => b.readUInt32BE(0) === 0x1a45dfa3, ext: 'webm', type: 'audio/webm' },
  { test: (b) => b.subarray(0, 3).toString('latin1') === 'ID3' || (b[0] === 0xff && (b[1]! & 0xe0) === 0xe0), ext: 'mp3', type: 'audio/mpeg' },
];

const EXTENSION = /\.(flac|m4a|mp3|mp4|mpeg|mpga|oga|ogg|wav|webm|aac|opus)$/i;

function sniff(bytes: Buffer): { ext: string; type: string } | null {
  if (bytes.length < 12) return null;
  return SIGNATURES.find((s) => s.test(bytes)) ?? null;
}

/** A name and type providers accept: the caller's when it has a known extension, else from the bytes. */
export function namedAudio(bytes: Buffer, filename: string | undefined, mimeType: string | undefined): AudioInput {
  if (bytes.length === 0) throw validationError([{ path: '/file', message: 'is empty' }]);
  const sniffed = sniff(bytes);
  const type = mimeType && mimeType !== 'application/octet-stream' ? mimeType : sniffed?.type ?? 'application/octet-stream';
  if (filename && EXTENSION.test(filename)) return { bytes, filename, mimeType: type };
  const base = filename ? filename.replace(/\.[^.]*$/, '') || 'audio' : 'audio';
  return { bytes, filename: sniffed ? `${base}.${sniffed.ext}` : filename || 'audio', mimeType: type };
}

const DATA_URI = /^data:([\w.+-]+\/[\w.+-]+)?(?:;[\w-]+=[\w.-]+)*;base64,/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** JSON's `file`: base64, or a data: URI carrying base64 and the media type. */
export function audioFromBase64(text: string): AudioInput {
  const uri = DATA_URI.exec(text);
  const payload = (uri ? text.slice(uri[0].length) : text).replace(/\s+/g, '');
  if (payload.length === 0 || payload.length % 4 === 1 || !BASE64.test(payload)) {
    throw validationError([{ path: '/file', message: 'must be base64 (or a data: URI with base64)' }]);
  }
  return namedAudio(Buffer.from(payload, 'base64'), undefined, uri?.[1]);
}

const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+$/;

/** Media types providers take -> the extension that names them. */
const TYPE_EXTENSIONS: Record<string, string> = {
  'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/wave': 'wav', 'audio/vnd.wave': 'wav', 'audio/mpeg': 'mp3', 'audio/mp3': 'mp3',
  'audio/mp4': 'm4a', 'audio/x-m4a': 'm4a', 'audio/m4a': 'm4a', 'audio/aac': 'aac', 'audio/ogg': 'ogg', 'audio/opus': 'opus',
  'audio/webm': 'webm', 'video/webm': 'webm', 'audio/flac': 'flac', 'audio/x-flac': 'flac', 'video/mp4': 'mp4',
};

/**
 * Audio fetched from a URL: named by the last segment of its path when that has a known extension, else by its
 * Content-Type, else from its bytes (namedAudio).
 */
export function audioFromUrl(bytes: Buffer, url: string, contentType: string | undefined): AudioInput {
  const type = contentType?.split(';')[0]!.trim().toLowerCase();
  const mimeType = type && MEDIA_TYPE.test(type) ? type : undefined;
  let last = '';
  try {
    // The name goes into the multipart headers sent upstream: only plain characters, and not too many.
    last = decodeURIComponent(new URL(url).pathname.split('/').at(-1) ?? '').replace(/[^\w.-]+/g, '_').slice(-100);
  } catch {
    // A path that is not valid percent-encoding names nothing; the type or the bytes will.
  }
  const base = last.replace(/\.[^.]*$/, '') || 'audio';
  const typed = mimeType ? TYPE_EXTENSIONS[mimeType] : undefined;
  const filename = EXTENSION.test(last) ? last : typed ? `${base}.${typed}` : base;
  return namedAudio(bytes, filename, mimeType);
}

export const audioFromForm = (file: FormFile): AudioInput => namedAudio(file.bytes, file.filename, file.mimeType);

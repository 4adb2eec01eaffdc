/**
 * What a file is: its declared media type first, then its filename's extension, then its bytes. Generic media
 * types (`application/octet-stream`, `text/plain`, none) say nothing, since clients send them for any file.
 */
export type DocumentFormat = 'plain' | 'markdown' | 'json' | 'csv' | 'pdf' | 'html';

const BY_MEDIA_TYPE: Record<string, DocumentFormat> = {
  'application/pdf': 'pdf', 'application/x-pdf': 'pdf',
  'text/html': 'html', 'application/xhtml+xml': 'html',
  'text/csv': 'csv', 'application/csv': 'csv', 'text/x-csv': 'csv', 'application/x-csv': 'csv',
  'text/comma-separated-values': 'csv', 'text/tab-separated-values': 'csv',
  'text/markdown': 'markdown', 'text/x-markdown': 'markdown',
  'application/json': 'json', 'text/json': 'json', 'application/x-ndjson': 'json', 'application/jsonl': 'json',
  'application/jsonlines': 'json', 'application/x-jsonlines': 'json',
};

const BY_EXTENSION: Record<string, DocumentFormat> = {
  pdf: 'pdf', html: 'html', htm: 'html', xhtml: 'html', csv: 'csv', tsv: 'csv',
  md: 'markdown', markdown: 'markdown', mdown: 'markdown', mkd: 'markdown',
  json: 'json', jsonl: 'json', ndjson: 'json', txt: 'plain', text: 'plain', log: 'plain',
};

/** `text/csv; charset=utf-8` -> `text/csv`. */
function mediaType(mimeType: string): string {
  return mimeType.split(';')[0]!.trim().toLowerCase();
}

export function declaredFormat(info: { filename: string; mimeType: string }): DocumentFormat | undefined {
  const type = mediaType(info.mimeType);
  const byType = Object.hasOwn(BY_MEDIA_TYPE, type) ? BY_MEDIA_TYPE[type] : type.endsWith('+json') ? 'json' : undefined;
  if (byType) return byType;
  const dot = info.filename.lastIndexOf('.');
  const extension = dot === -1 ? '' : info.filename.slice(dot + 1).toLowerCase();
  return Object.hasOwn(BY_EXTENSION, extension) ? BY_EXTENSION[extension] : undefined;
}

/** PDF readers accept the `%PDF-` header anywhere in the first 1024 bytes, and so does this. */
export function looksLikePdf(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1024)).includes('%PDF-', 0, 'latin1');
}

/** A document that starts with markup and declares itself HTML near its start. */
export function looksLikeHtml(text: string): boolean {
  return /^\s*</.test(text) && /<!doctype\s+html|<html[\s>]/i.test(text.slice(0, 1024));
}

function decoderFor(mimeType: string, bytes: Uint8Array): TextDecoder {
  const charset = /;\s*charset="?([\w.:-]+)/i.exec(mimeType)?.[1];
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le', { fatal: true });
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be', { fatal: true });
  if (charset) {
    try {
      return new TextDecoder(charset, { fatal: true });
    } catch {
      // A charset label the runtime does not know: UTF-8 below, which fails loudly if it is wrong.
    }
  }
  return new TextDecoder('utf-8', { fatal: true });
}

/** Control characters other than tab, line feed, vertical tab, form feed and carriage return. */
const CONTROL = /[\u0000-\u0008\u000e-\u001f\u007f]/g;

/**
 * The bytes as text (a byte order mark read and dropped, line breaks as `\n`), or null when they are no text:
 * invalid in their charset (UTF-8 unless a BOM or the media type's charset says otherwise), holding a NUL, or
 * more than 1% control characters in their first 64 KiB.
 */
export function decodeText(bytes: Uint8Array, mimeType: string): string | null {
  let text: string;
  try {
    text = decoderFor(mimeType, bytes).decode(bytes);
  } catch {
    return null;
  }
  if (text.includes('\u0000')) return null;
  const head = text.slice(0, 65536);
  if ((head.match(CONTROL)?.length ?? 0) > head.length / 100) return null;
  return text.replace(/\r\n?/g, '\n');
}

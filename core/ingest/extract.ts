/**
 * Text out of an uploaded file, for gateway-owned vector stores: one library per format (docs/ingestion.md).
 * Each format's text keeps what a search needs beside a value: table and JSON lines carry their column names
 * and key paths, and blocks are apart by blank lines, the chunker's preferred break.
 */
import { declaredFormat, decodeText, looksLikeHtml, looksLikePdf, type DocumentFormat } from './detect.ts';
import { jsonText } from './json.ts';
import { pdfText } from './pdf.ts';
import { UnsupportedDocumentError } from './unsupported.ts';

export type { DocumentFormat } from './detect.ts';
export { UnsupportedDocumentError } from './unsupported.ts';

export interface ExtractedText {
  text: string;
  format: DocumentFormat;
}

export interface DocumentInfo {
  filename: string;
  /** The media type the file was uploaded with; may carry a charset (`text/csv; charset=windows-1252`). */
  mimeType: string;
}

/**
 * Sniffed from the text when neither the media type nor the extension tells: HTML, then JSON, else plain.
 * JSON is known by parsing it, so its converted text comes along.
 */
function sniffed(text: string): { format: DocumentFormat; json?: string } {
  if (looksLikeHtml(text)) return { format: 'html' };
  const json = /^\s*[[{]/.test(text) ? jsonText(text) : null;
  return json === null ? { format: 'plain' } : { format: 'json', json };
}

/**
 * The file's text and the format it was read as. A JSON or CSV file that does not parse is read as plain text
 * (its words are still worth finding). Throws UnsupportedDocumentError for binary that is no PDF, text that is
 * invalid in its charset, and PDFs that cannot be read.
 */
export async function extractText(bytes: Uint8Array, info: DocumentInfo): Promise<ExtractedText> {
  const declared = declaredFormat(info);
  if (declared === 'pdf' || (declared === undefined && looksLikePdf(bytes))) {
    return { text: (await pdfText(bytes, info)).replace(/\r\n?/g, '\n'), format: 'pdf' };
  }
  const text = decodeText(bytes, info.mimeType);
  if (text === null) {
    const reason = declared
      ? `it is named as ${declared} but its bytes are not valid text (UTF-8, unless a byte order mark or the media type's charset says otherwise)`
      : 'binary content that is not PDF, HTML, Markdown, JSON, CSV or plain text';
    throw new UnsupportedDocumentError(info.filename, info.mimeType, reason);
  }
  const { format, json } = declared ? { format: declared, json: undefined } : sniffed(text);
  const read = (converted: string | null, as: DocumentFormat): ExtractedText =>
    converted === null ? { text: text.trim(), format: 'plain' } : { text: converted.trim(), format: as };
  // The HTML, Markdown and CSV libraries load with the first file of their format: a gateway that never ingests
  // one does not hold them in memory.
  switch (format) {
    case 'html': return read((await import('./html.ts')).htmlText(text), 'html');
    case 'markdown': return read((await import('./markdown.ts')).markdownText(text), 'markdown');
    case 'json': return read(json ?? jsonText(text), 'json');
    case 'csv': return read((await import('./csv.ts')).csvText(text), 'csv');
    default: return read(text, 'plain');
  }
}

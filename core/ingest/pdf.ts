/**
 * PDF text through unpdf (PDF.js bundled for servers, with the polyfills Node 20 needs: PDF.js itself wants
 * Promise.withResolvers, which Node 20 lacks). Loaded on first use: it is large, and most gateways never read a
 * PDF. Pages are joined by a blank line, the chunker's preferred break. A PDF without a text layer (a scan)
 * gives empty text.
 */
import { UnsupportedDocumentError } from './unsupported.ts';

type Unpdf = typeof import('unpdf');
let unpdf: Promise<Unpdf> | undefined;

function reasonOf(err: unknown): string {
  const name = err instanceof Error ? err.name : '';
  if (name === 'PasswordException') return 'the PDF is password-protected';
  if (name === 'InvalidPDFException') return 'the PDF is damaged or not a PDF';
  return `the PDF could not be read (${err instanceof Error ? err.message : String(err)})`;
}

export async function pdfText(bytes: Uint8Array, info: { filename: string; mimeType: string }): Promise<string> {
  const { getDocumentProxy, extractText } = await (unpdf ??= import('unpdf'));
  let pages: string[];
  try {
    // PDF.js takes over (detaches) the buffer it is handed: a copy leaves the caller's bytes usable.
    const pdf = await getDocumentProxy(bytes.slice(), { verbosity: 0 });
    try {
      pages = (await extractText(pdf, { mergePages: false })).text;
    } finally {
      await pdf.destroy();
    }
  } catch (err) {
    throw new UnsupportedDocumentError(info.filename, info.mimeType, reasonOf(err));
  }
  return pages.map((page) => page.trim()).filter((page) => page !== '').join('\n\n');
}

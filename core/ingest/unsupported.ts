/**
 * A file the gateway cannot turn into text: binary that is no supported format, a PDF it cannot read. The
 * vector-store ingester logs it as a per-file warning and skips the file; it never becomes an HTTP error.
 */
export class UnsupportedDocumentError extends Error {
  constructor(readonly filename: string, readonly mimeType: string, readonly reason: string) {
    super(`${filename} (${mimeType || 'no media type'}) is not a supported document: ${reason}`);
    this.name = 'UnsupportedDocumentError';
  }
}

/**
 * The gateway's one tokenizer: OpenAI's o200k_base (gpt-tokenizer), exact for current OpenAI models and an
 * approximation for others. Token estimates (estimate.ts) and vector-store chunking (core/ingest) both read
 * it through here, so the library is imported in one place and loaded once, on first use: its encoding tables
 * are large and most deployments never need them.
 *
 * Special-token text (`<|endoftext|>` and the like) is counted as the plain text it is: the gateway only ever
 * tokenizes caller text, which may quote such markers, and the library would otherwise throw on them.
 */

export interface Tokenizer {
  count(text: string): number;
  /**
   * The text's tokens, one array per pre-tokenizer piece (a word with its leading space, a run of digits, of
   * punctuation or of whitespace), in order. A piece never splits a character, so a piece boundary is a place
   * where the text may be cut and its parts counted apart.
   */
  pieces(text: string): Iterable<number[]>;
  /** The text of whole pieces' tokens (decoding part of a character would garble the next decode). */
  decode(tokens: readonly number[]): string;
}

const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

let tokenizer: Promise<Tokenizer> | undefined;

export function loadTokenizer(): Promise<Tokenizer> {
  tokenizer ??= import('gpt-tokenizer').then((m) => ({
    count: (text) => m.countTokens(text, PLAIN_TEXT),
    pieces: (text) => m.encodeGenerator(text, PLAIN_TEXT),
    decode: (tokens) => m.decode(tokens),
  }));
  return tokenizer;
}

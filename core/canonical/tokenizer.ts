/**
 * The gateway's one tokenizer: OpenAI's o200k_base (byte-pair.ts, on the ranks gpt-tokenizer ships), exact for
 * current OpenAI models and an approximation for others. Token estimates (estimate.ts) and vector-store chunking
 * (core/ingest) both read it through here, so it is loaded once, on first use: most deployments never need it.
 *
 * Special-token text (`<|endoftext|>` and the like) is counted as the plain text it is: the gateway only ever
 * tokenizes caller text, which may quote such markers.
 */
import { BytePairEncoding } from './byte-pair.ts';

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

/** Texts longer than this are counted each time (their count is a small share of what their request costs). */
const REMEMBERED_TEXT_CHARS = 16_384;
/** The counts remembered hold at most this many characters of text; past it they are dropped together. */
const REMEMBERED_CHARS = 4_000_000;

/**
 * Counts of recent texts: a deployment's system prompts and a conversation's earlier turns come back on every
 * request, and counting (byte-pair merges) is the costliest step of a request's rate-limit and budget reservation.
 */
function rememberedCounts(count: (text: string) => number): (text: string) => number {
  let counts = new Map<string, number>();
  let chars = 0;
  return (text) => {
    if (text.length > REMEMBERED_TEXT_CHARS) return count(text);
    const known = counts.get(text);
    if (known !== undefined) return known;
    const tokens = count(text);
    if (chars + text.length > REMEMBERED_CHARS) {
      counts = new Map();
      chars = 0;
    }
    counts.set(text, tokens);
    chars += text.length;
    return tokens;
  };
}

let tokenizer: Promise<Tokenizer> | undefined;

export function loadTokenizer(): Promise<Tokenizer> {
  tokenizer ??= BytePairEncoding.loadO200k().then((encoding) => (loaded = {
    count: rememberedCounts((text) => encoding.count(text)),
    pieces: (text) => encoding.pieces(text),
    decode: (tokens) => encoding.decode(tokens),
  }));
  return tokenizer;
}

let loaded: Tokenizer | undefined;

/** The tokenizer once loadTokenizer has loaded it, else undefined: counts on the request path without a promise. */
export function tokenizerNow(): Tokenizer | undefined {
  return loaded;
}

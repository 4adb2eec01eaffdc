/**
 * Text cut into overlapping chunks of at most `maxTokens` tokens (o200k_base, the gateway's tokenizer), for
 * embedding into a vector store.
 *
 * Defaults: 800 tokens a chunk, 200 of them shared with the previous chunk. OpenAI's file_search uses 800 and
 * 400; a 200-token overlap still carries a sentence or two across every cut, while half as much text is
 * embedded twice (a document costs about 1.33x its tokens to embed instead of 2x) and search results repeat
 * less of each other.
 *
 * Where a chunk ends: as many tokens as fit, then moved back to the best break within the last 15% of the
 * window (from 0.85 x maxTokens tokens on): a blank line (paragraph) first, else a line break, else a
 * sentence end; the latest break of the best kind wins, and with none the chunk is cut where the tokens run
 * out. Cuts fall between the tokenizer's pieces (a word with its leading space, a run of digits, punctuation or
 * whitespace), so no word and no character is ever split; a piece longer than maxTokens / 8 tokens (a very
 * long word, an unbroken run of CJK text) is cut into parts of at most that many UTF-8 bytes first.
 *
 * The next chunk starts overlapTokens tokens before the previous chunk's end: exactly, unless that point falls
 * inside a piece, in which case the overlap starts at the end of that piece (a token or two shorter).
 * Chunks are slices of the text with its outer whitespace trimmed: the first chunk, followed by every later
 * chunk less its overlap, is that text again.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { loadTokenizer, type Tokenizer } from '../canonical/tokenizer.ts';
import { validationError } from '../errors.ts';

export interface Chunk {
  index: number;
  content: string;
  tokens: number;
}

export interface ChunkOptions {
  maxTokens?: number;
  overlapTokens?: number;
}

export const DEFAULT_MAX_TOKENS = 800;
export const DEFAULT_OVERLAP_TOKENS = 200;
export const MIN_MAX_TOKENS = 50;
export const MAX_MAX_TOKENS = 8000;
/** The tail of the window in which a chunk may end early at a break. */
const BREAK_WINDOW = 0.15;
/** Text tokenized between two turns of the event loop: a large document does not stall other requests. */
const PIECES_PER_TURN = 20_000;

function validated(options: ChunkOptions): { max: number; overlap: number } {
  const max = options.maxTokens ?? DEFAULT_MAX_TOKENS;
  const overlap = options.overlapTokens ?? DEFAULT_OVERLAP_TOKENS;
  if (!Number.isInteger(max) || max < MIN_MAX_TOKENS || max > MAX_MAX_TOKENS) {
    throw validationError([{ path: 'maxTokens', message: `must be an integer from ${MIN_MAX_TOKENS} to ${MAX_MAX_TOKENS}` }]);
  }
  if (!Number.isInteger(overlap) || overlap < 0 || overlap > max / 2) {
    throw validationError([{ path: 'overlapTokens', message: `must be an integer from 0 to half of maxTokens (${Math.floor(max / 2)})` }]);
  }
  return { max, overlap };
}

/**
 * The places the text may be cut: boundary i is at character `at[i]` and token `tokensBefore[i]`; boundary 0
 * is the start, the last one the end.
 */
interface Boundaries {
  at: number[];
  tokensBefore: number[];
}

/** Code points grouped into parts of at most `limit` UTF-8 bytes (and so at most `limit` tokens). */
function* byteLimitedParts(piece: string, limit: number): Generator<string> {
  let part = '';
  let bytes = 0;
  for (const char of piece) {
    const size = Buffer.byteLength(char);
    if (bytes + size > limit && part !== '') {
      yield part;
      [part, bytes] = ['', 0];
    }
    part += char;
    bytes += size;
  }
  if (part !== '') yield part;
}

async function boundariesOf(text: string, tokenizer: Tokenizer, pieceLimit: number): Promise<Boundaries> {
  const at = [0];
  const tokensBefore = [0];
  let offset = 0;
  let tokens = 0;
  let sinceTurn = 0;
  for (const piece of tokenizer.pieces(text)) {
    const length = tokenizer.decode(piece).length;
    if (piece.length <= pieceLimit) {
      offset += length;
      tokens += piece.length;
      at.push(offset);
      tokensBefore.push(tokens);
    } else {
      for (const part of byteLimitedParts(text.slice(offset, offset + length), pieceLimit)) {
        offset += part.length;
        tokens += tokenizer.count(part);
        at.push(offset);
        tokensBefore.push(tokens);
      }
    }
    if (++sinceTurn === PIECES_PER_TURN) {
      sinceTurn = 0;
      await yieldToEventLoop();
    }
  }
  if (offset !== text.length) throw new Error(`tokenizer pieces cover ${offset} of ${text.length} characters`);
  return { at, tokensBefore };
}

/** The smallest index in [lo, hi] whose value satisfies `ok`, for `ok` false then true along the range. */
function firstWhere(lo: number, hi: number, ok: (i: number) => boolean): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ok(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

const PARAGRAPH_END = /\n[^\S\n]*\n\s*$/;
const LINE_END = /\n\s*$/;
const SENTENCE_END = /[.!?…][)\]"'”’»]*\s+$|[。！？][)\]"'”’»）」』]*\s*$/;

/** 3 for a paragraph break just before character `at`, 2 a line break, 1 a sentence end, else 0. */
function breakRank(text: string, at: number): number {
  const before = text.slice(Math.max(0, at - 24), at) + (text[at] === ' ' ? ' ' : '');
  if (PARAGRAPH_END.test(before)) return 3;
  if (LINE_END.test(before)) return 2;
  return SENTENCE_END.test(before) ? 1 : 0;
}

/** The chunk's end: `end` itself, or the latest best-ranked break from the window's floor on. */
function preferredEnd(text: string, b: Boundaries, start: number, end: number, max: number): number {
  const floor = b.tokensBefore[start]! + Math.ceil(max * (1 - BREAK_WINDOW));
  let best = end;
  let bestRank = 0;
  for (let i = end; i > start && b.tokensBefore[i]! >= floor; i--) {
    const rank = breakRank(text, b.at[i]!);
    if (rank > bestRank) [best, bestRank] = [i, rank];
    if (rank === 3) break;
  }
  return best;
}

export async function chunkText(text: string, options: ChunkOptions = {}): Promise<Chunk[]> {
  const { max, overlap } = validated(options);
  // Lone surrogates cannot be tokenized (they have no UTF-8): each becomes U+FFFD, as an encoder would make it.
  const body = text.trim().replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  if (body === '') return [];
  const tokenizer = await loadTokenizer();
  const b = await boundariesOf(body, tokenizer, Math.max(4, Math.floor(max / 8)));
  const last = b.at.length - 1;
  const chunks: Chunk[] = [];
  let start = 0;
  while (start < last) {
    const budget = b.tokensBefore[start]! + max;
    let end = firstWhere(start + 1, last + 1, (i) => i > last || b.tokensBefore[i]! > budget) - 1;
    if (end < last) end = preferredEnd(body, b, start, end, max);
    let content = body.slice(b.at[start], b.at[end]);
    let tokens = tokenizer.count(content);
    // Pieces counted apart may merge when counted together; rarely, a join counts more, so the end moves back.
    while (tokens > max && end > start + 1) {
      end--;
      content = body.slice(b.at[start], b.at[end]);
      tokens = tokenizer.count(content);
    }
    chunks.push({ index: chunks.length, content, tokens });
    if (end === last) break;
    const target = b.tokensBefore[end]! - overlap;
    start = Math.max(start + 1, firstWhere(start, end, (i) => b.tokensBefore[i]! >= target));
    if (chunks.length % 256 === 0) await yieldToEventLoop();
  }
  return chunks;
}

/**
 * OpenAI's o200k_base byte-pair encoding, held compactly: every token's bytes in one buffer, and an open-addressing
 * table from bytes to rank. The ranks come from the `.tiktoken` file that gpt-tokenizer ships (one `base64 rank`
 * line per token); gpt-tokenizer's own tables (a Map and an array of strings per token) took about 56 MB of RSS
 * and 0.4 s to load, these about 4 MB (bench/analysis.md, sixth step).
 *
 * Encoding is tiktoken's: the text is split into pieces by the o200k pattern, each piece is UTF-8 encoded, and a
 * piece that is not a token itself is merged pair by pair, always the pair of lowest rank, leftmost first.
 */
import { readFile } from 'node:fs/promises';

/** The o200k pre-tokenizer: words with their leading character and contraction, runs of up to 3 digits, symbols, space. */
const CONTRACTION = String.raw`(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?`;
const UPPER = String.raw`[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`;
const LOWER = String.raw`[\p{Ll}\p{Lm}\p{Lo}\p{M}]`;
const O200K_SPLIT = new RegExp([
  String.raw`[^\r\n\p{L}\p{N}]?${UPPER}*${LOWER}+${CONTRACTION}`,
  String.raw`[^\r\n\p{L}\p{N}]?${UPPER}+${LOWER}*${CONTRACTION}`,
  String.raw`\p{N}{1,3}`,
  String.raw` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
  String.raw`\s*[\r\n]+`,
  String.raw`\s+(?!\S)`,
  String.raw`\s+`,
].join('|'), 'gu');

const NONE = -1;
const BASE64 = new Int16Array(128).fill(NONE);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) BASE64[c.charCodeAt(0)] = i;

const utf8 = new TextEncoder();
const text = new TextDecoder('utf-8');

/** FNV-1a, 32 bits: encodePiece hashes an ASCII piece's characters with the same two constants as its bytes here. */
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a over bytes[start, end). */
function hashOf(bytes: Uint8Array, start: number, end: number): number {
  let hash = FNV_OFFSET;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, FNV_PRIME);
  return hash >>> 0;
}

/** A binary min-heap of merge candidates, each `rank * 2^32 + start`: the lowest rank first, then the leftmost. */
class Candidates {
  private items: number[] = [];

  get size(): number {
    return this.items.length;
  }

  clear(): void {
    this.items.length = 0;
  }

  push(value: number): void {
    const items = this.items;
    let at = items.length;
    items.push(value);
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (items[parent]! <= value) break;
      items[at] = items[parent]!;
      at = parent;
    }
    items[at] = value;
  }

  pop(): number {
    const items = this.items;
    const top = items[0]!;
    const last = items.pop()!;
    if (items.length === 0) return top;
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child = right < items.length && items[right]! < items[left]! ? right : left;
      if (items[child]! >= last) break;
      items[at] = items[child]!;
      at = child;
    }
    items[at] = last;
    return top;
  }
}

const SHIFT = 2 ** 32;

/** Scratch bytes kept between pieces; a longer piece's scratch is let go once it is encoded. */
const SCRATCH_BYTES = 1 << 16;

/** Merged pieces' counts remembered, up to this many characters in all (then dropped together). */
const REMEMBERED_PIECE_CHARS = 1 << 20;

export class BytePairEncoding {
  /** Scratch space for one piece, grown as needed: its bytes, and per part start its next part and previous one. */
  private bytes = new Uint8Array(SCRATCH_BYTES);
  private next = new Int32Array(SCRATCH_BYTES + 1);
  private prev = new Int32Array(SCRATCH_BYTES + 1);
  /** The rank of the pair that starts at a part (the part and the one after it), or NONE. */
  private pairRank = new Int32Array(SCRATCH_BYTES + 1);
  private readonly candidates = new Candidates();
  /**
   * Counts of pieces that needed merges: words recur across texts, and a merge costs far more than a lookup (a
   * CJK sentence is one piece, merged byte by byte).
   */
  private merged = new Map<string, number>();
  private mergedChars = 0;

  private constructor(
    /** Every token's bytes, back to back, and where each rank's begin (rank r: starts[r] to starts[r + 1]). */
    private readonly pool: Uint8Array,
    private readonly starts: Uint32Array,
    /** rank + 1 by hash slot; 0 is an empty slot. */
    private readonly slots: Int32Array,
  ) {}

  /** Reads the ranks of a `.tiktoken` file: `<base64 of the token's bytes> <rank>` per line, ranks 0 to n - 1. */
  static parse(source: string): BytePairEncoding {
    const lines = source.split('\n').filter((line) => line.length > 0);
    const count = lines.length;
    const pool = new Uint8Array(source.length);
    const starts = new Uint32Array(count + 1);
    let used = 0;
    for (let r = 0; r < count; r++) {
      const line = lines[r]!;
      const space = line.indexOf(' ');
      if (space <= 0 || Number(line.slice(space + 1)) !== r) throw new Error(`tokenizer ranks: line ${r + 1} is not "<base64> ${r}"`);
      starts[r] = used;
      used = decodeBase64(line, space, pool, used);
    }
    starts[count] = used;
    let size = 1;
    while (size < count * 2) size <<= 1;
    const slots = new Int32Array(size);
    const encoding = new BytePairEncoding(pool.slice(0, used), starts, slots);
    for (let r = 0; r < count; r++) encoding.insert(r);
    return encoding;
  }

  /** o200k_base, from gpt-tokenizer's data folder. */
  static async loadO200k(): Promise<BytePairEncoding> {
    const file = new URL(import.meta.resolve('gpt-tokenizer/data/o200k_base.tiktoken'));
    return BytePairEncoding.parse(await readFile(file, 'utf8'));
  }

  count(input: string): number {
    let tokens = 0;
    // The loop of splitPieces() without a generator: counting is on the request path (ratelimit, budget).
    O200K_SPLIT.lastIndex = 0;
    for (;;) {
      const found = O200K_SPLIT.exec(input);
      if (!found) return tokens;
      const at = O200K_SPLIT.lastIndex;
      tokens += this.encodePiece(found[0], null);
      O200K_SPLIT.lastIndex = at;
    }
  }

  /** The tokens of each pre-tokenizer piece, in order. */
  *pieces(input: string): Generator<number[]> {
    for (const piece of splitPieces(input)) {
      const out: number[] = [];
      this.encodePiece(piece, out);
      yield out;
    }
  }

  decode(tokens: readonly number[]): string {
    let length = 0;
    for (const token of tokens) length += this.tokenLength(token);
    const bytes = new Uint8Array(length);
    let at = 0;
    for (const token of tokens) {
      bytes.set(this.pool.subarray(this.starts[token]!, this.starts[token + 1]!), at);
      at += this.starts[token + 1]! - this.starts[token]!;
    }
    return text.decode(bytes);
  }

  private tokenLength(token: number): number {
    if (!Number.isInteger(token) || token < 0 || token >= this.starts.length - 1) throw new RangeError(`no token ${token}`);
    return this.starts[token + 1]! - this.starts[token]!;
  }

  private insert(rank: number): void {
    const start = this.starts[rank]!;
    const end = this.starts[rank + 1]!;
    const mask = this.slots.length - 1;
    let slot = hashOf(this.pool, start, end) & mask;
    while (this.slots[slot] !== 0) {
      if (this.equals(this.slots[slot]! - 1, this.pool, start, end)) throw new Error(`tokenizer ranks: rank ${rank} repeats rank ${this.slots[slot]! - 1}`);
      slot = (slot + 1) & mask;
    }
    this.slots[slot] = rank + 1;
  }

  /** The rank of bytes[start, end), or NONE. */
  private rankOf(bytes: Uint8Array, start: number, end: number): number {
    const mask = this.slots.length - 1;
    let slot = hashOf(bytes, start, end) & mask;
    for (;;) {
      const entry = this.slots[slot]!;
      if (entry === 0) return NONE;
      if (this.equals(entry - 1, bytes, start, end)) return entry - 1;
      slot = (slot + 1) & mask;
    }
  }

  private equals(rank: number, bytes: Uint8Array, start: number, end: number): boolean {
    const from = this.starts[rank]!;
    if (this.starts[rank + 1]! - from !== end - start) return false;
    for (let i = 0; i < end - start; i++) if (this.pool[from + i] !== bytes[start + i]) return false;
    return true;
  }

  /** The rank of an ASCII piece whose hash is `hash`, read from its characters (its bytes), or NONE. */
  private rankOfAscii(piece: string, hash: number): number {
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    for (;;) {
      const entry = this.slots[slot]!;
      if (entry === 0) return NONE;
      const from = this.starts[entry - 1]!;
      if (this.starts[entry]! - from === piece.length) {
        let i = 0;
        while (i < piece.length && this.pool[from + i] === piece.charCodeAt(i)) i++;
        if (i === piece.length) return entry - 1;
      }
      slot = (slot + 1) & mask;
    }
  }

  /** The piece's token count; its tokens are appended to `out` when given. */
  private encodePiece(piece: string, out: number[] | null): number {
    // Most pieces are ASCII and a token whole: looked up from the characters, without encoding them first.
    let hash = FNV_OFFSET;
    let ascii = true;
    for (let i = 0; i < piece.length; i++) {
      const code = piece.charCodeAt(i);
      if (code >= 0x80) {
        ascii = false;
        break;
      }
      hash = Math.imul(hash ^ code, FNV_PRIME);
    }
    if (ascii) {
      const rank = this.rankOfAscii(piece, hash >>> 0);
      if (rank !== NONE) {
        out?.push(rank);
        return 1;
      }
    }
    if (!out) {
      const known = this.merged.get(piece);
      if (known !== undefined) return known;
    }
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (this.bytes.length < piece.length * 3) this.setScratch(piece.length * 3);
    const length = utf8.encodeInto(piece, this.bytes).written;
    const whole = ascii ? NONE : this.rankOf(this.bytes, 0, length);
    if (whole !== NONE) {
      out?.push(whole);
      return 1;
    }
    const tokens = this.merge(length, out);
    if (this.bytes.length > SCRATCH_BYTES) this.setScratch(SCRATCH_BYTES);
    if (this.mergedChars + piece.length > REMEMBERED_PIECE_CHARS) {
      this.merged = new Map();
      this.mergedChars = 0;
    }
    this.merged.set(piece, tokens);
    this.mergedChars += piece.length;
    return tokens;
  }

  /** Scratch for pieces of up to `bytes` UTF-8 bytes. */
  private setScratch(bytes: number): void {
    this.bytes = new Uint8Array(bytes);
    this.next = new Int32Array(bytes + 1);
    this.prev = new Int32Array(bytes + 1);
    this.pairRank = new Int32Array(bytes + 1);
  }

  /** Byte-pair merges over this.bytes[0, length): parts start as single bytes, each a token of o200k. */
  private merge(length: number, out: number[] | null): number {
    const { bytes, next, prev, pairRank, candidates } = this;
    candidates.clear();
    for (let i = 0; i < length; i++) {
      next[i] = i + 1;
      prev[i] = i - 1;
    }
    for (let i = 0; i + 1 < length; i++) this.setPair(i, length);
    while (candidates.size > 0) {
      const candidate = candidates.pop();
      const start = candidate % SHIFT;
      const rank = (candidate - start) / SHIFT;
      // Stale: the part was merged into the one before it, or its pair changed since.
      if (next[start] === NONE || pairRank[start] !== rank) continue;
      const absorbed = next[start]!;
      const after = next[absorbed]!;
      next[start] = after;
      next[absorbed] = NONE;
      if (after < length) prev[after] = start;
      this.setPair(start, length);
      if (prev[start]! >= 0) this.setPair(prev[start]!, length);
    }
    let tokens = 0;
    for (let i = 0; i < length; i = next[i]!) {
      tokens++;
      if (out) {
        const rank = this.rankOf(bytes, i, next[i]!);
        if (rank === NONE) throw new Error('tokenizer ranks: a part is not a token');
        out.push(rank);
      }
    }
    return tokens;
  }

  /** The pair starting at part `start` (the part and the next), as a merge candidate when it is a token. */
  private setPair(start: number, length: number): void {
    const second = this.next[start]!;
    if (second >= length) {
      this.pairRank[start] = NONE;
      return;
    }
    const rank = this.rankOf(this.bytes, start, this.next[second]!);
    this.pairRank[start] = rank;
    if (rank !== NONE) this.candidates.push(rank * SHIFT + start);
  }
}

/** The pieces of `input`; the pattern is shared, so its position is set before every search (callers interleave). */
function* splitPieces(input: string): Generator<string> {
  let at = 0;
  for (;;) {
    O200K_SPLIT.lastIndex = at;
    const found = O200K_SPLIT.exec(input);
    if (!found) return;
    at = O200K_SPLIT.lastIndex;
    yield found[0];
  }
}

/** Appends the bytes of line[0, end) (base64) to pool at `at`; returns the new end. */
function decodeBase64(line: string, end: number, pool: Uint8Array, at: number): number {
  let bits = 0;
  let value = 0;
  for (let i = 0; i < end; i++) {
    const code = line.charCodeAt(i);
    if (code === 61) break; // '=' padding
    const digit = code < 128 ? BASE64[code]! : NONE;
    if (digit === NONE) throw new Error(`tokenizer ranks: "${line.slice(0, end)}" is not base64`);
    value = (value << 6) | digit;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      pool[at++] = (value >> bits) & 0xff;
    }
  }
  return at;
}

/**
 * The stream window: how much of the text so far may still be part of a match, and so is held back.
 *
 * A chunk's text is checked together with what is held; what can no longer be part of a match is released at
 * once, and only the tail that could still grow into one stays: the unfinished last word (an e-mail, a key, a
 * toxic word cut in two), the whole words before it that begin a listed phrase, a run of digits and separators that could be a
 * spaced card, phone or IBAN number, the header of a PEM block, and every match that touches the end (it may grow).
 * The tail is cut to `chars` characters at most; text held longer than `maxHoldMs` is released once it was
 * checked together with the next chunk. A text that ends in a space and no digits holds nothing: the first token
 * is not delayed at all.
 */
import type { Finding } from './scan.ts';

export interface WindowLimits { chars: number; maxHoldMs: number }

const isSpace = (code: number) => code === 32 || (code >= 9 && code <= 13) || code === 160;
const isDigitRunChar = (code: number) => (code >= 48 && code <= 57) || code === 32 || code === 40 || code === 41 || code === 43 || code === 45 || code === 46 || code === 47;
const isAlnum = (code: number) => (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code > 127;
const isUpper = (code: number) => code >= 65 && code <= 90;
const PEM_START = /-{1,5}(?:B(?:E(?:G(?:I(?:N[A-Z0-9 ]*-*)?)?)?)?)?$/;

/** Whole words before the unfinished one that may begin a listed phrase: how many at most, and the test. */
export interface PhraseHold { maxWords: number; startsPhrase(words: string): boolean }

/** Where the tail that could still be (part of) a match begins; never before `len - chars`. */
export function tailStart(text: string, chars: number, phrases: PhraseHold | null, digits: boolean): number {
  const len = text.length;
  const floor = Math.max(0, len - chars);
  // The unfinished last word.
  let start = len;
  while (start > floor && !isSpace(text.charCodeAt(start - 1))) start--;
  // Whole words before it that begin a phrase ("kill " of "kill you"), up to the longest phrase's words minus one.
  if (phrases) {
    let at = start;
    for (let words = 1; words < phrases.maxWords && at > floor; words++) {
      while (at > floor && isSpace(text.charCodeAt(at - 1))) at--;
      while (at > floor && !isSpace(text.charCodeAt(at - 1))) at--;
      if (phrases.startsPhrase(text.slice(at, start).trim())) start = at;
    }
  }
  if (digits) {
    // A run of digits and separators at the end, starting a token (IBAN: after its country letters).
    let j = len;
    let digit = false;
    while (j > floor && isDigitRunChar(text.charCodeAt(j - 1))) {
      const code = text.charCodeAt(--j);
      if (code >= 48 && code <= 57) digit = true;
    }
    while (j < len && text.charCodeAt(j) === 32) j++;
    if (digit && j < start) {
      if (j >= 2 && j - 2 >= floor && isUpper(text.charCodeAt(j - 1)) && isUpper(text.charCodeAt(j - 2))) j -= 2;
      if (j === 0 || !isAlnum(text.charCodeAt(j - 1))) start = j;
    }
  }
  const pem = PEM_START.exec(text.slice(Math.max(floor, len - 64)));
  if (pem && pem[0].length > 0) start = Math.min(start, len - pem[0].length);
  return Math.max(floor, start);
}

/**
 * Where the released part ends: the tail start, moved back before any match that crosses it or touches the end of
 * an unfinished text (a match is never split, and one at the end may still grow).
 */
export function releaseBoundary(text: string, tail: number, findings: readonly Finding[], final: boolean): number {
  let boundary = tail;
  for (let i = findings.length - 1; i >= 0; i--) {
    const f = findings[i]!;
    if (f.start < boundary && (f.end > boundary || (!final && f.end === text.length))) boundary = f.start;
  }
  return boundary;
}

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadTokenizer } from '../../core/canonical/tokenizer.ts';
import { GatewayError } from '../../core/errors.ts';
import { chunkText, type Chunk } from '../../core/ingest/chunk.ts';

const count = async (text: string): Promise<number> => (await loadTokenizer()).count(text);

/** Numbered sentences in numbered paragraphs: every stretch of the text is unique, so a chunk has one place in it. */
function prose(paragraphs: number, sentences = 12): string {
  return Array.from({ length: paragraphs }, (_, p) =>
    Array.from({ length: sentences }, (_, s) => `Sentence ${s} of paragraph ${p} says something plain and fairly ordinary.`).join(' ')).join('\n\n');
}

/**
 * Where each chunk sits in the text (found in order, each after the previous one's start), checked to cover
 * it: the first chunk starts it, the last ends it, and each later chunk starts within (or right at the end of)
 * the previous one. Returns the overlaps' texts.
 */
function overlapsOf(text: string, chunks: Chunk[]): string[] {
  const starts: number[] = [];
  for (const chunk of chunks) {
    const start = text.indexOf(chunk.content, starts.length === 0 ? 0 : starts[starts.length - 1]! + 1);
    assert.ok(start >= 0, `chunk ${chunk.index} is a slice of the text`);
    starts.push(start);
  }
  assert.equal(starts[0], 0);
  const last = chunks.length - 1;
  assert.equal(starts[last]! + chunks[last]!.content.length, text.length);
  const overlaps: string[] = [];
  for (let i = 1; i < chunks.length; i++) {
    const previousEnd = starts[i - 1]! + chunks[i - 1]!.content.length;
    assert.ok(starts[i]! <= previousEnd, `chunk ${i} leaves no gap`);
    overlaps.push(text.slice(starts[i], previousEnd));
  }
  // The first chunk and every later one less its overlap give the text back.
  assert.equal(chunks[0]!.content + chunks.slice(1).map((chunk, i) => chunk.content.slice(overlaps[i]!.length)).join(''), text);
  return overlaps;
}

async function assertWellFormed(chunks: Chunk[], maxTokens: number): Promise<void> {
  assert.deepEqual(chunks.map((chunk) => chunk.index), chunks.map((_, i) => i));
  for (const chunk of chunks) {
    assert.ok(chunk.tokens <= maxTokens, `chunk ${chunk.index}: ${chunk.tokens} tokens`);
    assert.equal(chunk.tokens, await count(chunk.content), `chunk ${chunk.index} counts its own content`);
    assert.ok(!chunk.content.includes('\uFFFD'), 'no character split');
  }
}

describe('chunkText', () => {
  test('empty and whitespace-only text gives no chunk', async () => {
    assert.deepEqual(await chunkText(''), []);
    assert.deepEqual(await chunkText(' \n\t\n  '), []);
  });

  test('a short text is one chunk, its outer whitespace trimmed', async () => {
    const chunks = await chunkText('\n  One short paragraph.\nAnd a second line.  \n');
    assert.deepEqual(chunks, [{ index: 0, content: 'One short paragraph.\nAnd a second line.', tokens: await count('One short paragraph.\nAnd a second line.') }]);
  });

  test('defaults: at most 800 tokens, ends at paragraph breaks in the last 15%, 200-token overlaps, all text kept', async () => {
    const text = prose(100, 6); // paragraphs of about 80 tokens: one ends in every 120-token window
    const chunks = await chunkText(text);
    assert.ok(chunks.length > 5);
    await assertWellFormed(chunks, 800);
    for (const chunk of chunks.slice(0, -1)) {
      assert.ok(chunk.content.endsWith('ordinary.\n\n'), `chunk ${chunk.index} ends at a paragraph: ${JSON.stringify(chunk.content.slice(-30))}`);
      assert.ok(chunk.tokens >= 680, `chunk ${chunk.index} moved back at most 15%: ${chunk.tokens}`);
    }
    for (const overlap of overlapsOf(text, chunks)) assert.equal(await count(overlap), 200);
  });

  test('without paragraphs a chunk ends at a line break, else at a sentence end', async () => {
    let sentence = 0;
    // A line break after every fifth sentence (about 65 tokens): one in every 150-token window of 1000 tokens.
    const lines = prose(1, 600).replace(/ordinary\. /g, (match) => (++sentence % 5 === 0 ? 'ordinary.\n' : match));
    const byLine = await chunkText(lines, { maxTokens: 1000, overlapTokens: 100 });
    await assertWellFormed(byLine, 1000);
    for (const chunk of byLine.slice(0, -1)) assert.ok(chunk.content.endsWith('ordinary.\n'), JSON.stringify(chunk.content.slice(-20)));
    overlapsOf(lines, byLine);
    const sentences = prose(1, 400);
    const chunks = await chunkText(sentences, { maxTokens: 300, overlapTokens: 50 });
    await assertWellFormed(chunks, 300);
    for (const chunk of chunks.slice(0, -1)) assert.ok(chunk.content.endsWith('ordinary.'), JSON.stringify(chunk.content.slice(-20)));
    overlapsOf(sentences, chunks);
  });

  test('with no break in the window a chunk is cut where the tokens run out, overlaps exact', async () => {
    const text = Array.from({ length: 5000 }, (_, i) => `w${i}`).join(' ');
    const chunks = await chunkText(text, { maxTokens: 120, overlapTokens: 60 });
    await assertWellFormed(chunks, 120);
    for (const chunk of chunks.slice(0, -1)) assert.ok(chunk.tokens >= 118, `chunk ${chunk.index}: ${chunk.tokens}`);
    for (const overlap of overlapsOf(text, chunks)) assert.equal(await count(overlap), 60);
  });

  test('overlap 0: chunks follow each other end to end', async () => {
    const text = prose(20);
    const chunks = await chunkText(text, { maxTokens: 200, overlapTokens: 0 });
    await assertWellFormed(chunks, 200);
    assert.deepEqual(overlapsOf(text, chunks), chunks.slice(1).map(() => ''));
  });

  test('long unbroken runs (CJK text, a long word, emoji, special-token text) are cut between characters', async () => {
    // Runs of distinct characters (and a pseudo-random word), so that every chunk has one place in the text.
    const run = (from: number, length: number): string => String.fromCodePoint(...Array.from({ length }, (_, i) => from + i));
    let seed = 7;
    const word = Array.from({ length: 3000 }, () => String.fromCharCode(97 + ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % 26))).join('');
    const text = `${run(0x4e00, 2500)} ${word} ${run(0x1f300, 600)} <|endoftext|> ${run(0x3041, 80)}`;
    const chunks = await chunkText(text, { maxTokens: 50, overlapTokens: 25 });
    await assertWellFormed(chunks, 50);
    overlapsOf(text, chunks);
  });

  test('a lone surrogate is read as U+FFFD, not lost', async () => {
    const [chunk] = await chunkText('before \uD800 after');
    assert.equal(chunk!.content, 'before \uFFFD after');
  });

  test('options are validated, never clamped', async () => {
    const rejected = [
      { maxTokens: 49 }, { maxTokens: 8001 }, { maxTokens: 100.5 }, { maxTokens: Number.NaN },
      { overlapTokens: -1 }, { overlapTokens: 401 }, { maxTokens: 100, overlapTokens: 51 }, { overlapTokens: 1.5 },
    ];
    for (const options of rejected) {
      await assert.rejects(chunkText('some text', options), (err: unknown) => {
        assert.ok(err instanceof GatewayError, JSON.stringify(options));
        assert.equal(err.code, 'VALIDATION_ERROR');
        return true;
      });
    }
    for (const options of [{ maxTokens: 50, overlapTokens: 25 }, { maxTokens: 8000, overlapTokens: 4000 }, { maxTokens: 51, overlapTokens: 25 }]) {
      assert.equal((await chunkText('some text', options)).length, 1);
    }
  });

  test('a 5 MB text is chunked in linear time', async () => {
    const text = prose(12_000, 8).slice(0, 5 * 1024 * 1024);
    const started = performance.now();
    const chunks = await chunkText(text);
    const seconds = (performance.now() - started) / 1000;
    assert.ok(seconds < 60, `${seconds.toFixed(1)} s`);
    const tokens = await count(text);
    // About one chunk per 600 new tokens (800 less a 200 overlap), a little more where chunks end early.
    assert.ok(chunks.length >= tokens / 600 && chunks.length <= tokens / 500, `${chunks.length} chunks for ${tokens} tokens`);
    assert.ok(chunks.every((chunk) => chunk.tokens <= 800));
  });
});

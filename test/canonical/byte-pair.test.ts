import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens, decode, encodeGenerator } from 'gpt-tokenizer';
import { BytePairEncoding } from '../../core/canonical/byte-pair.ts';

// gpt-tokenizer's own o200k tables are the reference: every count, piece and decode must match them exactly.
const PLAIN = { disallowedSpecial: new Set<string>() };
const encoding = await BytePairEncoding.loadO200k();

const FIXED = [
  '', 'hello world', 'The quick brown fox jumps over the lazy dog.', "I'm sure they'll've DONE it, haven't THEY'RE",
  '   leading and trailing   ', 'numbers 1234567 3.14159 -42 1,000,000', '<|endoftext|> quoted <|im_start|>system<|im_sep|>',
  'こんにちは世界、元気ですか？', '😀😃😄 emoji 👨‍👩‍👧‍👦 flags 🇫🇷', 'function foo(a, b) {\n  return a + b;\n}\n',
  '\t\ttabs\r\n\r\nCRLF\n\n\n', 'Ünïcödé àccents ñ, e\u0301 combining', 'ﬁ ligature ǅ titlecase ʰ modifier', '\u0000\u0001 control',
  'https://example.com/path/to?query=1&b=2#frag', 'مرحبا بالعالم', 'Привет, мир!', 'a'.repeat(3000), '!!!???...'.repeat(300),
  'x y '.repeat(500), `base64 ${Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7919) % 256)).toString('base64')}`,
  String.fromCharCode(...Array.from({ length: 2000 }, (_, i) => 0x4e00 + ((i * 31) % 20000))), 'lone surrogate \ud800 here',
];

function same(text: string): void {
  const ours = [...encoding.pieces(text)];
  const theirs = [...encodeGenerator(text, PLAIN)];
  assert.deepEqual(ours, theirs, `pieces of ${JSON.stringify(text.slice(0, 60))}`);
  assert.equal(encoding.count(text), countTokens(text, PLAIN), `count of ${JSON.stringify(text.slice(0, 60))}`);
  assert.equal(encoding.decode(ours.flat()), decode(theirs.flat()));
}

test('o200k: counts, pieces and decodes exactly as gpt-tokenizer, on texts chosen for their edges', () => {
  for (const text of FIXED) same(text);
  // Counted twice: the second count of a merged piece is the remembered one.
  for (const text of FIXED) assert.equal(encoding.count(text), countTokens(text, PLAIN));
});

test('o200k: the same on 3,000 random strings over letters, digits, marks, CJK, emoji and whitespace', () => {
  let seed = 1;
  const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const alphabet = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n\t.,;:!?\'"()[]{}<>/-_=+*&^%$#@~`|\\',
    'é', 'ß', 'ж', '中', '文', '😀', '\u0301', 'ǅ', '\r', "'s", "'LL", '  ', '\u00a0'];
  for (let k = 0; k < 3000; k++) {
    const length = Math.floor(random() * 80);
    let text = '';
    for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
    same(text);
  }
});

test('o200k: one piece of 200,000 characters is merged in well under a second (merges are heap-ordered)', () => {
  // The reference takes tens of seconds at this size (its merges are quadratic): it is asked at a tenth of it.
  const tenth = 'a'.repeat(20_000);
  assert.equal(encoding.count(tenth), countTokens(tenth, PLAIN));
  const started = performance.now();
  assert.equal(encoding.count(tenth.repeat(10)), 10 * countTokens(tenth, PLAIN));
  assert.ok(performance.now() - started < 2000, `took ${performance.now() - started} ms`);
});

test('o200k: pieces() generators may interleave with each other and with count()', () => {
  const first = encoding.pieces('alpha beta gamma delta');
  const second = encoding.pieces('one two three');
  const out: number[][] = [];
  out.push(first.next().value as number[]);
  out.push(second.next().value as number[]);
  encoding.count('something else entirely, counted in between');
  out.push(...first, ...second);
  assert.deepEqual(out.flat().sort(), [...encodeGenerator('alpha beta gamma delta', PLAIN), ...encodeGenerator('one two three', PLAIN)].flat().sort());
  assert.equal(encoding.decode(out[0]!), 'alpha');
  assert.equal(encoding.decode(out[1]!), 'one');
});

test('a rank file that is not one is refused with the line at fault; an unknown token does not decode', () => {
  assert.throws(() => BytePairEncoding.parse('YQ== 0\nYg== 2\n'), /line 2 is not "<base64> 1"/);
  assert.throws(() => BytePairEncoding.parse('YQ== 0\nYQ== 1\n'), /rank 1 repeats rank 0/);
  assert.throws(() => BytePairEncoding.parse('Y*== 0\n'), /not base64/);
  const tiny = BytePairEncoding.parse('YQ== 0\nYg== 1\nYWI= 2\n');
  assert.deepEqual([...tiny.pieces('ab')], [[2]]);
  assert.equal(tiny.decode([2, 0]), 'aba');
  assert.throws(() => tiny.decode([3]), /no token 3/);
});

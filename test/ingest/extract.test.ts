import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { extractText, UnsupportedDocumentError } from '../../core/ingest/extract.ts';
import { looksLikeHeader, recordLines } from '../../core/ingest/records.ts';
import { minimalPdf } from '../helpers/minimal-pdf.ts';

const PLANTED = 'The heron counts seventeen lanterns at dusk.';
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const extract = (bytes: Uint8Array, filename: string, mimeType = '') => extractText(bytes, { filename, mimeType });

describe('extractText: formats', () => {
  test('plain text: BOM dropped, CRLF and CR normalized', async () => {
    const result = await extract(utf8(`\uFEFFFirst line\r\n${PLANTED}\rlast line\r\n`), 'notes.txt', 'text/plain');
    assert.deepEqual(result, { text: `First line\n${PLANTED}\nlast line`, format: 'plain' });
  });

  test('Markdown: text kept as lines, markup, link targets and image sources gone', async () => {
    const source = [
      '# Field **notes**', '', `Intro with a [link](https://example.invalid/target) and *emphasis*. ${PLANTED}`, '',
      '- first item', '- second `code` item', '  1. nested numbered', '', '![a lake at dawn](lake.png)', '',
      '| city | rank |', '|------|------|', '| Oslo | 1 |', '', '```js', 'const lanterns = 17;', '```', '',
      '> quoted &amp; kept', '', '<div>inline <b>html</b></div>', '', '---', '', 'Last paragraph.',
    ].join('\n');
    const { text, format } = await extract(utf8(source), 'notes.md', 'text/markdown');
    assert.equal(format, 'markdown');
    assert.equal(text, [
      'Field notes', '', `Intro with a link and emphasis. ${PLANTED}`, '', 'first item\nsecond code item\n1. nested numbered', '',
      'a lake at dawn', '', 'city: Oslo; rank: 1', '', 'const lanterns = 17;', '', 'quoted & kept', '', 'inline html', '', 'Last paragraph.',
    ].join('\n'));
  });

  test('Markdown by extension when the media type is generic', async () => {
    const result = await extract(utf8(`## Heading\n\n**${PLANTED}**\n`), 'README.markdown', 'text/plain');
    assert.deepEqual(result, { text: `Heading\n\n${PLANTED}`, format: 'markdown' });
  });

  test('HTML: blocks as lines, scripts and styles dropped, links keep their text only, no wrapping', async () => {
    const longLine = 'word '.repeat(40).trim();
    const html = `<html><head><title>Ignored title</title><style>p { color: red }</style><script>var secret = 1;</script></head>
      <body><h1>Survey</h1><p>${PLANTED} See <a href="https://example.invalid/more">the appendix</a>.</p>
      <ul><li>alpha</li><li>beta</li></ul><ol><li>gamma</li></ol><p>${longLine}</p><img src="chart.png" alt="a bar chart"><hr>
      <table><tr><th>Name</th><th>Age</th></tr><tr><td>Ann</td><td>31</td></tr><tr><td>Bo</td><td>4</td></tr></table>
      <table><tr><td>1</td><td>2</td></tr><tr><td>3</td><td>4</td></tr></table></body></html>`;
    const { text, format } = await extract(utf8(html), 'survey.html', 'text/html; charset=utf-8');
    assert.equal(format, 'html');
    assert.equal(text, [
      'Survey', '', `${PLANTED} See the appendix.`, '', ' * alpha\n * beta', '', ' 1. gamma', '', longLine, '', 'a bar chart', '',
      'Name: Ann; Age: 31\nName: Bo; Age: 4', '', '1; 2\n3; 4',
    ].join('\n'));
    for (const gone of ['secret', 'color', 'Ignored title', 'example.invalid', 'chart.png', '<']) assert.ok(!text.includes(gone), gone);
  });

  test('JSON: flattened to key paths, arrays indexed, odd keys quoted, deep nesting safe', async () => {
    const doc = { report: { title: PLANTED, tags: ['birds', 'light'], 'odd key': { multi: 'line\r\nbreak' }, empty: [], none: null }, count: 17 };
    const { text, format } = await extract(utf8(JSON.stringify(doc, null, 2)), 'report.json', 'application/json');
    assert.equal(format, 'json');
    assert.equal(text, [
      `report.title: ${PLANTED}`, 'report.tags[0]: birds', 'report.tags[1]: light', 'report["odd key"].multi: line break',
      'report.empty: []', 'report.none: null', 'count: 17',
    ].join('\n'));
    const deep = `${'['.repeat(20000)}1${']'.repeat(20000)}`;
    assert.equal((await extract(utf8(deep), 'deep.json', 'application/json')).text, `${'[0]'.repeat(20000)}: 1`);
  });

  test('JSON Lines: each line a document under its index', async () => {
    const result = await extract(utf8('{"id":1,"text":"first"}\n\n{"id":2,"text":"second"}\n'), 'rows.jsonl', 'application/octet-stream');
    assert.deepEqual(result, { text: '[0].id: 1\n[0].text: first\n[1].id: 2\n[1].text: second', format: 'json' });
  });

  test('CSV with a header: each record labelled with the column names, quoted line breaks kept in one line', async () => {
    const csv = `name,city,note\r\nAnn,Oslo,"${PLANTED}"\r\nBo,,"two\r\nlines"\r\n`;
    const result = await extract(utf8(csv), 'people.csv', 'text/csv');
    assert.deepEqual(result, { text: `name: Ann; city: Oslo; note: ${PLANTED}\nname: Bo; note: two lines`, format: 'csv' });
  });

  test('CSV without a header (a numeric first row), semicolon and tab delimiters', async () => {
    assert.equal((await extract(utf8('1;2;3\n4;5;6\n'), 'numbers.csv', 'text/csv')).text, '1; 2; 3\n4; 5; 6');
    assert.equal((await extract(utf8('kind\tcount\nheron\t17\n'), 'birds.tsv', '')).text, 'kind: heron; count: 17');
  });

  test('PDF: pages joined by a blank line, the caller\'s bytes left intact', async () => {
    const bytes = minimalPdf([['Page one opens (here).', PLANTED], ['Page two closes.']]);
    const length = bytes.byteLength;
    const result = await extract(bytes, 'survey.pdf', 'application/pdf');
    assert.deepEqual(result, { text: `Page one opens (here).\n${PLANTED}\n\nPage two closes.`, format: 'pdf' });
    assert.equal(bytes.byteLength, length, 'PDF.js worked on a copy');
  });

  test('a charset named in the media type is honoured', async () => {
    const latin1 = new Uint8Array(Buffer.from('Caf\u00e9 cr\u00e8me', 'latin1'));
    assert.equal((await extract(latin1, 'menu.txt', 'text/plain; charset=iso-8859-1')).text, 'Caf\u00e9 cr\u00e8me');
  });

  test('UTF-16 with a byte order mark', async () => {
    const utf16 = new Uint8Array([0xff, 0xfe, ...Buffer.from(PLANTED, 'utf16le')]);
    assert.deepEqual(await extract(utf16, 'wide.txt', ''), { text: PLANTED, format: 'plain' });
  });
});

describe('extractText: sniffing without a media type or a known extension', () => {
  test('PDF by its %PDF- header', async () => {
    const result = await extract(minimalPdf([[PLANTED]]), 'download', '');
    assert.deepEqual(result, { text: PLANTED, format: 'pdf' });
  });

  test('HTML by its doctype or <html> tag', async () => {
    const result = await extract(utf8(`\n<!DOCTYPE html><html><body><p>${PLANTED}</p></body></html>`), 'page', 'application/octet-stream');
    assert.deepEqual(result, { text: PLANTED, format: 'html' });
    assert.equal((await extract(utf8(`<HTML><p>${PLANTED}</p></HTML>`), 'page', '')).format, 'html');
  });

  test('JSON when it parses', async () => {
    assert.deepEqual(await extract(utf8('{"a": {"b": [true]}}'), 'blob', ''), { text: 'a.b[0]: true', format: 'json' });
  });

  test('anything else that is text is plain: text mentioning <html> later, JSON-looking text that does not parse', async () => {
    assert.equal((await extract(utf8('Use the <html> element.'), 'tip', '')).format, 'plain');
    assert.deepEqual(await extract(utf8('{ not json'), 'braces', ''), { text: '{ not json', format: 'plain' });
  });

  test('a declared format that does not parse falls back to plain text', async () => {
    assert.deepEqual(await extract(utf8(`{ ${PLANTED}`), 'broken.json', 'application/json'), { text: `{ ${PLANTED}`, format: 'plain' });
  });
});

describe('extractText: unsupported documents', () => {
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0xff, 0xd8]);

  test('binary that is no supported format names the file and its type', async () => {
    await assert.rejects(extract(png, 'photo.png', 'image/png'), (err: unknown) => {
      assert.ok(err instanceof UnsupportedDocumentError);
      assert.equal(err.filename, 'photo.png');
      assert.equal(err.mimeType, 'image/png');
      assert.match(err.message, /^photo\.png \(image\/png\) is not a supported document: binary content/);
      return true;
    });
    await assert.rejects(extract(png, 'photo', ''), /photo \(no media type\) is not a supported document/);
  });

  test('text declared but not valid in its charset', async () => {
    const latin1 = new Uint8Array(Buffer.from('Caf\u00e9', 'latin1'));
    await assert.rejects(extract(latin1, 'menu.txt', 'text/plain'), /menu\.txt \(text\/plain\).*named as plain but its bytes are not valid text/);
  });

  test('valid UTF-8 full of control characters is binary', async () => {
    const bytes = utf8(Array.from({ length: 200 }, (_, i) => String.fromCharCode(i % 8 === 0 ? 1 : 97)).join(''));
    await assert.rejects(extract(bytes, 'blob.bin', ''), UnsupportedDocumentError);
  });

  test('a damaged PDF', async () => {
    await assert.rejects(extract(utf8('%PDF-1.7\nnot really'), 'broken.pdf', 'application/pdf'),
      /broken\.pdf \(application\/pdf\) is not a supported document: the PDF is damaged or not a PDF/);
  });
});

describe('table records', () => {
  test('the header rule: a first row of distinct, non-empty, non-numeric cells over at least one more row', () => {
    assert.equal(looksLikeHeader([['name', 'age'], ['Ann', '31']]), true);
    assert.equal(looksLikeHeader([['name', 'age']]), false, 'no row under it');
    assert.equal(looksLikeHeader([['name', ''], ['Ann', '31']]), false, 'an empty cell');
    assert.equal(looksLikeHeader([['name', '2024'], ['Ann', '31']]), false, 'a number');
    assert.equal(looksLikeHeader([['name', 'Name'], ['Ann', 'Bo']]), false, 'repeated');
  });

  test('cells past the header are labelled by position, empty values skipped, empty records dropped', () => {
    assert.deepEqual(recordLines([['a', 'b'], ['1', '', '3'], ['', '']], true), ['a: 1; column 3: 3']);
  });
});

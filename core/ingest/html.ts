/**
 * HTML as text (html-to-text): block elements become lines and blank lines; scripts, styles and the head are
 * dropped; links keep their text only, images their alt text; list items keep html-to-text's ` * ` or ` 1. `
 * prefix (it allows no empty one); nothing is word-wrapped (the chunker cuts by tokens). A table's rows become
 * `column: value` lines (records.ts), its header taken from a first row of <th> cells, else guessed as a CSV
 * header is.
 */
import { convert, type DomNode, type FormatCallback, type HtmlToTextOptions } from 'html-to-text';
import { recordLines } from './records.ts';

const altText: FormatCallback = (elem, _walk, builder) => {
  const alt: unknown = (elem.attribs as Record<string, unknown> | undefined)?.alt;
  if (typeof alt === 'string' && alt.trim() !== '') builder.addInline(alt.trim());
};

const tableRecords: FormatCallback = (table, walk, builder) => {
  let rowCount = 0;
  let headerRow = false;
  const walkRows = (node: DomNode): void => {
    if (node.type !== 'tag') return;
    if (node.name === 'thead' || node.name === 'tbody' || node.name === 'tfoot') {
      node.children.forEach(walkRows);
      return;
    }
    if (node.name !== 'tr') return;
    const cells = node.children.filter((cell) => cell.type === 'tag' && (cell.name === 'th' || cell.name === 'td'));
    if (rowCount++ === 0) headerRow = cells.length > 0 && cells.every((cell) => cell.name === 'th');
    builder.openTableRow();
    for (const cell of cells) {
      builder.openTableCell();
      walk(cell.children, builder);
      builder.closeTableCell();
    }
    builder.closeTableRow();
  };
  builder.openTable();
  table.children.forEach(walkRows);
  builder.closeTable({
    tableToString: (rows) => recordLines(rows.map((row) => row.map((cell) => cell.text)), headerRow || 'guess').join('\n'),
  });
};

const OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  formatters: { altText, tableRecords },
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'altText' },
    { selector: 'hr', format: 'skip' },
    { selector: 'table', format: 'tableRecords' },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
  ],
};

export function htmlText(html: string): string {
  return convert(html, OPTIONS);
}

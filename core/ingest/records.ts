/**
 * Table rows as text lines that keep their column names: `header1: value1; header2: value2`, so that a chunk
 * cut from the middle of a long table still says what each value is. Shared by CSV files and the tables of
 * HTML and Markdown documents.
 */

/** A number, an amount or a percentage: `12`, `-3.5`, `1,200`, `7%`. A header names a column; it is no number. */
const NUMERIC = /^[-+]?[\d.,]*\d[\d.,]*%?$/;

/**
 * The first row is a header when there is a row below it and its cells are all non-empty, non-numeric and
 * distinct (case-insensitively). Files without a header whose first row is words still pass: their values then
 * carry wrong labels, but nothing is lost.
 */
export function looksLikeHeader(rows: readonly string[][]): boolean {
  const first = rows[0];
  if (!first || rows.length < 2 || first.length === 0) return false;
  const cells = first.map((cell) => oneLine(cell));
  if (cells.some((cell) => cell === '' || NUMERIC.test(cell))) return false;
  return new Set(cells.map((cell) => cell.toLowerCase())).size === cells.length;
}

/**
 * One line per record. With a header, each non-empty value is labelled with its column's name (a cell past the
 * header's width with `column N`); without one, the non-empty values are joined with `; `. Whitespace inside a
 * cell (line breaks too) becomes one space, so a record stays one line.
 */
export function recordLines(rows: readonly string[][], header: boolean | 'guess'): string[] {
  const hasHeader = header === 'guess' ? looksLikeHeader(rows) : header && rows.length > 0;
  const names = hasHeader ? rows[0]!.map((cell) => oneLine(cell)) : [];
  const lines: string[] = [];
  for (const row of hasHeader ? rows.slice(1) : rows) {
    const parts: string[] = [];
    row.forEach((cell, i) => {
      const value = oneLine(cell);
      if (value === '') return;
      if (!hasHeader) parts.push(value);
      else parts.push(`${names[i] || `column ${i + 1}`}: ${value}`);
    });
    if (parts.length > 0) lines.push(parts.join('; '));
  }
  return lines;
}

function oneLine(cell: string): string {
  return cell.replace(/\s+/g, ' ').trim();
}

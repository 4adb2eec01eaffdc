import { parse } from 'csv-parse/sync';
import { recordLines } from './records.ts';

/** The delimiters tried, in order of preference when the first line has as many of two. */
const DELIMITERS = [',', '\t', ';', '|'] as const;

/**
 * The delimiter is the one of `, TAB ; |` that occurs most often in the first line (comma when none does),
 * so TSV and European semicolon files read as well as comma-separated ones.
 */
function guessDelimiter(text: string): string {
  const firstLine = text.slice(0, text.indexOf('\n') === -1 ? text.length : text.indexOf('\n'));
  let best: string = ',';
  let bestCount = 0;
  for (const delimiter of DELIMITERS) {
    const count = firstLine.split(delimiter).length - 1;
    if (count > bestCount) [best, bestCount] = [delimiter, count];
  }
  return best;
}

/** Each record as one line labelled with the header's column names (records.ts); null when it is no CSV. */
export function csvText(text: string): string | null {
  let rows: string[][];
  try {
    rows = parse(text, { delimiter: guessDelimiter(text), relax_column_count: true, relax_quotes: true, skip_empty_lines: true });
  } catch {
    return null;
  }
  return recordLines(rows, 'guess').join('\n');
}

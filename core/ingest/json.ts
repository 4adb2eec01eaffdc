/**
 * JSON as lines `path.to.key: value` (array items as `path[0]`), so that a chunk cut from the middle of a large
 * document still carries the keys that say what its values are. JSON Lines files read as one document per line,
 * each under `[line index]`.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const IDENTIFIER = /^[A-Za-z_$][\w$-]*$/;

function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (IDENTIFIER.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

function scalar(value: null | boolean | number | string): string {
  // A string's own line breaks would split its line from its path.
  return typeof value === 'string' ? value.replace(/\s*\n\s*/g, ' ') : String(value);
}

/** Depth-first in document order, with an explicit stack: deeply nested input cannot overflow the call stack. */
function flatten(root: Json, rootPath: string, lines: string[]): void {
  const stack: Array<[string, Json]> = [[rootPath, root]];
  while (stack.length > 0) {
    const [path, value] = stack.pop()!;
    if (value !== null && typeof value === 'object') {
      const entries: Array<[string | number, Json]> = Array.isArray(value) ? value.map((item, i) => [i, item]) : Object.entries(value);
      if (entries.length === 0) lines.push(`${path === '' ? '' : `${path}: `}${Array.isArray(value) ? '[]' : '{}'}`);
      for (let i = entries.length - 1; i >= 0; i--) stack.push([childPath(path, entries[i]![0]), entries[i]![1]]);
    } else {
      lines.push(path === '' ? scalar(value) : `${path}: ${scalar(value)}`);
    }
  }
}

function parsed(text: string): { ok: true; value: Json } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as Json };
  } catch {
    return { ok: false };
  }
}

/** The flattened lines, or null when the text is neither JSON nor JSON Lines. */
export function jsonText(text: string): string | null {
  const lines: string[] = [];
  const whole = parsed(text);
  if (whole.ok) {
    flatten(whole.value, '', lines);
    return lines.join('\n');
  }
  const records = text.split('\n').filter((line) => line.trim() !== '');
  if (records.length < 2) return null;
  for (const [i, record] of records.entries()) {
    const one = parsed(record);
    if (!one.ok) return null;
    flatten(one.value, `[${i}]`, lines);
  }
  return lines.join('\n');
}

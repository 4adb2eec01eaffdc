/**
 * pipelines.yaml as a positioned document: YAML parsing, ${VAR} interpolation on the parsed scalars (so line
 * and column stay true), and JSON pointer -> file:line:col for error messages.
 */
import { isMap, isPair, isScalar, isSeq, LineCounter, parse as parseYaml, parseDocument, Scalar, visit, type Document, type Node } from 'yaml';

export interface ConfigIssue {
  pointer: string;
  message: string;
  /** 1-based position in the file, when known. */
  line?: number;
  col?: number;
}

export class ConfigError extends Error {
  constructor(readonly file: string, readonly issues: ConfigIssue[]) {
    super(issues.map((i) => formatIssue(file, i)).join('\n'));
    this.name = 'ConfigError';
  }
}

export function formatIssue(file: string, issue: ConfigIssue): string {
  const where = issue.line ? `${file}:${issue.line}:${issue.col ?? 1}` : file;
  return `${where} ${issue.pointer || '/'}: ${issue.message}`;
}

export class PositionedDocument {
  private constructor(private readonly doc: Document, private readonly lines: LineCounter) {}

  static parse(text: string, file: string): PositionedDocument {
    const lines = new LineCounter();
    const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true });
    if (doc.errors.length > 0) {
      throw new ConfigError(file, doc.errors.map((e) => ({
        pointer: '',
        message: `YAML syntax: ${e.message.split('\n')[0]}`,
        line: e.linePos?.[0].line,
        col: e.linePos?.[0].col,
      })));
    }
    return new PositionedDocument(doc, lines);
  }

  /** Replace ${VAR} and ${VAR:-default} in every string value. `$${` writes a literal `${`. */
  interpolate(env: NodeJS.ProcessEnv): ConfigIssue[] {
    const issues: ConfigIssue[] = [];
    visit(this.doc, {
      Scalar: (key, node) => {
        if (key === 'key' || typeof node.value !== 'string') return;
        const raw = node.value;
        if (!raw.includes('$')) return;
        const result = substitute(raw, env);
        if (result.missing.length > 0) {
          for (const name of result.missing) {
            issues.push({ ...this.position(node), pointer: '', message: `environment variable ${name} is not set (write \${${name}:-default} to make it optional)` });
          }
          return;
        }
        // A plain value that is one whole reference takes the type YAML would give the substituted text, so
        // that `port: ${PORT:-8080}` is a number; quotes or text around a reference keep it a string.
        const typed = result.whole && result.text !== '' && node.type === Scalar.PLAIN;
        node.value = typed ? scalarOf(result.text) : result.text;
      },
    });
    return issues;
  }

  toJS(): unknown {
    return this.doc.toJS() ?? {};
  }

  /** Position of the node at a JSON pointer; with `key`, of that key inside the map at the pointer. */
  locate(pointer: string, key?: string): { line?: number; col?: number } {
    const path = pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    let node: unknown = this.doc.contents;
    let lastGood: unknown = node;
    for (const segment of path) {
      node = childOf(node, segment);
      if (!node) break;
      lastGood = node;
    }
    if (node && key !== undefined && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
      if (pair && pair.key) return this.position(pair.key as Node);
    }
    return this.position(lastGood as Node | undefined);
  }

  private position(node: Node | undefined | null): { line?: number; col?: number } {
    const offset = node?.range?.[0];
    if (offset === undefined) return {};
    const { line, col } = this.lines.linePos(offset);
    return { line, col };
  }
}

function childOf(node: unknown, segment: string): unknown {
  if (isMap(node)) {
    const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === segment);
    return pair?.value;
  }
  if (isSeq(node)) return node.items[Number(segment)];
  return undefined;
}

const REFERENCE = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

function substitute(raw: string, env: NodeJS.ProcessEnv): { text: string; missing: string[]; whole: boolean } {
  const missing: string[] = [];
  let references = 0;
  const text = raw.replace(REFERENCE, (match, name: string | undefined, fallback: string | undefined) => {
    if (match === '$$') return '$';
    references++;
    const value = env[name!];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    if (value === '') return '';
    missing.push(name!);
    return '';
  });
  const whole = references === 1 && /^\$\{[^}]*\}$/.test(raw);
  return { text, missing, whole };
}

function scalarOf(text: string): unknown {
  try {
    const value = parseYaml(text);
    return value === null || typeof value === 'object' ? text : value;
  } catch {
    return text;
  }
}

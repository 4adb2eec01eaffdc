/**
 * Markdown as its text: headings, paragraphs, list items and code as lines, blocks apart by a blank line (the
 * chunker's preferred break). Emphasis, link targets, image sources and inline HTML tags are dropped; a link
 * keeps its text, an image its alt text, an ordered item its number, a table row its column names (records.ts).
 */
import { Lexer, type Token, type Tokens } from 'marked';
import { recordLines } from './records.ts';

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Markdown text may hold HTML entities (`&amp;`, `&#8212;`): the common ones become their characters. */
function decodeEntities(text: string): string {
  return text.replace(/&(#x[\da-f]+|#\d+|[a-z]+);/gi, (entity, name: string) => {
    if (name[0] !== '#') return ENTITIES[name.toLowerCase()] ?? entity;
    const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
  });
}

function stripTags(html: string): string {
  return decodeEntities(html.replace(/<!--[\s\S]*?-->/g, '').replace(/<[^>]*>/g, ''));
}

function childTokens(token: Token): Token[] | undefined {
  return 'tokens' in token && Array.isArray(token.tokens) ? (token.tokens as Token[]) : undefined;
}

function ownText(token: Token): string {
  return 'text' in token && typeof token.text === 'string' ? token.text : '';
}

function inline(tokens: readonly Token[]): string {
  let text = '';
  for (const token of tokens) {
    const children = childTokens(token);
    if (token.type === 'br') text += '\n';
    else if (token.type === 'html') continue; // inline tags: their content is the text around them
    else if (token.type === 'codespan') text += ownText(token);
    else if (children) text += inline(children);
    else text += decodeEntities(ownText(token));
  }
  return text;
}

function listLines(list: Tokens.List): string {
  const start = typeof list.start === 'number' ? list.start : 1;
  return list.items.map((item, i) => {
    const body = blocks(item.tokens).join('\n');
    return list.ordered ? `${start + i}. ${body}` : body;
  }).join('\n');
}

function tableLines(table: Tokens.Table): string {
  const rows = [table.header.map((cell) => inline(cell.tokens)), ...table.rows.map((row) => row.map((cell) => inline(cell.tokens)))];
  return recordLines(rows, true).join('\n');
}

function blocks(tokens: readonly Token[]): string[] {
  const out: string[] = [];
  for (const token of tokens) {
    let text: string;
    switch (token.type) {
      case 'space': case 'hr': case 'def': continue;
      case 'code': text = ownText(token); break;
      case 'html': text = stripTags(ownText(token)); break;
      case 'list': text = listLines(token as Tokens.List); break;
      case 'table': text = tableLines(token as Tokens.Table); break;
      case 'blockquote': text = blocks(childTokens(token) ?? []).join('\n\n'); break;
      default: {
        const children = childTokens(token);
        text = children ? inline(children) : decodeEntities(ownText(token));
      }
    }
    text = text.trim();
    if (text !== '') out.push(text);
  }
  return out;
}

export function markdownText(source: string): string {
  return blocks(new Lexer({ gfm: true }).lex(source)).join('\n\n');
}

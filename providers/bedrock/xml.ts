/** S3's XML answers, parsed: shared by the S3 requests and by error mapping. */
import { createRequire } from 'node:module';
import type { XMLParser } from 'fast-xml-parser';

// S3 answers in XML with entities (ETags arrive as &quot;...&quot;, keys may hold &amp;), namespaces and optional or
// repeated elements in any order: a parser reads that as S3 means it, where regexes would misread escaped text.
// Loaded (its CommonJS build, synchronously) with the first S3 answer: a gateway that never calls Bedrock's
// batch or file APIs does not hold the parser in memory.
let parser: XMLParser | undefined;
const require = createRequire(import.meta.url);
function xmlParser(): XMLParser {
  const { XMLParser: Parser } = require('fast-xml-parser') as typeof import('fast-xml-parser');
  return (parser ??= new Parser({ parseTagValue: false, ignoreAttributes: true, ignoreDeclaration: true, removeNSPrefix: true }));
}

export type XmlNode = Record<string, unknown>;

/** S3 may send whitespace before the document (CompleteMultipartUpload keeps its connection alive that way). */
export function parseXml(text: string): XmlNode {
  try {
    const doc = xmlParser().parse(text.trim()) as unknown;
    return doc && typeof doc === 'object' ? doc as XmlNode : {};
  } catch {
    return {};
  }
}

export const textOf = (value: unknown) => (typeof value === 'string' ? value : undefined);
export const listOf = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);
export const node = (value: unknown): XmlNode => (value && typeof value === 'object' && !Array.isArray(value) ? value as XmlNode : {});

/** S3's `<Error><Code/><Message/></Error>`, from a text that holds one. */
export function s3ErrorOf(text: string): { code: string; message: string } | null {
  const error = parseXml(text).Error;
  if (!error || typeof error !== 'object') return null;
  const { Code, Message } = node(error);
  return { code: textOf(Code) ?? 'Error', message: textOf(Message) ?? '' };
}


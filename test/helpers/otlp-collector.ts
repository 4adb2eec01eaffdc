/** A loopback OTLP/HTTP collector (http/json) for trace tests, and the span shapes it decodes. */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from './eventually.ts';

export interface OtlpValue { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: OtlpValue[] } }
export interface OtlpSpan {
  traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number;
  attributes?: Array<{ key: string; value: OtlpValue }>; status?: { code?: number };
  startTimeUnixNano: string; endTimeUnixNano: string;
}
export interface Span extends OtlpSpan { attrs: Record<string, unknown> }

export const SERVER = 2;
export const CLIENT = 3;
export const STATUS_ERROR = 2;

const valueOf = (value: OtlpValue): unknown => {
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(valueOf);
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.doubleValue ?? value.boolValue;
};

export interface Collector {
  url: string;
  spans: Span[];
  /** Every payload as it came, to check what is never exported. */
  payloads: string[];
  close(): Promise<void>;
}

/** Every span it receives, decoded, and every payload as it came. */
export async function startCollector(): Promise<Collector> {
  const spans: Span[] = [];
  const payloads: string[] = [];
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
        res.writeHead(415).end();
        return;
      }
      payloads.push(text);
      const body = JSON.parse(text) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: OtlpSpan[] }> }> };
      for (const resource of body.resourceSpans ?? []) {
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({ ...span, attrs: Object.fromEntries((span.attributes ?? []).map((a) => [a.key, valueOf(a.value)])) });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    payloads,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

export const hex = (bytes: number) => Array.from({ length: bytes }, () => Math.floor(Math.random() * 256).toString(16).padStart(2, '0')).join('');
/** A caller's trace: a new trace id and the caller's span id. */
export const incoming = () => ({ traceId: hex(16), parentId: hex(8) });

/** The trace's spans once the server span and `clients` upstream spans have arrived. */
export async function spansOf(collector: { spans: Span[] }, traceId: string, clients: number): Promise<{ server: Span; upstream: Span[] }> {
  let found: { server: Span; upstream: Span[] } | undefined;
  await eventually(async () => {
    const spans = collector.spans.filter((s) => s.traceId === traceId);
    const server = spans.find((s) => s.kind === SERVER);
    const upstream = spans.filter((s) => s.kind === CLIENT);
    assert.ok(server, 'the server span arrived');
    assert.equal(upstream.length, clients, 'every upstream span arrived');
    found = { server, upstream };
  });
  return found!;
}


/**
 * The tracer, loaded only when traces are on (tracing.ts): a SERVER span per request, parented on the caller's
 * W3C traceparent when it is valid, and a CLIENT span per upstream attempt carrying the GenAI conventions, whose
 * context goes upstream as traceparent. Contexts are passed explicitly and, for the upstream client, through an
 * AsyncLocalStorage: no global context manager or propagator is registered, so an embedding application's own
 * OpenTelemetry setup is left alone.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context as KoaContext } from 'koa';
import { defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ChatCompletionChunk } from '../canonical/chat.ts';
import { GatewayError } from '../errors.ts';
import { VERSION } from '../version.ts';
import { requestAttributes, resultAttributes, StreamAttributes, operationName } from './tracing-genai.ts';
import type { RequestTrace, Tracing, TracingSettings } from './tracing-types.ts';

/** key=value pairs, comma-separated, percent-encoded (the OTEL_RESOURCE_ATTRIBUTES format). */
function parseResourceAttributes(text: string | undefined): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    try {
      attributes[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      // A pair that is not valid percent-encoding is skipped, as the SDK's own detector does.
    }
  }
  return attributes;
}

const upstreamStatus = (err: unknown) =>
  err instanceof GatewayError ? (err.details as { upstreamStatus?: number } | null | undefined)?.upstreamStatus : undefined;

/** error.type: the upstream's status when it answered one, else the gateway's error code, else the error's class. */
function errorType(err: unknown): string {
  const status = upstreamStatus(err);
  if (typeof status === 'number') return String(status);
  if (err instanceof GatewayError) return err.code;
  return err instanceof Error && err.name ? err.name : '_OTHER';
}

/** Only the error's kind goes on the span: messages may quote what the caller or the provider wrote. */
function fail(span: Span, type: string): void {
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

export function createTracing(settings: TracingSettings): Tracing {
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.version': VERSION, ...parseResourceAttributes(settings.resourceAttributes) }))
    .merge(resourceFromAttributes({ 'service.name': settings.serviceName }));
  // The exporter's headers, timeout and compression come from OTEL_EXPORTER_OTLP_*, as the exporter reads them.
  const provider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.url }), settings.batch)],
  });
  const tracer = provider.getTracer('aigw', VERSION);
  const propagator = new W3CTraceContextPropagator();
  const active = new AsyncLocalStorage<Context>();

  function startRequest(ctx: KoaContext, requestId: string): RequestTrace {
    const parent = propagator.extract(ROOT_CONTEXT, ctx.req.headers, defaultTextMapGetter);
    const server = tracer.startSpan(ctx.method, {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path, 'url.scheme': ctx.protocol, 'aigw.request_id': requestId },
    }, parent);
    const serverContext = trace.setSpan(parent, server);
    const open = new Set<Span>();
    let errorCode: string | undefined;

    const endAttempt = (span: Span, attributes: Record<string, string | number | string[]>, failure?: string) => {
      if (!open.delete(span)) return;
      span.setAttributes(attributes);
      if (failure) fail(span, failure);
      span.end();
    };

    return {
      run: (fn) => active.run(serverContext, fn),
      failed(code) {
        errorCode = code;
      },
      async upstreamAttempt(gw, request, target, call) {
        const attributes = requestAttributes(request, target);
        const url = new URL(target.baseUrl);
        const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
        const span = tracer.startSpan(`${operationName(request)} ${target.upstreamModel}`, {
          kind: SpanKind.CLIENT,
          attributes: { ...attributes, 'server.address': url.hostname, 'server.port': port },
        }, serverContext);
        open.add(span);
        try {
          await active.run(trace.setSpan(serverContext, span), call);
        } catch (err) {
          const status = upstreamStatus(err);
          endAttempt(span, typeof status === 'number' ? { 'http.response.status_code': status } : {}, gw.signal.aborted ? 'aborted' : errorType(err));
          throw err;
        }
        if (gw.stream) gw.stream = traced(gw.stream, span, gw.signal, endAttempt);
        else endAttempt(span, gw.result ? resultAttributes(gw.result) : {});
      },
      end(status, route) {
        for (const span of [...open]) endAttempt(span, {}, 'aborted');
        server.setAttribute('http.response.status_code', status);
        if (route) {
          server.setAttribute('http.route', route);
          server.updateName(`${ctx.method} ${route}`);
        }
        // A server span is an error only for a 5xx: a 4xx is the caller's (the HTTP conventions).
        if (status >= 500) fail(server, errorCode ?? String(status));
        else if (errorCode) server.setAttribute('error.type', errorCode);
        server.end();
      },
    };
  }

  return {
    url: settings.url,
    startRequest,
    outgoingHeaders(headers) {
      const current = active.getStore();
      if (!current) return headers;
      const out: Record<string, string> = {};
      for (const [name, value] of Object.entries(headers)) {
        const lower = name.toLowerCase();
        if (lower !== 'traceparent' && lower !== 'tracestate') out[name] = value;
      }
      propagator.inject(current, out, defaultTextMapSetter);
      return out;
    },
    async close() {
      await provider.forceFlush();
      await provider.shutdown();
    },
  };
}

type EndAttempt = (span: Span, attributes: Record<string, string | number | string[]>, failure?: string) => void;

/**
 * The stream as it was, ending the attempt's span with what the stream reported once it ends: completed, failed,
 * or given up by its consumer (the client left), the last two as errors.
 */
async function* traced(stream: AsyncIterable<ChatCompletionChunk>, span: Span, signal: AbortSignal, end: EndAttempt): AsyncGenerator<ChatCompletionChunk> {
  const seen = new StreamAttributes();
  // A consumer that stops pulling without closing the iterator still ends the span when the client leaves.
  const onAbort = () => end(span, seen.attributes(), 'aborted');
  signal.addEventListener('abort', onAbort, { once: true });
  let outcome: string | undefined = 'aborted';
  try {
    for await (const chunk of stream) {
      seen.note(chunk);
      yield chunk;
    }
    outcome = undefined;
  } catch (err) {
    outcome = signal.aborted ? 'aborted' : errorType(err);
    throw err;
  } finally {
    signal.removeEventListener('abort', onAbort);
    end(span, seen.attributes(), outcome);
  }
}

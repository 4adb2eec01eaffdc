/**
 * OpenTelemetry traces, off unless the standard OTEL_* variables ask for them. When off, nothing of the
 * OpenTelemetry SDK, API or exporter is loaded and the request path carries `undefined` where a tracer would be:
 * one check per request, no span objects, no context propagation. When on, tracing-sdk.ts is imported once, at
 * createGateway, and exports to an OTLP/HTTP collector (http/json) through a BatchSpanProcessor.
 */
import type { Tracing, TracingEnv, TracingSettings } from './tracing-types.ts';

export type { AttemptState, AttemptTarget, RequestTrace, TracedState, Tracing, TracingEnv, TracingSettings } from './tracing-types.ts';

const DEFAULT_ENDPOINT = 'http://localhost:4318';
const SUPPORTED_PROTOCOL = 'http/json';

const listOf = (value: string | undefined) => (value ?? '').split(',').map((v) => v.trim().toLowerCase()).filter(Boolean);
const nonEmpty = (value: string | undefined) => (value && value.trim() !== '' ? value.trim() : undefined);

/**
 * Reads the standard variables. On when OTEL_SDK_DISABLED is not "true" and either OTEL_TRACES_EXPORTER lists
 * otlp or an OTLP endpoint is set; OTEL_TRACES_EXPORTER=none turns it off. What the gateway cannot honour (another
 * exporter, the grpc or protobuf protocol) fails the start with a message, rather than exporting something else.
 */
export function tracingSettings(env: TracingEnv): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const exporters = listOf(env.OTEL_TRACES_EXPORTER);
  if (exporters.includes('none')) return undefined;
  const tracesEndpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const endpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (!exporters.includes('otlp') && !tracesEndpoint && !endpoint) return undefined;
  const others = exporters.filter((name) => name !== 'otlp');
  if (others.length > 0) {
    throw new Error(`OTEL_TRACES_EXPORTER=${env.OTEL_TRACES_EXPORTER}: aigw exports traces only with "otlp" (or "none" to turn them off)`);
  }
  const protocol = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ?? nonEmpty(env.OTEL_EXPORTER_OTLP_PROTOCOL);
  if (protocol !== undefined && protocol !== SUPPORTED_PROTOCOL) {
    const name = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
    throw new Error(`${name}=${protocol}: aigw exports traces as OTLP over HTTP with JSON only; set it to ${SUPPORTED_PROTOCOL} (collectors accept it on the OTLP/HTTP port, 4318)`);
  }
  const url = tracesEndpoint ?? `${(endpoint ?? DEFAULT_ENDPOINT).replace(/\/+$/, '')}/v1/traces`;
  try {
    new URL(url);
  } catch {
    throw new Error(`the OTLP traces endpoint ${JSON.stringify(url)} is not a URL`);
  }
  return { serviceName: nonEmpty(env.OTEL_SERVICE_NAME) ?? 'aigw', resourceAttributes: nonEmpty(env.OTEL_RESOURCE_ATTRIBUTES), url, batch: batchSettings(env) };
}

const BATCH_VARIABLES = {
  OTEL_BSP_MAX_QUEUE_SIZE: 'maxQueueSize',
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: 'maxExportBatchSize',
  OTEL_BSP_SCHEDULE_DELAY: 'scheduledDelayMillis',
  OTEL_BSP_EXPORT_TIMEOUT: 'exportTimeoutMillis',
} as const;

/** Read here rather than by the SDK, so that the variables come from the same environment as the rest. */
function batchSettings(env: TracingEnv): TracingSettings['batch'] {
  const batch: TracingSettings['batch'] = {};
  for (const [name, field] of Object.entries(BATCH_VARIABLES)) {
    const text = nonEmpty(env[name]);
    if (text === undefined) continue;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 0) throw new Error(`${name}=${text}: expected a whole number of ${field.endsWith('Millis') ? 'milliseconds' : 'spans'}`);
    batch[field] = value;
  }
  return batch;
}

/** The gateway's tracer when the environment asks for one; the SDK is imported only then. */
export async function loadTracing(env: TracingEnv): Promise<Tracing | undefined> {
  const settings = tracingSettings(env);
  if (!settings) return undefined;
  const { createTracing } = await import('./tracing-sdk.ts');
  return createTracing(settings);
}

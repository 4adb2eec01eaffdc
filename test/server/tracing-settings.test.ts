/** Which OTEL_* settings turn traces on, and the ones the gateway refuses rather than export something else. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tracingSettings } from '../../core/observability/tracing.ts';

test('off unless an OTLP endpoint is set or OTEL_TRACES_EXPORTER lists otlp; none and OTEL_SDK_DISABLED win', () => {
  assert.equal(tracingSettings({}), undefined);
  assert.equal(tracingSettings({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_HEADERS: 'a=b' }), undefined);
  assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }), undefined);
  assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' }), undefined);
  assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'false' })?.url, 'http://c:4318/v1/traces');
});

test('the traces URL: the signal-specific endpoint as written, else the base endpoint plus /v1/traces, else localhost', () => {
  assert.equal(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp' })?.url, 'http://localhost:4318/v1/traces');
  assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/base/' })?.url, 'http://c:4318/base/v1/traces');
  assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9/x' })?.url, 'http://t:9/x');
  assert.throws(() => tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' }), /is not a URL/);
});

test('service name, resource attributes and batch settings', () => {
  const settings = tracingSettings({
    OTEL_TRACES_EXPORTER: 'otlp', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod', OTEL_BSP_SCHEDULE_DELAY: '200', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '64',
  });
  assert.deepEqual(settings, {
    serviceName: 'aigw', resourceAttributes: 'deployment.environment.name=prod', url: 'http://localhost:4318/v1/traces',
    batch: { scheduledDelayMillis: 200, maxExportBatchSize: 64 },
  });
  assert.equal(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SERVICE_NAME: 'edge-gw' })?.serviceName, 'edge-gw');
  assert.throws(() => tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_BSP_SCHEDULE_DELAY: 'soon' }), /OTEL_BSP_SCHEDULE_DELAY=soon: expected a whole number of milliseconds/);
});

test('what the gateway cannot honour fails the start: another exporter, another protocol than http/json', () => {
  assert.throws(() => tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp,console' }), /only with "otlp"/);
  assert.throws(() => tracingSettings({ OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }), /only with "otlp"/);
  assert.throws(() => tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }), /OTEL_EXPORTER_OTLP_PROTOCOL=http\/protobuf: .* http\/json/);
  assert.throws(() => tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc/);
  assert.equal(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })?.url, 'http://localhost:4318/v1/traces');
  // Off settings are not checked: a protobuf protocol set for other signals does not stop a gateway without traces.
  assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }), undefined);
});

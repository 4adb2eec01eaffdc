/**
 * The parts of the metrics and the logs that explain which need no gateway: who may scrape, the refusal log's
 * throttle and the store stall lines, each on an injected clock.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isLoopbackAddress, metricsAccess } from '../../core/observability/router.ts';
import { RefusalLog } from '../../core/observability/refusals.ts';
import type { RequestOutcome } from '../../core/observability/outcome.ts';
import { StoreStallReporter } from '../../core/observability/store-stalls.ts';
import type { Log } from '../../core/log.ts';
import { Registry } from 'prom-client';
import { CounterFamily, HistogramFamily } from '../../core/observability/series.ts';

const TOKEN = 'metrics-token-0123456789';

/** A Log that keeps each line's fields, with its message as `msg`. */
function capture(): { log: Log; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const write = (fields: object | string, msg?: string) => {
    lines.push(typeof fields === 'string' ? { msg: fields } : { ...fields, msg });
  };
  return { log: { debug: write, info: write, warn: write, error: write }, lines };
}

describe('limit refusals in the log', () => {
  const refused = (level: string, tenant: string): RequestOutcome => ({
    requestId: 'r', method: 'POST', path: '/v1/chat/completions', route: '/v1/chat/completions', status: 429, durationMs: 1,
    code: 'RATE_LIMIT_EXCEEDED', tenant, keyId: 'key-1', refusal: { code: 'RATE_LIMIT_EXCEEDED', level },
  });

  test('at most one line a minute per (level, tenant), counting the refusals since the last line', () => {
    const { log: logger, lines } = capture();
    let now = 1_000_000;
    const log = new RefusalLog(logger, () => now);
    log.note(refused('apiKey', 'acme'));
    for (let i = 0; i < 5; i++) log.note(refused('apiKey', 'acme'));
    log.note(refused('tenant', 'acme'));
    log.note(refused('apiKey', 'globex'));
    log.note({ ...refused('apiKey', 'acme'), refusal: undefined, status: 200, code: undefined });
    assert.deepEqual(lines.map((l) => [l.level, l.tenant, l.refusals]), [['apiKey', 'acme', 1], ['tenant', 'acme', 1], ['apiKey', 'globex', 1]]);
    now += 59_999;
    log.note(refused('apiKey', 'acme'));
    assert.equal(lines.length, 3, 'still within the minute');
    now += 1;
    log.note(refused('apiKey', 'acme'));
    assert.deepEqual(lines.at(-1), {
      code: 'RATE_LIMIT_EXCEEDED', level: 'apiKey', tenant: 'acme', refusals: 7, intervalMs: 60_000,
      route: '/v1/chat/completions', keyId: 'key-1', msg: 'requests refused by a limit (RATE_LIMIT_EXCEEDED) at the apiKey level',
    });
  });
});

describe('who may scrape', () => {
  test('loopback is the socket peer on 127.0.0.0/8 or ::1, IPv4-mapped too', () => {
    for (const address of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1', '0:0:0:0:0:0:0:1']) assert.ok(isLoopbackAddress(address), address);
    for (const address of ['10.0.0.1', '::ffff:10.0.0.1', '::', '::2', 'fe80::1', '128.0.0.1', '', undefined, 'localhost']) assert.ok(!isLoopbackAddress(address), String(address));
  });

  test('a non-loopback scraper needs the configured token; without one it is refused', () => {
    const open = metricsAccess({ enabled: true });
    open('127.0.0.1', '');
    assert.throws(() => open('10.1.2.3', `Bearer ${TOKEN}`), { code: 'AUTH_FORBIDDEN' });
    const guarded = metricsAccess({ enabled: true, token: TOKEN });
    guarded('10.1.2.3', `Bearer ${TOKEN}`);
    assert.throws(() => guarded('10.1.2.3', ''), { code: 'AUTH_REQUIRED' });
    assert.throws(() => guarded('10.1.2.3', 'Bearer wrong-token-0123456789'), { code: 'AUTH_INVALID_TOKEN' });
  });
});

describe('store stalls', () => {
  test('lost and back: one line each way, the second with how long it was lost; the metrics told both', () => {
    const { log, lines } = capture();
    let now = 5_000;
    const told: Array<[string, boolean]> = [];
    const reporter = new StoreStallReporter(log, () => now);
    reporter.metrics = { storeStall: (store, stalled) => told.push([store, stalled]) };
    reporter.report('kv', true, 250);
    now += 1_234;
    reporter.report('kv', false, 250);
    assert.deepEqual(lines.map(({ msg: _msg, ...fields }) => fields), [{ store: 'kv', timeoutMs: 250 }, { store: 'kv', lostForMs: 1_234 }]);
    assert.match(String(lines[0]!.msg), /^the kv answered nothing for 250 ms/);
    assert.equal(lines[1]!.msg, 'the kv answers again');
    assert.deepEqual(told, [['kv', true], ['kv', false]]);
  });
});

describe('per-request series, exposed through prom-client', () => {
  test('a histogram counts each observation in its bucket, cumulated in the exposition, with +Inf, sum and count', async () => {
    const registry = new Registry();
    const family = new HistogramFamily('t_seconds', 'A test histogram.', ['route'], [0.1, 1]);
    const counter = new CounterFamily('t_total', 'A test counter.', ['route', 'kind']);
    registry.registerMetric(family as never);
    registry.registerMetric(counter as never);
    const series = family.of('/v1/x');
    assert.equal(family.of('/v1/x'), series, 'the same series for the same labels');
    for (const value of [0.05, 0.1, 0.5, 2, 3]) series.observe(value);
    counter.of('/v1/x', 'a"b').inc();
    counter.of('/v1/x', 'a"b').inc(2.5);
    const text = await registry.metrics();
    assert.match(text, /^# TYPE t_seconds histogram$/m);
    assert.match(text, /^t_seconds_bucket\{route="\/v1\/x",le="0\.1"\} 2$/m, 'an observation equal to a bound is inside it');
    assert.match(text, /^t_seconds_bucket\{route="\/v1\/x",le="1"\} 3$/m);
    assert.match(text, /^t_seconds_bucket\{route="\/v1\/x",le="\+Inf"\} 5$/m);
    assert.match(text, /^t_seconds_sum\{route="\/v1\/x"\} 5\.65$/m);
    assert.match(text, /^t_seconds_count\{route="\/v1\/x"\} 5$/m);
    assert.match(text, /^# TYPE t_total counter$/m);
    assert.match(text, /^t_total\{route="\/v1\/x",kind="a\\"b"\} 3\.5$/m, 'label values escaped by the registry');
  });

  test('label values are given in order and in full', () => {
    const family = new CounterFamily('t2_total', 'A test counter.', ['a', 'b']);
    assert.throws(() => family.of('only-one'), /2 label values expected/);
    assert.throws(() => new HistogramFamily('t3', 'x', [], [1, 1]), /must increase/);
  });
});

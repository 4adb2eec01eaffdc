/**
 * The benchmark harness starts, measures and writes its outputs. Not a benchmark: tiny durations, no pinning,
 * three variants, written to a temp folder (never the committed docs/benchmarks.md or bench/results.json).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { QUICK, runBench } from '../../bench/run.ts';
import type { Results } from '../../bench/report.ts';

test('the bench harness runs in quick mode and writes results.json, the report and the plot', { timeout: 90_000 }, async () => {
  const out = mkdtempSync(join(tmpdir(), 'aigw-bench-smoke-'));
  try {
    const lines: string[] = [];
    const results = await runBench({
      mode: 'quick',
      settings: QUICK,
      variants: ['direct', 'passthrough', 'aigw-full'],
      soak: false,
      pin: false,
      resultsFile: join(out, 'results.json'),
      reportFile: join(out, 'benchmarks.md'),
      svgFile: join(out, 'benchmarks.svg'),
      databaseUrl: '',
      redisUrl: '',
      log: (line) => lines.push(line),
    });
    const written = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as Results;
    assert.deepEqual(written.variants.map((v) => v.id), ['direct', 'passthrough', 'aigw-full']);
    assert.equal(written.meta.mode, 'quick');
    assert.ok(written.meta.calibrationMs && written.meta.calibrationMs.start > 0 && written.meta.calibrationMs.end > 0, 'the machine speed is recorded');
    for (const v of written.variants) {
      assert.equal(v.error, undefined, `${v.id} failed: ${v.error}\n${lines.join('\n')}`);
      assert.ok(v.latency && v.latency.n > 0, `${v.id} has latency samples`);
      assert.ok(v.stream && v.stream.streams > 0 && v.stream.chunks > 0, `${v.id} streamed`);
      assert.ok(v.throughput && v.throughput.steps.length > 0, `${v.id} has a throughput ramp`);
      assert.ok(v.saturation && v.saturation.requests > 0 && v.saturation.errors === 0, `${v.id} has a closed-loop saturation run`);
    }
    const full = written.variants.find((v) => v.id === 'aigw-full')!;
    assert.ok(full.description.includes('auth'), 'the full pipeline names its plugins');
    assert.equal(typeof full.latency!.addedP99, 'number', 'added latency is computed against direct');
    assert.ok((full.rss?.idleMb ?? 0) > 0, 'the gateway process RSS is read');
    assert.ok((full.saturation!.rssMb ?? 0) > 0 && (full.saturation!.perCore ?? 0) > 0, 'the saturation run reads the RSS under load and the rate per core');
    assert.equal(written.variants.find((v) => v.id === 'direct')!.saturation!.perCore, null, 'direct has no server, so no rate per core');
    assert.ok(written.targets.length >= 6 && written.targets.every((t) => t.name && t.target && 'met' in t));
    assert.equal(results.variants.length, 3);
    const report = readFileSync(join(out, 'benchmarks.md'), 'utf8');
    assert.match(report, /## Targets/);
    assert.match(report, /Machine speed: a fixed CPU workload/);
    assert.match(report, /\| aigw-full \|/);
    assert.match(report, /### Saturation \(closed loop\)/);
    assert.match(readFileSync(join(out, 'benchmarks.svg'), 'utf8'), /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.ok(existsSync(join(out, 'benchmarks.svg')));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

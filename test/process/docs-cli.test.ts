/**
 * `aigw docs --check | --write` and `aigw providers --write` as a maintainer runs them: child processes over a
 * folder of documents with stale, fresh and missing generated regions, through the one region helper.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { regionEnd, regionStart } from '../../core/doc-regions.ts';
import { renderRegion } from '../../core/cli/docs-command.ts';
import { runCli } from '../helpers/process.ts';

let dir: string;
const stale = (id: string) => `${regionStart(id)}\n| an old table |\n${regionEnd(id)}`;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aigw-docs-'));
  await mkdir(join(dir, 'docs'));
  await writeFile(join(dir, 'README.md'), `# Project\n\n${stale('plugins')}\n\nProse stays as written.\n`);
  await writeFile(join(dir, 'docs', 'limits.md'), `# Limits\n\n${renderRegion('config:ratelimit')}\n\nand\n\n${stale('errors:RATE_LIMIT_EXCEEDED')}\n`);
  await writeFile(join(dir, 'docs', 'plain.md'), '# Nothing generated here\n');
});
after(() => rm(dir, { recursive: true, force: true }));

test('--check names each stale file and region and the command, and exits 1; --write fixes them; --check then passes', async () => {
  const checked = await runCli(['docs', '--check', '--dir', dir], {});
  assert.equal(checked.code, 1, checked.stderr);
  assert.match(checked.stderr, /^README\.md: stale plugins$/m);
  assert.match(checked.stderr, /^docs\/limits\.md: stale errors:RATE_LIMIT_EXCEEDED$/m);
  assert.match(checked.stderr, /run `npx aigw docs --write`/);
  assert.doesNotMatch(checked.stderr, /plain\.md|config:ratelimit/);

  const written = await runCli(['docs', '--write', '--dir', dir], {});
  assert.equal(written.code, 0, written.stderr);
  assert.match(written.stdout, /README\.md: rewrote plugins/);
  const readme = await readFile(join(dir, 'README.md'), 'utf8');
  assert.equal(readme, `# Project\n\n${renderRegion('plugins')}\n\nProse stays as written.\n`);
  assert.match(readme, /\| `ratelimit` \|/);
  const limits = await readFile(join(dir, 'docs', 'limits.md'), 'utf8');
  assert.match(limits, /\| `RATE_LIMIT_EXCEEDED` \| 429 \|/);
  assert.doesNotMatch(limits, /BUDGET_EXCEEDED/, 'only the codes the region names');

  const again = await runCli(['docs', '--check', '--dir', dir], {});
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /up to date/);
});

test('a region of an unknown kind is an error naming the file, not a silent skip', async () => {
  const other = await mkdtemp(join(tmpdir(), 'aigw-docs-unknown-'));
  try {
    await mkdir(join(other, 'docs'));
    await writeFile(join(other, 'README.md'), `${stale('config:no-such-plugin')}\n`);
    const result = await runCli(['docs', '--check', '--dir', other], {});
    assert.equal(result.code, 1);
    assert.match(result.stderr, /README\.md: no built-in plugin "no-such-plugin"/);
  } finally {
    await rm(other, { recursive: true, force: true });
  }
});

test('providers --write appends the table to a file without one, then rewrites it in place', async () => {
  const file = join(dir, 'providers.md');
  await writeFile(file, '# Providers\n\nIntro.\n');
  const first = await runCli(['providers', '--write', file], {});
  assert.equal(first.code, 0, first.stderr);
  const table = renderRegion('providers');
  assert.equal(await readFile(file, 'utf8'), `# Providers\n\nIntro.\n\n${table}\n`);
  await writeFile(file, `# Providers\n\n${stale('providers').replace(regionStart('providers'), '<!-- providers:start (old) -->')}\n\nAfter.\n`);
  const second = await runCli(['providers', '--write', file], {});
  assert.equal(second.code, 0, second.stderr);
  assert.equal(await readFile(file, 'utf8'), `# Providers\n\n${table}\n\nAfter.\n`);
});

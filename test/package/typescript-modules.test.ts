/**
 * TypeScript plugins outside this checkout load with the gateway run from source (bin/aigw.js, tsx's ESM hooks),
 * whether their package is an ES module one or leaves them CommonJS (no "type"), where a plain import() used to
 * fail with "Cannot require() ES Module ... in a cycle". The compiled gateway is test/package/install.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runCli } from '../helpers/process.ts';

// ES module syntax with type annotations: what made a CommonJS-format file fail either way.
const plugin = (name: string) => `import { format } from 'node:util';

interface Config { value: string }

export default {
  apiVersion: 1,
  name: '${name}',
  description: 'Sets a header.',
  configSchema: { type: 'object', additionalProperties: false, properties: { value: { type: 'string' } } },
  setup(config: Config) {
    return async (ctx: { set(name: string, value: string): void }, next: () => Promise<void>) => {
      await next();
      ctx.set('x-${name}', format('%s', config.value));
    };
  },
};
`;

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aigw-ts-modules-'));
  await mkdir(join(dir, 'esm'));
  await writeFile(join(dir, 'esm', 'package.json'), JSON.stringify({ name: 'esm-plugin', type: 'module', main: 'index.ts' }));
  await writeFile(join(dir, 'esm', 'index.ts'), plugin('esm-plugin'));
  await mkdir(join(dir, 'commonjs'));
  await writeFile(join(dir, 'commonjs', 'package.json'), JSON.stringify({ name: 'commonjs-plugin', main: 'index.ts' }));
  await writeFile(join(dir, 'commonjs', 'index.ts'), plugin('commonjs-plugin'));
  await writeFile(join(dir, 'pipelines.yaml'), `plugins: [./esm, ./commonjs/index.ts]
pipelines:
  - name: default
    routes: []
    plugins: [auth, {esm-plugin: {value: a}}, {commonjs-plugin: {value: b}}]
`);
});
after(() => rm(dir, { recursive: true, force: true }));

test('aigw validate loads a .ts plugin of an ES module package and one of a CommonJS package', async () => {
  const result = await runCli(['validate', join(dir, 'pipelines.yaml')], {});
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.match(result.stdout, /valid/);
});

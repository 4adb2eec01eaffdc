/**
 * A third-party translator package (test/fixtures/aigw-provider-acme), installed beside aigw as an operator would
 * install it, loaded through providerPackages, runs the same kit as the built-ins.
 */
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { ProviderDefinition } from '../../core/dispatch/provider.ts';
import { installSourceAigw } from '../helpers/source-aigw.ts';
import { runConformance } from './kit.ts';
import { openAiWire } from './wires/openai.ts';

// The package imports `aigw/provider` and `aigw/upstream-errors`: give it an aigw to resolve, as npm would (the
// packed tarball installed by an operator is test/package/install.test.ts).
const installed = await mkdtemp(join(tmpdir(), 'aigw-provider-acme-'));
await cp(new URL('../fixtures/aigw-provider-acme/', import.meta.url), installed, { recursive: true });
await installSourceAigw(join(installed, 'node_modules'));
after(() => rm(installed, { recursive: true, force: true }));

const acme = (await import(pathToFileURL(join(installed, 'index.mjs')).href) as { default: ProviderDefinition }).default;

runConformance({
  provider: acme,
  package: installed,
  wire: { ...openAiWire, assertAuth: (req, credential) => assert.equal(req.headers['x-acme-key'], credential) },
  credential: 'acme-secret',
  providerBlock: (baseUrl) => `baseUrl: ${baseUrl}\napiKey: acme-secret`,
});

/**
 * An `aigw` for a third-party package under test to import, backed by this checkout's TypeScript sources.
 * The published manifest's exports name the compiled dist/, but a gateway started from source loads core/*.ts:
 * a package resolving `aigw/*` to dist would run a second copy of each module, with state of its own, and one
 * that is missing or stale until the next build. This manifest maps each export back to its source file.
 */
import { readFileSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT } from './process.ts';

type ExportTarget = string | { types?: string; default: string };

/** Lays out `<nodeModules>/aigw` with the source exports; core/ is a symlink, so module URLs are the checkout's. */
export async function installSourceAigw(nodeModules: string): Promise<void> {
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { exports: Record<string, ExportTarget> };
  const exports = Object.fromEntries(Object.entries(manifest.exports)
    .filter(([subpath]) => subpath !== './package.json')
    .map(([subpath, target]) => [subpath, toSource(typeof target === 'string' ? target : target.default)]));
  const dir = join(nodeModules, 'aigw');
  await mkdir(dir, { recursive: true });
  for (const folder of ['core', 'plugins', 'providers', 'test']) await symlink(join(REPO_ROOT, folder), join(dir, folder), 'dir');
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'aigw', type: 'module', exports }, null, 2));
}

function toSource(target: string): string {
  return target.startsWith('./dist/') ? `./${target.slice('./dist/'.length).replace(/\.js$/, '.ts')}` : target;
}

/**
 * Packing and installing as an operator would: `npm pack` of this checkout (its prepare script builds dist/)
 * and of the example packages, then plain `npm install` of the tarballs into a project of its own.
 */
import { spawn } from 'node:child_process';
import { readFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { distIsFresh } from '../../bin/dist-fresh.js';
import { REPO_ROOT } from '../helpers/process.ts';

/**
 * npm's own settings from the environment of an `npm test` run (npm_config_*, the running script's name) would
 * steer the nested npm: it gets the rest of the environment only.
 */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
}

export function npm(args: string[], cwd: string, timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', args, { cwd, env: npmEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (output += text));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`npm ${args.join(' ')} in ${cwd} ended with ${code ?? signal}:\n${output}`));
    });
  });
}

/** Packs the package in `dir` into `destination`; returns the tarball's path. */
export async function pack(dir: string, destination: string): Promise<string> {
  const { name, version } = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { name: string; version: string };
  // A fresh build of this checkout is packed as it is: rebuilding (the prepare script) would empty dist/ under the
  // gateways other suites run from it at the same time.
  const asBuilt = dir === REPO_ROOT && distIsFresh(pathToFileURL(`${REPO_ROOT}/`));
  await npm(['pack', '--pack-destination', destination, ...(asBuilt ? ['--ignore-scripts'] : [])], dir);
  return join(destination, `${name}-${version}.tgz`);
}

export const EXAMPLES = {
  plugin: join(REPO_ROOT, 'examples', 'plugin-example'),
  provider: join(REPO_ROOT, 'examples', 'provider-example'),
};

/**
 * A project that depends on the three tarballs by file: path, installed with plain `npm install`. It is an ES
 * module project, as a TypeScript plugin beside its pipelines.yaml needs.
 */
export async function installProject(dir: string, tarballs: Record<string, string>): Promise<void> {
  await mkdir(dir, { recursive: true });
  const dependencies = Object.fromEntries(Object.entries(tarballs).map(([name, path]) => [name, `file:${path}`]));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'operator', private: true, type: 'module', dependencies }, null, 2));
  await npm(['install', '--prefer-offline', '--no-audit', '--no-fund'], dir);
}

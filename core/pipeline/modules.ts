/**
 * Loads third-party plugins and provider translators named in pipelines.yaml: an npm package name, or a
 * path relative to the config file. The module's default export is one definition or an array of them.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const TYPESCRIPT = /\.(ts|mts|cts|tsx)$/;

export async function importDefinitions(specifier: string, configDir: string): Promise<unknown[]> {
  const module = (await importModule(resolveSpecifier(specifier, configDir))) as { default?: unknown };
  let exported: unknown = module.default ?? module;
  // TypeScript compiled as CommonJS (a package without `"type": "module"`) puts its default export on
  // module.exports.default, behind the __esModule marker, and import() hands over module.exports whole.
  if (isCompiledEsModule(exported)) exported = exported.default;
  return Array.isArray(exported) ? exported : [exported];
}

function isCompiledEsModule(value: unknown): value is { default: unknown } {
  return typeof value === 'object' && value !== null && (value as { __esModule?: unknown }).__esModule === true && 'default' in value;
}

// From source, tsx's hooks are already in place (bin/aigw.js or `node --import tsx`); compiled, there are none.
const COMPILED = import.meta.url.endsWith('.js');
let hooksRegistered = false;

/**
 * A package may ship TypeScript. An ES module (`"type": "module"`, or .mts) is imported through tsx's global
 * hooks, registered on first need when the gateway runs compiled: it then shares the gateway's own instances of
 * `aigw/*`, and with them their module state (a request's response stages are kept in a module's WeakMap). A .ts
 * file that its package leaves CommonJS would reach require() through those hooks and fail as an ES module "in a
 * cycle"; tsImport compiles it apart, in a namespace of its own, so it loads but gets its own copies of what it
 * imports.
 */
function importModule(url: string): Promise<unknown> {
  if (!url.startsWith('file:')) return import(url);
  const file = fileURLToPath(url);
  if (!TYPESCRIPT.test(file)) return import(url);
  return importTypeScript(url, file);
}

/** tsx itself loads only here: a compiled gateway with no TypeScript plugin never holds it. */
async function importTypeScript(url: string, file: string): Promise<unknown> {
  const { register, tsImport } = await import('tsx/esm/api');
  if (!isEsModule(file)) return tsImport(url, import.meta.url);
  if (COMPILED && !hooksRegistered) {
    register();
    hooksRegistered = true;
  }
  return import(url);
}

function isEsModule(file: string): boolean {
  if (file.endsWith('.mts')) return true;
  if (file.endsWith('.cts')) return false;
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    try {
      return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { type?: unknown }).type === 'module';
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (dirname(dir) === dir) return false;
  }
}

function resolveSpecifier(specifier: string, configDir: string): string {
  // Packages resolve from the operator's project (beside the config), not from the gateway's own install; a
  // path may name a file or a package folder (its package.json `main`, else index.js).
  const require = createRequire(resolve(configDir, 'pipelines.yaml'));
  const local = specifier.startsWith('.') || isAbsolute(specifier);
  try {
    return pathToFileURL(require.resolve(local ? resolve(configDir, specifier) : specifier)).href;
  } catch {
    return local ? pathToFileURL(resolve(configDir, specifier)).href : specifier;
  }
}

/**
 * Loads third-party plugins and provider translators named in pipelines.yaml: an npm package name, or a
 * path relative to the config file. The module's default export is one definition or an array of them.
 */
import { createRequire } from 'node:module';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export async function importDefinitions(specifier: string, configDir: string): Promise<unknown[]> {
  const module = (await import(resolveSpecifier(specifier, configDir))) as { default?: unknown };
  const exported = module.default ?? module;
  return Array.isArray(exported) ? exported : [exported];
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

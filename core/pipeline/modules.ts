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
  if (specifier.startsWith('.') || isAbsolute(specifier)) return pathToFileURL(resolve(configDir, specifier)).href;
  try {
    // Packages resolve from the operator's project (beside the config), not from the gateway's own install.
    return pathToFileURL(createRequire(resolve(configDir, 'pipelines.yaml')).resolve(specifier)).href;
  } catch {
    return specifier;
  }
}

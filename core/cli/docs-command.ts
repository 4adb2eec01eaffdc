/**
 * `aigw docs --write | --check`: the generated regions of README.md and docs/*.md (core/doc-regions.ts),
 * rendered from the registries. --write rewrites the stale ones; --check exits 1 naming them, as the docs test does.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { AnyPluginDefinition } from '../pipeline/plugin.ts';
import type { ProviderDefinition } from '../dispatch/provider.ts';
import { renderProviderTable } from '../dispatch/provider-table.ts';
import { builtIns } from './builtins.ts';
import { DOCS_COMMAND, region, regionIds, regionOf, withRegion } from '../doc-regions.ts';
import { renderAdminRoutes, renderConfigReference, renderErrorTable, renderPluginList, renderPluginReference, renderRouteList } from './doc-tables.ts';

export const DOCS_USAGE = `  docs [--write | --check] [--dir DIR]
                                   rewrite the generated tables of README.md and docs/*.md, or exit 1 naming the stale ones
`;

const plugins = builtIns.plugins as readonly AnyPluginDefinition[];

/** The region `id` as the registries render it today, markers included. */
export function renderRegion(id: string): string {
  const [kind, argument] = id.split(':') as [string, string | undefined];
  if (kind === 'providers') return renderProviderTable(builtIns.providers as readonly ProviderDefinition[]);
  return region(id, renderBody(kind, argument));
}

function renderBody(kind: string, argument: string | undefined): string {
  switch (kind) {
    case 'plugins': return renderPluginList(plugins);
    case 'plugin-reference': return renderPluginReference(plugins, builtIns.defaultPipeline);
    case 'routes': return renderRouteList(plugins);
    case 'admin-routes': return renderAdminRoutes(plugins);
    case 'errors': return renderErrorTable(plugins, argument?.split(','));
    case 'config': {
      const plugin = plugins.find((p) => p.name === argument);
      if (!plugin) throw new Error(`no built-in plugin "${argument}" (known: ${plugins.map((p) => p.name).join(', ')})`);
      return renderConfigReference(plugin);
    }
    default: throw new Error(`unknown generated region "${kind}" (known: plugins, plugin-reference, routes, admin-routes, errors[:CODE,...], config:<plugin>, providers)`);
  }
}

/** README.md and every docs/*.md, relative to `root`. */
export function documentFiles(root: string): string[] {
  return ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
}

export interface StaleDocument { file: string; regions: string[]; fresh: string }

/** The documents whose generated regions differ from what the registries render, with their fresh text. */
export function staleDocuments(root: string): StaleDocument[] {
  const stale: StaleDocument[] = [];
  for (const file of documentFiles(root)) {
    const document = readFileSync(join(root, file), 'utf8');
    let fresh = document;
    const regions: string[] = [];
    for (const id of regionIds(document)) {
      let rendered: string;
      try {
        rendered = renderRegion(id);
      } catch (err) {
        throw new Error(`${file}: ${(err as Error).message}`);
      }
      if (regionOf(fresh, id) === rendered) continue;
      regions.push(id);
      fresh = withRegion(fresh, id, rendered);
    }
    if (regions.length > 0) stale.push({ file, regions, fresh });
  }
  return stale;
}

export async function docsCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { write: { type: 'boolean' }, check: { type: 'boolean' }, dir: { type: 'string' } }, strict: true });
  const root = values.dir ?? process.cwd();
  const stale = staleDocuments(root);
  if (values.write) {
    for (const doc of stale) writeFileSync(join(root, doc.file), doc.fresh);
    process.stdout.write(stale.length === 0 ? 'docs: every generated region is up to date\n'
      : stale.map((doc) => `${doc.file}: rewrote ${doc.regions.join(', ')}\n`).join(''));
    return 0;
  }
  if (stale.length === 0) {
    process.stdout.write('docs: every generated region is up to date\n');
    return 0;
  }
  process.stderr.write(`${stale.map((doc) => `${doc.file}: stale ${doc.regions.join(', ')}\n`).join('')}run \`${DOCS_COMMAND}\`\n`);
  return 1;
}

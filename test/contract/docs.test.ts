/**
 * The documentation against the code. The tables the registries can render are generated (`npx aigw docs
 * --write`) and must be fresh; the facts that stay prose are checked: every built-in plugin and route is named,
 * nothing built is called planned, links resolve, the quick start's commands exist, the plugin contract's fields
 * and the code's folders are all described.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, test } from 'node:test';
import { ADMIN_GROUPS } from '../../core/cli/admin-commands.ts';
import { builtIns } from '../../core/cli/builtins.ts';
import { DOCS_COMMAND, regionIds, regionOf } from '../../core/doc-regions.ts';
import { dataPlaneRoutes } from '../../core/cli/doc-tables.ts';
import { buildConfigSchema } from '../../core/config/schema.ts';
import type { JsonSchema } from '../../core/json-schema.ts';
import { documentFiles, staleDocuments } from '../../core/cli/docs-command.ts';
import type { ProviderDefinition } from '../../core/dispatch/provider.ts';
import { modalityCounts } from '../../core/dispatch/provider-table.ts';
import type { AnyPluginDefinition } from '../../core/pipeline/plugin.ts';
import { REPO_ROOT } from '../helpers/process.ts';
import { importsOf, sourceFiles } from '../helpers/imports.ts';
import { anchors, fences, relativeLinks, statements, withoutFences } from '../helpers/markdown.ts';

const plugins = builtIns.plugins as readonly AnyPluginDefinition[];
const providers = builtIns.providers as readonly ProviderDefinition[];
const read = (file: string) => readFileSync(join(REPO_ROOT, file), 'utf8');
const files = documentFiles(REPO_ROOT);

/** The document with its generated regions taken out: what is left is written by hand. */
function prose(file: string): string {
  let text = read(file);
  for (const id of regionIds(text)) text = text.replace(regionOf(text, id)!, '');
  return text;
}

describe('generated regions', () => {
  test(`every generated region is fresh (regenerate: ${DOCS_COMMAND})`, () => {
    const stale = staleDocuments(REPO_ROOT).map((doc) => `${doc.file}: ${doc.regions.join(', ')}`);
    assert.deepEqual(stale, [], `stale generated regions; run \`${DOCS_COMMAND}\``);
  });

  test('the documents mark the regions they are expected to generate', () => {
    const expected: Record<string, string[]> = {
      'README.md': ['plugins'],
      'docs/pipelines.md': ['routes', 'plugin-reference', 'config:usage', 'config:audit'],
      'docs/limits.md': ['config:ratelimit', 'config:budget'],
      'docs/architecture.md': ['errors'],
      'docs/security.md': ['admin-routes'],
      'docs/providers.md': ['providers'],
    };
    for (const [file, ids] of Object.entries(expected)) {
      const marked = regionIds(read(file));
      for (const id of ids) assert.ok(marked.includes(id), `${file} marks no "${id}" region`);
    }
    assert.ok(regionIds(read('docs/limits.md')).some((id) => id.startsWith('errors:')), 'docs/limits.md marks its error codes');
  });
});

describe('prose facts', () => {
  test('every built-in plugin is named in the hand-written prose of README.md and docs/pipelines.md', () => {
    for (const file of ['README.md', 'docs/pipelines.md']) {
      const text = prose(file);
      const missing = plugins.map((p) => p.name).filter((name) => !text.includes(`\`${name}\``));
      assert.deepEqual(missing, [], `${file} does not name these plugins outside its generated tables`);
    }
  });

  test('every built-in plugin with config keys has its config reference generated in some document', () => {
    const generated = new Set(files.flatMap((file) => regionIds(read(file))));
    const missing = plugins.filter((p) => Object.keys((p.configSchema.properties ?? {}) as object).length > 0)
      .map((p) => p.name).filter((name) => !generated.has(`config:${name}`));
    assert.deepEqual(missing, [], 'plugins whose config keys no <!-- config:<name> --> region lists');
  });

  test('every data-plane route and path is in the README\'s endpoint table', () => {
    // Parameters are compared by position, not name (`:file_id` and `:fileId`, `<provider>` and `:provider`).
    const shape = (path: string) => path.replace(/:[A-Za-z_]+|<[^>]+>|\*[A-Za-z_]+/g, ':param');
    const readme = shape(prose('README.md'));
    const escaped = (path: string) => shape(path).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    // A route's name may be written as the start of its paths (`/proxy/<provider>/...`); a path must be whole.
    const missing = dataPlaneRoutes(plugins).flatMap((route) => [
      ...(new RegExp(`${escaped(route.path)}(?![\\w:])`).test(readme) ? [] : [route.path]),
      ...route.patterns.filter((path) => !new RegExp(`${escaped(path)}(?![\\w/:])`).test(readme)),
    ]);
    assert.deepEqual(missing, [], 'README.md does not describe these routes');
  });

  test('the README\'s and package.json\'s provider counts are the registry\'s', () => {
    const count = Object.fromEntries(modalityCounts(providers)) as Record<string, number>;
    const readme = prose('README.md').replace(/\s+/g, ' ');
    // Each claim as the README words it; a claim reworded fails here until its pattern follows.
    const claims: Array<[RegExp, number[]]> = [
      [/All (\d+) providers of the catalogue: (\d+) chat providers/, [providers.length, count.chat!]],
      [/on (\d+) providers for transcription and (\d+) for translation/, [count.transcription!, count.translation!]],
      [/metered by the input's characters; on (\d+) providers/, [count.speech!]],
      [/Served on the (\d+) providers with speech/, [count.speech!]],
      [/at the size and quality asked; on (\d+) providers/, [count.image!]],
      [/Served on (\d+) providers; see \[docs\/images\.md\]/, [count.image!]],
      [/the seconds made once they end; on (\d+) providers/, [count.video!]],
      [/Served on the (\d+) providers with video/, [count.video!]],
      [/\((\d+) and (\d+), Voyage AI and Jina AI included/, [count.embeddings!, count.rerank!]],
    ];
    for (const [pattern, expected] of claims) {
      const match = readme.match(pattern);
      assert.ok(match, `README.md no longer says ${pattern}: update the claim's pattern here`);
      assert.deepEqual(match.slice(1).map(Number), expected, `README.md: ${match[0]}`);
    }
    const description = JSON.parse(read('package.json')).description as string;
    assert.equal(Number(description.match(/(\d+) model providers/)?.[1]), providers.length, 'package.json description');
  });

  test('no statement calls a built plugin, route or provider planned', () => {
    const built = [
      // A plugin by its name, bare too: "prompt guards (planned)" was such a stale statement.
      ...plugins.map((p) => p.name),
      ...dataPlaneRoutes(plugins).map((route) => route.path),
      ...providers.map((p) => `\`${p.slug}\``),
    ];
    const found: string[] = [];
    for (const file of files) {
      for (const statement of statements(read(file))) {
        if (!/\bplanned\b|\bnot (yet )?built\b/i.test(statement)) continue;
        const named = built.filter((name) => new RegExp(`(^|[^\\w/-])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w/-])`).test(statement));
        if (named.length > 0) found.push(`${file}: "${statement.slice(0, 160)}" names ${named.join(', ')}`);
      }
    }
    assert.deepEqual(found, []);
  });

  test('relative links between the documents resolve, anchors included', () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const link of relativeLinks(read(file))) {
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
        if (!existsSync(join(REPO_ROOT, target))) {
          broken.push(`${file}: ${link} (no ${target})`);
          continue;
        }
        if (anchor === undefined || !target.endsWith('.md')) continue;
        if (!anchors(read(target)).has(anchor)) broken.push(`${file}: ${link} (no heading #${anchor} in ${target})`);
      }
    }
    assert.deepEqual(broken, []);
  });

  test('the README\'s commands exist: npm scripts, and aigw commands', () => {
    const readme = read('README.md');
    const scripts = Object.keys(JSON.parse(read('package.json')).scripts as Record<string, string>);
    const npmBuiltIns = ['ci', 'install', 'i', 'pack', 'exec'];
    const shell = fences(readme, ['sh', 'bash']).join('\n');
    for (const [, run, name] of shell.matchAll(/\bnpm (run )?([a-z][\w:-]*)/g)) {
      if (!run && npmBuiltIns.includes(name!)) continue;
      assert.ok(scripts.includes(name!), `README runs \`npm ${run ?? ''}${name}\`, and package.json has no script "${name}"`);
    }
    const commands = ['start', 'validate', 'migrate', 'providers', 'docs', 'usage', ...ADMIN_GROUPS, ...plugins.flatMap((p) => (p.commands ?? []).map((c) => c.name))];
    for (const [, name] of readme.matchAll(/npx aigw ([a-z][\w-]*)/g)) assert.ok(commands.includes(name!), `README names \`npx aigw ${name}\`, which is no command`);
    const table = readme.slice(readme.indexOf('## CLI'), readme.indexOf('## Configuration'));
    const unlisted = commands.filter((name) => !table.includes(`npx aigw ${name}`) && !new RegExp(`npx aigw [\\w\\\\|]*\\b${name}\\b`).test(table));
    assert.deepEqual(unlisted, [], 'commands missing from the README\'s CLI table');
  });

  test('docs/writing-a-plugin.md describes every field of PluginDefinition, and names every built-in plugin', () => {
    const source = read('core/pipeline/plugin.ts');
    const body = source.slice(source.indexOf('export interface PluginDefinition<'), source.indexOf('\n}\n', source.indexOf('export interface PluginDefinition<')));
    const fields = [...body.matchAll(/^ {2}(?:readonly )?([a-zA-Z]+)\??[:(]/gm)].map((m) => m[1]!);
    assert.ok(fields.length >= 15, `found the interface's fields (${fields.join(', ')})`);
    const doc = read('docs/writing-a-plugin.md');
    const definition = doc.slice(doc.indexOf('## The definition'), doc.indexOf('\n## ', doc.indexOf('## The definition') + 1));
    const missing = fields.filter((field) => !new RegExp(`^\\| \`${field}[\`(]`, 'm').test(definition) && !new RegExp(`^\\| [^|]*\`${field}\``, 'm').test(definition));
    assert.deepEqual(missing, [], 'fields missing from the definition table of docs/writing-a-plugin.md');
    const nameRow = definition.split('\n').find((line) => line.startsWith('| `name` |'))!;
    const named = [...nameRow.slice(nameRow.indexOf('built-ins included')).matchAll(/`([a-z-]+)`/g)].map((m) => m[1]);
    assert.deepEqual(named, plugins.map((p) => p.name), 'the name row lists the built-in plugins, in registry order');
  });

  test('docs/architecture.md\'s layout names every folder of core/ and plugins/', () => {
    const doc = read('docs/architecture.md');
    const layout = fences(doc.slice(doc.indexOf('## Layout')), ['']).at(0) ?? '';
    const folders = (root: string) => readdirSync(join(REPO_ROOT, root)).filter((name) => statSync(join(REPO_ROOT, root, name)).isDirectory());
    const missingCore = folders('core').filter((name) => !new RegExp(`^ {2}${name}/`, 'm').test(layout));
    assert.deepEqual(missingCore, [], 'core/ folders missing from the layout');
    const layers = statements(doc.slice(doc.indexOf('### Layers'))).find((statement) => statement.startsWith('Folders import downwards')) ?? '';
    const unlayered = folders('core').filter((name) => !new RegExp(`(< |^)${name} <|< ${name},`).test(layers));
    assert.deepEqual(unlayered, [], 'core/ folders missing from the order of layers');
    const missingPlugins = folders('plugins').filter((name) => !new RegExp(`(^|[\\s,])${name}/`, 'm').test(layout.slice(layout.indexOf('plugins/'))));
    assert.deepEqual(missingPlugins, [], 'plugins/ folders missing from the layout');
  });

  test('the order of layers in docs/architecture.md holds: no folder of core imports one listed after it', () => {
    const doc = read('docs/architecture.md');
    const layers = statements(doc.slice(doc.indexOf('### Layers'))).find((statement) => statement.startsWith('Folders import downwards'))!;
    // "leaf files at the root of core (...) < config < ... < cli, with gateway.ts on top"
    const order = ['(root)', ...layers.slice(layers.indexOf(') <') + 3, layers.indexOf(', with gateway.ts')).split('<').map((name) => name.trim()), '(top)'];
    const layerOf = (file: string) => {
      const parts = file.split('/');
      if (parts.length > 2) return parts[1]!;
      return parts[1] === 'gateway.ts' || parts[1] === 'cli.ts' ? '(top)' : '(root)';
    };
    const upward: string[] = [];
    for (const file of sourceFiles(['core'])) {
      const from = order.indexOf(layerOf(file));
      assert.notEqual(from, -1, `${file}: its folder is not in the order of layers`);
      for (const target of importsOf(file).filter((t) => t.startsWith('core/'))) {
        if (order.indexOf(layerOf(target)) > from) upward.push(`${file} -> ${target}`);
      }
    }
    assert.deepEqual(upward, [], `imports against the order ${order.join(' < ')}`);
  });

  test('docs/pipelines.md has a section for every top-level key of the config schema, naming each of its keys, and no other', () => {
    const doc = read('docs/pipelines.md');
    const sections = withoutFences(doc).split(/^(?=### )/m);
    const top = buildConfigSchema([], []).properties as Record<string, JsonSchema>;
    const accepts = statements(doc).find((statement) => statement.startsWith('The top level accepts')) ?? '';
    const problems: string[] = [];
    for (const [key, schema] of Object.entries(top)) {
      if (!accepts.includes(`\`${key}\``)) problems.push(`"The top level accepts ..." does not name ${key}`);
      const section = sections.find((text) => new RegExp(`^### .*\`${key}\``).test(text));
      if (!section) {
        problems.push(`no ### section for ${key}`);
        continue;
      }
      const fields = (schema.properties ?? (schema.items as JsonSchema | undefined)?.properties ?? {}) as Record<string, JsonSchema>;
      if (key === 'providers') continue; // one block per provider: docs/providers.md
      for (const field of Object.keys(fields)) if (!section.includes(`\`${field}`)) problems.push(`${key}.${field} is not described in its section`);
      // The section's first table, its keys', names only keys the schema has (nested ones by their first part).
      const lines = section.split('\n');
      const header = lines.findIndex((line) => line.startsWith('| key |'));
      if (header === -1) continue;
      const end = lines.findIndex((line, i) => i > header && !line.startsWith('|'));
      const table = lines.slice(header + 2, end === -1 ? undefined : end).map((line) => line.slice(3, line.indexOf('`', 3)).split(/[.[]/)[0]!);
      for (const field of table) if (!(field in fields)) problems.push(`${key}: the table names ${field}, which the schema does not have`);
    }
    assert.deepEqual(problems, []);
  });

  test('the prose checks look at real text (the helpers find what they should)', () => {
    assert.ok(withoutFences(read('README.md')).includes('## Quick start'));
    assert.ok(anchors(read('docs/limits.md')).has('tokens-reservation-and-settlement'));
    assert.ok(relativeLinks(read('README.md')).includes('docs/pipelines.md'));
  });
});

/**
 * The shape of the code base, kept by tests: the core names no plugin (plugins declare what they need), the
 * public entry points reach only the contract's own files, and no folder imports its way back to itself.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { builtInPlugins } from '../../plugins/index.ts';
import { importsOf, reachable, REPO, sourceFiles } from '../helpers/imports.ts';

/** Strips comments, keeping line numbers (a comment may name a plugin as an example; code may not). */
function code(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' '))
    .replace(/(^|[^:'"`\\])\/\/[^\n]*/g, '$1');
}

/**
 * String literals in core equal to a built-in plugin's name that are not that plugin: each says what it is.
 * A new occurrence fails the test until it is either removed or explained here.
 */
const NOT_PLUGIN_NAMES: Array<{ file: string; line: string; why: string }> = [
  { file: 'core/boot/load.ts', line: "const auth = section('auth');", why: 'the `auth` section of pipelines.yaml (keys, JWTs)' },
  { file: 'core/ingress/schemas/embeddings.ts', line: "required: ['object', 'data', 'model', 'usage']", why: 'the OpenAI wire field `usage`' },
  { file: 'core/ingress/schemas/completions.ts', line: "required: ['id', 'object', 'created', 'model', 'choices', 'usage']", why: 'the OpenAI wire field `usage`' },
  { file: 'core/ingress/schemas/messages.ts', line: "required: ['id', 'type', 'role', 'content', 'model', 'stop_reason', 'stop_sequence', 'usage']", why: 'the Messages wire field `usage`' },
  { file: 'core/cli.ts', line: "case 'usage': return usageCommand(rest);", why: 'the `aigw usage` command: it reads GET /admin/v1/usage through the admin API, as `aigw budgets` reads the budget plugin\'s routes (a plugin command opens the stores itself, which a running gateway holds)' },
  { file: 'core/api/responses-schemas.ts', line: "required: ['id', 'object', 'provider', 'provider_response_id', 'model', 'previous_response_id', 'status', 'instructions', 'output', 'usage',", why: 'the Responses wire field `usage`' },
];

describe('the core names no plugin', () => {
  const names = builtInPlugins.map((p) => p.name);
  const files = sourceFiles(['core']);

  test('no string literal in core is a built-in plugin name, except the explained ones', () => {
    const literal = new RegExp(`(['"\`])(${names.map((n) => n.replace('-', '\\-')).join('|')})\\1`);
    const found: string[] = [];
    for (const file of files) {
      code(readFileSync(join(REPO, file), 'utf8')).split('\n').forEach((line, i) => {
        if (!literal.test(line)) return;
        if (NOT_PLUGIN_NAMES.some((known) => known.file === file && line.includes(known.line))) return;
        found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    assert.deepEqual(found, [], 'plugin names in core: declare requires/provides, or move the code into the plugin');
  });

  test('the explained exceptions still exist (a stale entry hides nothing)', () => {
    for (const known of NOT_PLUGIN_NAMES) {
      assert.ok(readFileSync(join(REPO, known.file), 'utf8').includes(known.line), `${known.file}: ${known.line}`);
    }
  });

  test('only the composition root (core/cli/builtins.ts) imports plugins', () => {
    const importers = files.filter((file) => importsOf(file).some((target) => target.startsWith('plugins/')));
    assert.deepEqual(importers, ['core/cli/builtins.ts']);
  });

  test('no plugin-specific folder or file is left in core', () => {
    const named = files.filter((file) => file.split('/').some((part) => names.includes(part.replace(/\.ts$/, ''))));
    assert.deepEqual(named, []);
  });
});

describe('the public entry points', () => {
  test('aigw/plugin reaches only the contract\'s own files', () => {
    assert.deepEqual([...reachable(['core/public/plugin.ts'])].sort(), [
      'core/canonical/audio.ts', 'core/canonical/chat.ts', 'core/canonical/completion.ts', 'core/canonical/embeddings.ts', 'core/canonical/image.ts', 'core/canonical/rerank.ts',
      'core/canonical/responses-native.ts', 'core/canonical/responses-request.ts', 'core/canonical/responses.ts', 'core/canonical/video.ts',
      'core/config/types.ts', 'core/errors.ts', 'core/identity/policy.ts', 'core/json-schema.ts', 'core/log.ts',
      'core/pipeline/caller.ts', 'core/pipeline/context.ts', 'core/pipeline/embed.ts', 'core/pipeline/metered.ts', 'core/pipeline/plugin.ts',
      'core/pipeline/retrieval.ts', 'core/pipeline/routes.ts',
      'core/pipeline/services.ts', 'core/pipeline/slot.ts', 'core/public/plugin.ts', 'core/store/copy-binary.ts', 'core/store/copy-csv.ts', 'core/store/kv-operation.ts',
    ]);
  });

  test('aigw/provider reaches only the translator contract, the canonical types and the error helpers', () => {
    assert.deepEqual([...reachable(['core/public/provider.ts'])].sort(), [
      'core/canonical/audio.ts', 'core/canonical/chat.ts', 'core/canonical/completion.ts', 'core/canonical/embeddings.ts', 'core/canonical/image.ts', 'core/canonical/realtime.ts', 'core/canonical/rerank.ts',
      'core/canonical/responses-native.ts', 'core/canonical/responses-request.ts', 'core/canonical/responses.ts', 'core/canonical/video.ts',
      'core/dispatch/multipart.ts', 'core/dispatch/provider-batches.ts', 'core/dispatch/provider-files.ts', 'core/dispatch/provider-responses.ts', 'core/dispatch/provider.ts', 'core/dispatch/upstream-errors.ts', 'core/errors.ts', 'core/json-schema.ts',
      'core/public/provider.ts', 'core/streaming/events.ts',
    ]);
  });
});

/** A file's folder: core/<folder> or a root file of core; plugins/<name>, providers/<name>; else the file. */
function folderOf(file: string): string {
  const parts = file.split('/');
  return parts.length > 2 ? parts.slice(0, 2).join('/') : file;
}

describe('no import cycles between folders', () => {
  test('the folder graph of core, plugins and providers (type imports included) has no cycle', () => {
    const edges = new Map<string, Map<string, string>>();
    for (const file of sourceFiles(['core', 'plugins', 'providers'])) {
      const from = folderOf(file);
      for (const target of importsOf(file)) {
        const to = folderOf(target);
        if (to === from) continue;
        const out = edges.get(from) ?? new Map<string, string>();
        if (!out.has(to)) out.set(to, `${file} -> ${target}`);
        edges.set(from, out);
      }
    }
    // Depth-first search; the first cycle found is reported with the import that closes each step.
    const state = new Map<string, 'open' | 'done'>();
    const path: string[] = [];
    const visit = (node: string): string[] | null => {
      state.set(node, 'open');
      path.push(node);
      for (const next of edges.get(node)?.keys() ?? []) {
        if (state.get(next) === 'open') {
          const cycle = [...path.slice(path.indexOf(next)), next];
          return cycle.slice(1).map((to, i) => edges.get(cycle[i]!)!.get(to)!);
        }
        if (!state.has(next)) {
          const found = visit(next);
          if (found) return found;
        }
      }
      path.pop();
      state.set(node, 'done');
      return null;
    };
    for (const node of edges.keys()) {
      if (state.has(node)) continue;
      const cycle = visit(node);
      assert.equal(cycle, null, `import cycle:\n  ${cycle?.join('\n  ')}`);
    }
  });
});

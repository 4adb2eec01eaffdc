import { registerErrorCode } from '../errors.ts';
import type { MigrationSource } from '../store/migrate.ts';
import type { AnyPluginDefinition } from './plugin.ts';
import { pluginProblems } from './plugin.ts';

/** Plugins by name: the built-ins the gateway or CLI registers, then third-party ones named in pipelines.yaml. */
export class PluginRegistry {
  private readonly plugins = new Map<string, AnyPluginDefinition>();

  register(definition: unknown, origin = 'built-in'): void {
    const problems = pluginProblems(definition);
    if (problems.length > 0) throw new Error(`${origin}: ${problems.join('; ')}`);
    const d = definition as AnyPluginDefinition;
    if (this.plugins.has(d.name)) throw new Error(`${origin}: a plugin named "${d.name}" is already registered`);
    const routes = new Set(this.list().flatMap((p) => (p.endpoints ?? []).map((e) => `${e.method} ${e.path}`)));
    for (const endpoint of d.endpoints ?? []) {
      if (routes.has(`${endpoint.method} ${endpoint.path}`)) throw new Error(`${origin}: plugin "${d.name}" serves ${endpoint.method} ${endpoint.path}, which another plugin serves`);
    }
    for (const [code, spec] of Object.entries(d.errors ?? {})) registerErrorCode(code, spec.status, `plugin "${d.name}"`, spec.envelope);
    this.plugins.set(d.name, d);
  }

  get(name: string): AnyPluginDefinition | undefined {
    return this.plugins.get(name);
  }

  list(): AnyPluginDefinition[] {
    return [...this.plugins.values()];
  }

  /** The registered plugins' migration folders, in registration order: what start and `aigw migrate` apply. */
  migrationSources(): MigrationSource[] {
    return migrationSourcesOf(this.list());
  }
}

export function migrationSourcesOf(plugins: readonly AnyPluginDefinition[]): MigrationSource[] {
  return plugins.flatMap((p) => (p.migrations ? [{ namespace: p.name, dir: p.migrations }] : []));
}

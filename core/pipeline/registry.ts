import type { PluginDefinition } from './plugin.ts';
import { pluginProblems } from './plugin.ts';

/** Plugins by name: the built-ins, then third-party ones named in pipelines.yaml. */
export class PluginRegistry {
  private readonly plugins = new Map<string, PluginDefinition<never>>();

  register(definition: unknown, origin = 'built-in'): void {
    const problems = pluginProblems(definition);
    if (problems.length > 0) throw new Error(`${origin}: ${problems.join('; ')}`);
    const d = definition as PluginDefinition<never>;
    if (this.plugins.has(d.name)) throw new Error(`${origin}: a plugin named "${d.name}" is already registered`);
    this.plugins.set(d.name, d);
  }

  get(name: string): PluginDefinition<never> | undefined {
    return this.plugins.get(name);
  }

  list(): PluginDefinition<never>[] {
    return [...this.plugins.values()];
  }
}

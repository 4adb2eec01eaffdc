import { providerProblems, type ProviderDefinition } from './provider.ts';

/** Provider translators by slug: the built-ins of providers/index.ts, then third-party providerPackages. */
export class ProviderRegistry {
  private readonly providers = new Map<string, ProviderDefinition>();

  register(definition: unknown, origin = 'built-in'): void {
    const problems = providerProblems(definition);
    if (problems.length > 0) throw new Error(`${origin}: ${problems.join('; ')}`);
    const d = definition as ProviderDefinition;
    if (this.providers.has(d.slug)) throw new Error(`${origin}: a provider with slug "${d.slug}" is already registered`);
    this.providers.set(d.slug, d);
  }

  get(slug: string): ProviderDefinition | undefined {
    return this.providers.get(slug);
  }

  list(): ProviderDefinition[] {
    return [...this.providers.values()];
  }
}

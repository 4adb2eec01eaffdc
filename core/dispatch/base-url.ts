/**
 * A provider's default base URL may hold {placeholders} (a region, a location, a project, an account): each is
 * filled from the provider block's option of the same name, so `options: {region: eu-de}` is all a config needs.
 * The routing table and the config check share this one rule.
 */
const PLACEHOLDER = /\{([A-Za-z][A-Za-z0-9_]*)\}/g;

function optionValue(options: Record<string, unknown> | undefined, name: string): string | undefined {
  const value = options?.[name];
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

/** The placeholders of `template` that no option fills. */
export function missingPlaceholders(template: string, options: Record<string, unknown> | undefined): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((m) => m[1]!).filter((name) => optionValue(options, name) === undefined);
}

/** The template with every placeholder filled, or undefined when there is no template or one stays empty. */
export function fillBaseUrl(template: string | undefined, options: Record<string, unknown> | undefined): string | undefined {
  if (template === undefined || missingPlaceholders(template, options).length > 0) return undefined;
  // Encoded, so that an option only ever fills its own host label or path segment.
  return template.replace(PLACEHOLDER, (_whole, name: string) => encodeURIComponent(optionValue(options, name)!));
}

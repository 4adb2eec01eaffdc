/** The guards plugin's configuration: its JSON schema (every property described), its types, and the per-caller view. */
import type { JsonSchema } from '../../core/json-schema.ts';
import { callerOverrides, type Caller } from '../../core/pipeline/caller.ts';

export type Action = 'block' | 'redact' | 'log' | 'off';
export type Direction = 'input' | 'output';
/** How a guard checks a streamed answer: see docs/guards.md#streams. */
export type StreamPolicy = 'window' | 'end' | 'buffer';

export const PII_TYPES = ['email', 'phone', 'paymentCard', 'iban', 'nationalId', 'ipAddress', 'secret'] as const;
export type PiiType = (typeof PII_TYPES)[number];

export interface PiiSettings extends Record<PiiType, Action> {
  restore: boolean;
  phoneCountry?: string;
  directions: Direction[];
  stream: StreamPolicy;
}

export interface InjectionSettings {
  action: 'block' | 'log' | 'off';
  threshold: number;
  patterns: Array<{ pattern: string; weight: number }>;
  directions: Direction[];
  stream: 'end' | 'buffer';
}

export interface ToxicitySettings {
  action: 'block' | 'redact' | 'log' | 'off';
  builtIn: boolean;
  categories: Record<string, string[]>;
  directions: Direction[];
  stream: StreamPolicy;
}

export interface DetectorEntry {
  module: string;
  options: Record<string, unknown>;
  action: 'block' | 'log';
  threshold: number;
  directions: Direction[];
  timeoutMs: number;
  failMode: 'open' | 'closed';
}

/** What an organization, a department or a key may change: actions and thresholds, never the patterns (compiled once). */
export interface GuardOverride {
  enabled?: boolean;
  pii?: Partial<Record<PiiType, Action>> & { restore?: boolean };
  injection?: { action?: InjectionSettings['action']; threshold?: number };
  toxicity?: { action?: ToxicitySettings['action'] };
}

export interface GuardsConfig {
  enabled: boolean;
  pii: PiiSettings;
  injection: InjectionSettings;
  toxicity: ToxicitySettings;
  detectors: DetectorEntry[];
  window: { chars: number; maxHoldMs: number };
  organizations: Record<string, GuardOverride>;
  departments: Record<string, GuardOverride>;
  keys: Record<string, GuardOverride>;
}

/** The settings one request runs with: the entry's, with its caller's overrides applied. */
export interface EffectiveGuards {
  enabled: boolean;
  pii: Record<PiiType, Action> & { restore: boolean };
  injection: { action: InjectionSettings['action']; threshold: number };
  toxicity: { action: ToxicitySettings['action'] };
}

const action = (description: string, fallback?: Action): JsonSchema => ({
  type: 'string', enum: ['block', 'redact', 'log', 'off'], ...(fallback ? { default: fallback } : {}), description,
});
const directions = (fallback: Direction[], what: string): JsonSchema => ({
  type: 'array', items: { type: 'string', enum: ['input', 'output'] }, uniqueItems: true, maxItems: 2, default: fallback,
  description: `Where ${what} checks: "input" (the prompt, before dispatch) and/or "output" (the answer).`,
});
const scoredStream: JsonSchema = {
  type: 'string', enum: ['end', 'buffer'], default: 'end',
  description: 'On a streamed answer: "end" scores the whole text once the stream ended (already sent: recorded as a log verdict), "buffer" holds the whole answer until scored (time to first token becomes the whole generation).',
};
const matchStream: JsonSchema = {
  type: 'string', enum: ['window', 'end', 'buffer'], default: 'window',
  description: 'On a streamed answer: "window" holds back a bounded tail so that a match split across chunks is caught (see window), "end" checks the whole text after it was sent (recorded as log verdicts), "buffer" holds the whole answer until checked.',
};

const piiDescriptions: Record<PiiType, string> = {
  email: 'E-mail addresses.',
  phone: 'Phone numbers, as libphonenumber-js finds and validates them (international form, or national form in phoneCountry).',
  paymentCard: 'Payment card numbers: 12 to 19 digits (spaces or dashes allowed) passing the Luhn check, of a known issuer\'s prefix and length.',
  iban: 'IBANs passing the ISO 7064 mod-97 check (ibantools), with or without spaces.',
  nationalId: 'National identifiers: US social security numbers (valid ranges), UK national insurance numbers, Spanish DNI/NIE (check letter).',
  ipAddress: 'IPv4 and IPv6 addresses.',
  secret: 'Credentials of well-known formats: OpenAI, Anthropic, AWS access keys, GitHub, Slack, Google API, Stripe live keys, private key PEM blocks and JWTs.',
};
const PII_DEFAULTS: Record<PiiType, Action> = { email: 'redact', phone: 'redact', paymentCard: 'block', iban: 'log', nationalId: 'log', ipAddress: 'log', secret: 'block' };

const piiActions = (withDefaults: boolean): Record<string, JsonSchema> => Object.fromEntries(PII_TYPES.map((type) => [
  type, action(`${piiDescriptions[type]} "block" refuses (400 GUARD_BLOCKED, or ends a stream), "redact" replaces each with a placeholder, "log" records a verdict, "off" does not look.`, withDefaults ? PII_DEFAULTS[type] : undefined),
]));
const restore: JsonSchema = {
  type: 'boolean',
  description: 'Redacted input gets numbered placeholders ([EMAIL_1]); where the answer repeats one, the caller gets the original back (streams too, through the window).',
};
const threshold: JsonSchema = { type: 'number', minimum: 0, maximum: 1, description: 'Score (0 to 1) from which the guard acts.' };
const injectionAction: JsonSchema = { type: 'string', enum: ['block', 'log', 'off'], description: 'At or above the threshold: "block" refuses, "log" records a verdict, "off" does not score.' };
const toxicityAction: JsonSchema = { type: 'string', enum: ['block', 'redact', 'log', 'off'], description: 'A listed word: "block" refuses, "redact" replaces it with [TOXIC], "log" records a verdict, "off" does not look.' };

const overrideSchema: JsonSchema = {
  type: 'object', additionalProperties: false,
  properties: {
    enabled: { type: 'boolean', description: 'Whether the guards run at all for these callers.' },
    pii: { type: 'object', additionalProperties: false, properties: { ...piiActions(false), restore }, description: 'PII actions for these callers, by type.' },
    injection: { type: 'object', additionalProperties: false, properties: { action: injectionAction, threshold }, description: 'Injection action and threshold for these callers.' },
    toxicity: { type: 'object', additionalProperties: false, properties: { action: toxicityAction }, description: 'Toxicity action for these callers.' },
  },
};
const levelSchema = (level: string): JsonSchema => ({
  type: 'object', default: {},
  description: `Overrides per ${level} id, applied over the entry's settings field by field (key over department over organization).`,
  additionalProperties: overrideSchema,
});

export const configSchema: JsonSchema = {
  type: 'object', additionalProperties: false,
  properties: {
    enabled: { type: 'boolean', default: true, description: 'Whether the guards run (an override can turn them off or on per organization, department or key).' },
    pii: {
      type: 'object', additionalProperties: false, default: {},
      description: 'Personal data and secrets, per type.',
      properties: {
        ...piiActions(true),
        restore: { ...restore, default: false },
        phoneCountry: { type: 'string', pattern: '^[A-Z]{2}$', description: 'ISO 3166 country whose national phone number form is recognised too (without it, only numbers written with + and a country code).' },
        directions: directions(['input', 'output'], 'the PII guard'),
        stream: matchStream,
      },
    },
    injection: {
      type: 'object', additionalProperties: false, default: {},
      description: 'Prompt injection: a score from built-in heuristics and the configured patterns.',
      properties: {
        action: { ...injectionAction, default: 'block' },
        threshold: { ...threshold, default: 0.5 },
        patterns: {
          type: 'array', default: [], maxItems: 200,
          description: 'More patterns, each adding its weight to the score when it matches (case-insensitive regular expressions).',
          items: {
            type: 'object', additionalProperties: false, required: ['pattern', 'weight'],
            properties: {
              pattern: { type: 'string', minLength: 1, maxLength: 500, description: 'A JavaScript regular expression, matched case-insensitively.' },
              weight: { type: 'number', minimum: 0, maximum: 1, description: 'What a match adds to the score (the score is capped at 1).' },
            },
          },
        },
        directions: directions(['input'], 'the injection guard'),
        stream: scoredStream,
      },
    },
    toxicity: {
      type: 'object', additionalProperties: false, default: {},
      description: 'Toxic language: whole words of categorized lists.',
      properties: {
        action: { ...toxicityAction, default: 'off' },
        builtIn: { type: 'boolean', default: true, description: 'Whether the built-in lists (insult, profanity, threat) are used; categories add to them or replace a list of the same name.' },
        categories: {
          type: 'object', default: {},
          description: 'Word lists by category (lower-case letters, digits, -, \', spaces); a match is recorded as toxicity:<category>.',
          additionalProperties: { type: 'array', maxItems: 5000, items: { type: 'string', minLength: 2, maxLength: 60, pattern: "^[\\p{Ll}\\p{Nd}' -]+$" } },
        },
        directions: directions(['input', 'output'], 'the toxicity guard'),
        stream: matchStream,
      },
    },
    detectors: {
      type: 'array', default: [], maxItems: 20,
      description: 'Scored detectors of the operator\'s own (a model-based injection classifier, say): modules whose default export is a detector or a factory of one (docs/guards.md#detectors).',
      items: {
        type: 'object', additionalProperties: false, required: ['module', 'failMode'],
        properties: {
          module: { type: 'string', minLength: 1, description: 'A package name, or a path relative to the config file\'s folder (as for plugins).' },
          options: { type: 'object', default: {}, description: 'Passed to the module\'s default export when it is a factory function.' },
          action: { type: 'string', enum: ['block', 'log'], default: 'block', description: 'At or above the threshold: "block" refuses, "log" records a verdict.' },
          threshold: { ...threshold, default: 0.5 },
          directions: directions(['input'], 'the detector (on a streamed answer it runs once the stream ended, and records only: stages cannot wait)'),
          timeoutMs: { type: 'integer', minimum: 1, maximum: 60_000, default: 2000, description: 'How long one detect call may take; past it the call counts as an error (failMode decides).' },
          failMode: { type: 'string', enum: ['open', 'closed'], description: 'Required: what an error or a timeout does. "open" lets the text through and records a log verdict (type detector_error), "closed" refuses with GUARD_BLOCKED reason detector_error.' },
        },
      },
    },
    window: {
      type: 'object', additionalProperties: false, default: {},
      description: 'The stream window of the "window" policy (docs/guards.md#streams).',
      properties: {
        chars: { type: 'integer', minimum: 8, maximum: 4096, default: 64, description: 'At most this many characters of a possible match at the end of the text so far are held back; older text is released.' },
        maxHoldMs: { type: 'integer', minimum: 0, maximum: 60_000, default: 250, description: 'Text held this long is released when the next chunk arrives, once checked together with it (a stage only runs as chunks arrive).' },
      },
    },
    organizations: levelSchema('organization'),
    departments: levelSchema('department'),
    keys: levelSchema('API key'),
  },
};

/** The settings for a caller: the entry's, then its organization's, department's and key's, each replacing what it names. */
export function settingsFor(config: GuardsConfig, caller: Caller | undefined): EffectiveGuards {
  const levels = callerOverrides(config, caller);
  const effective: EffectiveGuards = {
    enabled: config.enabled,
    pii: { ...pick(config.pii, PII_TYPES), restore: config.pii.restore },
    injection: { action: config.injection.action, threshold: config.injection.threshold },
    toxicity: { action: config.toxicity.action },
  };
  for (const level of levels) {
    if (level.enabled !== undefined) effective.enabled = level.enabled;
    Object.assign(effective.pii, level.pii);
    Object.assign(effective.injection, level.injection);
    Object.assign(effective.toxicity, level.toxicity);
  }
  return effective;
}

function pick<T, K extends keyof T>(from: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const key of keys) out[key] = from[key];
  return out;
}

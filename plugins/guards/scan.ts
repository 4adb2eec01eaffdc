/**
 * The match-based guards (PII and toxicity) over one text: every finder's spans, with the action the request's
 * settings give their type, overlaps resolved (a card number is not also a phone number), in text order. Built
 * once per pipeline entry; scanning a text allocates only for what it finds.
 */
import type { Action, Direction, EffectiveGuards, GuardsConfig, PiiType } from './config.ts';
import { PII_TYPES } from './config.ts';
import { piiFinders, type Finder } from './pii.ts';
import { toxicityMatcher, type ToxicityMatcher } from './toxicity.ts';

export interface Finding {
  guard: 'pii' | 'toxicity';
  /** The verdict's type: `email`, `payment_card`, ..., `toxicity:insult`. */
  type: string;
  /** The placeholder's stem: `EMAIL`, `PAYMENT_CARD`, ..., `TOXIC`. */
  label: string;
  action: Exclude<Action, 'off'>;
  start: number;
  end: number;
}

const snake = (type: string) => type.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
/** Earlier wins an overlap: the more specific formats first, phone numbers (which match any digit run) last. */
const PRIORITY: readonly PiiType[] = ['secret', 'paymentCard', 'iban', 'nationalId', 'email', 'ipAddress', 'phone'];

export class Scanner {
  private readonly finders: Record<PiiType, Finder>;
  readonly toxicity: ToxicityMatcher;
  private readonly directions: { pii: readonly Direction[]; toxicity: readonly Direction[] };

  constructor(config: GuardsConfig) {
    this.finders = piiFinders(config.pii.phoneCountry);
    this.toxicity = toxicityMatcher(config.toxicity.builtIn, config.toxicity.categories);
    this.directions = { pii: config.pii.directions, toxicity: config.toxicity.directions };
  }

  /** Whether any match-based guard looks at this direction for these settings. */
  active(settings: EffectiveGuards, direction: Direction): boolean {
    return (this.directions.pii.includes(direction) && PII_TYPES.some((t) => settings.pii[t] !== 'off'))
      || (this.directions.toxicity.includes(direction) && settings.toxicity.action !== 'off' && this.toxicity.regex !== null);
  }

  scan(text: string, settings: EffectiveGuards, direction: Direction): Finding[] {
    if (text === '') return [];
    const found: Finding[] = [];
    if (this.directions.pii.includes(direction)) {
      for (const type of PRIORITY) {
        const action = settings.pii[type];
        if (action === 'off') continue;
        const verdictType = snake(type);
        const label = verdictType.toUpperCase();
        for (const span of this.finders[type](text)) found.push({ guard: 'pii', type: verdictType, label, action, ...span });
      }
    }
    const toxic = this.toxicity.regex;
    const toxicAction = settings.toxicity.action;
    if (toxic && toxicAction !== 'off' && this.directions.toxicity.includes(direction)) {
      toxic.lastIndex = 0;
      for (let m = toxic.exec(text); m; m = toxic.exec(text)) {
        found.push({ guard: 'toxicity', type: `toxicity:${this.toxicity.categoryOf(m[0])}`, label: 'TOXIC', action: toxicAction, start: m.index, end: m.index + m[0].length });
      }
    }
    return resolveOverlaps(found);
  }
}

/** Keeps the first-found of overlapping findings (found is in priority order), then sorts by position. */
function resolveOverlaps(found: Finding[]): Finding[] {
  if (found.length < 2) return found;
  const kept: Finding[] = [];
  for (const f of found) if (!kept.some((k) => f.start < k.end && k.start < f.end)) kept.push(f);
  return kept.sort((a, b) => a.start - b.start);
}

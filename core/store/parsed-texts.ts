/**
 * JSON texts read from the KV on every request (an API key's record, the budgets that apply to a caller), parsed
 * once per text: the KV's text stays the truth (an edit replaces it, a revocation drops it, and the next read sees
 * that), and the value parsed from the same text is reused instead of parsed again. Values are deep-frozen, since
 * every request that reads the same text shares them.
 */
export class ParsedTexts<T> {
  private readonly parsed = new Map<string, { text: string; value: T }>();

  /** `kept`: entries held at most; the map is cleared whole when full (busy entries come back at once). */
  constructor(private readonly kept = 10_000) {}

  get(key: string, text: string): T {
    const known = this.parsed.get(key);
    if (known && known.text === text) return known.value;
    const value = deepFreeze(JSON.parse(text) as T);
    if (this.parsed.size >= this.kept) this.parsed.clear();
    this.parsed.set(key, { text, value });
    return value;
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

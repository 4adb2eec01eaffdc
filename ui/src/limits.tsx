/** The rate-limit fields of a key, for its creation and for PATCH /keys/:id. */
export interface RateLimits {
  requestsPerMinute?: number;
  requestsPerDay?: number;
  tokensPerDay?: number;
}

const FIELDS = [
  { name: 'requestsPerMinute', label: 'Requests per minute' },
  { name: 'requestsPerDay', label: 'Requests per day' },
  { name: 'tokensPerDay', label: 'Tokens per day' },
] as const;

export type LimitTexts = Record<(typeof FIELDS)[number]['name'], string>;

export const limitTexts = (limits: RateLimits | null | undefined): LimitTexts => ({
  requestsPerMinute: limits?.requestsPerMinute?.toString() ?? '',
  requestsPerDay: limits?.requestsPerDay?.toString() ?? '',
  tokensPerDay: limits?.tokensPerDay?.toString() ?? '',
});

/** The limits given, as numbers the API checks (a wrong one comes back as its validation message); null if none. */
export function parseLimits(texts: LimitTexts): RateLimits | null {
  const limits: Record<string, number> = {};
  for (const { name } of FIELDS) if (texts[name].trim() !== '') limits[name] = Number(texts[name]);
  return Object.keys(limits).length > 0 ? limits : null;
}

export function LimitInputs({ idPrefix, value, onChange }: { idPrefix: string; value: LimitTexts; onChange: (next: LimitTexts) => void }) {
  return (
    <fieldset>
      <legend>Rate limits (empty: none)</legend>
      {FIELDS.map(({ name, label }) => (
        <div class="field">
          <label for={`${idPrefix}-${name}`}>{label}</label>
          <input id={`${idPrefix}-${name}`} type="number" min="1" step="1" inputMode="numeric" value={value[name]}
            onInput={(e) => onChange({ ...value, [name]: (e.target as HTMLInputElement).value })} />
        </div>
      ))}
    </fieldset>
  );
}

export const describeLimits = (limits: RateLimits | null | undefined) => {
  if (!limits) return 'none';
  const parts = [
    limits.requestsPerMinute ? `${limits.requestsPerMinute}/min` : '',
    limits.requestsPerDay ? `${limits.requestsPerDay}/day` : '',
    limits.tokensPerDay ? `${limits.tokensPerDay} tokens/day` : '',
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : 'none';
};

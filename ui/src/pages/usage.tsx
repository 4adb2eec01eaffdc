/** Usage (the usage plugin's GET /admin/v1/usage): cost and tokens per day, one line per model, provider or key. */
import { useState } from 'preact/hooks';
import { listAll } from '../api.ts';
import { ErrorMessage, Section, Table, useLoad, usd } from '../common.tsx';
import { LineChart, type Series } from '../chart.tsx';

type Group = 'model' | 'provider' | 'key';

interface UsageRow {
  day: string;
  model?: string | null;
  provider?: string | null;
  key?: string | null;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_usd: number | null;
}

const DAY_MS = 86_400_000;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Every day from `from` to `to` inclusive, so that a day without usage is a gap in the line, not skipped. */
function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(from); t <= Date.parse(to) && days.length < 400; t += DAY_MS) days.push(isoDay(t));
  return days;
}

function seriesOf(rows: UsageRow[], group: Group, value: (row: UsageRow) => number): Series[] {
  const byName = new Map<string, Map<string, number>>();
  for (const row of rows) {
    const name = row[group] ?? '(none)';
    const points = byName.get(name) ?? new Map<string, number>();
    points.set(row.day, (points.get(row.day) ?? 0) + value(row));
    byName.set(name, points);
  }
  return [...byName].map(([name, points]) => ({ name, points }));
}

export function UsagePage() {
  const [group, setGroup] = useState<Group>('model');
  const [from, setFrom] = useState(isoDay(Date.now() - 29 * DAY_MS));
  const [to, setTo] = useState(isoDay(Date.now()));
  // `to` is exclusive in the API: the day after the last one shown.
  const usage = useLoad(() => listAll<UsageRow>(`/usage?group_by=day,${group}&from=${from}&to=${isoDay(Date.parse(to) + DAY_MS)}`, 5000), [group, from, to]);
  const rows = usage.data ?? [];
  const days = daysBetween(from, to);
  const missing = usage.error && /\[NOT_FOUND\]$/.test(usage.error);
  return (
    <>
      <form class="inline" aria-label="Usage window" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for="usage-group">Group by</label>
          <select id="usage-group" value={group} onChange={(e) => setGroup((e.target as HTMLSelectElement).value as Group)}>
            <option value="model">model</option>
            <option value="provider">provider</option>
            <option value="key">key</option>
          </select>
        </div>
        <div class="field">
          <label for="usage-from">From (UTC day)</label>
          <input id="usage-from" type="date" value={from} onChange={(e) => setFrom((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="usage-to">To (UTC day, included)</label>
          <input id="usage-to" type="date" value={to} onChange={(e) => setTo((e.target as HTMLInputElement).value)} />
        </div>
      </form>
      {missing ? <p>The usage plugin is not configured on this gateway: add <code>usage</code> to a pipeline to record usage.</p> : <ErrorMessage text={usage.error} />}
      {usage.loading && !usage.data ? <p>Loading…</p> : null}
      {usage.data ? (
        <>
          <Section title="Cost per day">
            <LineChart title={`Cost (USD) per day by ${group}`} days={days} series={seriesOf(rows, group, (r) => r.cost_usd ?? 0)} format={(v) => usd(v)} />
          </Section>
          <Section title="Tokens per day">
            <LineChart title={`Tokens per day by ${group}`} days={days} series={seriesOf(rows, group, (r) => r.total_tokens)} format={(v) => String(Math.round(v))} />
          </Section>
          <Section title="Table">
            <Table label="Usage" rows={rows} empty="No usage in this window." columns={[
              { title: 'Day', cell: (r) => r.day },
              { title: group, cell: (r) => r[group] ?? '(none)' },
              { title: 'Requests', cell: (r) => r.requests },
              { title: 'Prompt tokens', cell: (r) => r.prompt_tokens },
              { title: 'Completion tokens', cell: (r) => r.completion_tokens },
              { title: 'Total tokens', cell: (r) => r.total_tokens },
              { title: 'Cost', cell: (r) => usd(r.cost_usd) },
            ]} />
          </Section>
        </>
      ) : null}
    </>
  );
}

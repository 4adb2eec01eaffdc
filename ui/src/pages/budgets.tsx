/** Budgets (the budget plugin's routes): each with its spend this period against its limit, and creation. */
import { useState } from 'preact/hooks';
import { api, errorText, listAll } from '../api.ts';
import { ErrorMessage, Section, Table, useLoad, usd, when } from '../common.tsx';

interface Budget {
  id: string; tenantId: string; scope: string; scopeId: string | null; period: string; limitUsd: number;
  spentUsd?: number; remainingUsd?: number; resetsAt?: string | null;
}

// The list answers without spend; each budget's own record has it. Bounded: a UI page, not an export.
const MAX_WITH_SPEND = 200;

async function budgetsWithSpend(): Promise<Budget[]> {
  const list = await listAll<Budget>('/budgets', MAX_WITH_SPEND);
  return Promise.all(list.map((b) => api<Budget>('GET', `/budgets/${encodeURIComponent(b.id)}`)));
}

function SpendBar({ budget }: { budget: Budget }) {
  const spent = budget.spentUsd ?? 0;
  const share = budget.limitUsd > 0 ? Math.min(1, spent / budget.limitUsd) : 1;
  const level = share >= 1 ? 'over' : share >= 0.8 ? 'high' : 'ok';
  return (
    <span class="spend">
      <svg class={`bar bar-${level}`} width="160" height="12" role="img" aria-label={`${Math.round(share * 100)}% of the limit spent`}>
        <rect class="bar-track" x="0" y="0" width="160" height="12" rx="3" />
        <rect class="bar-fill" x="0" y="0" width={Math.max(share * 160, spent > 0 ? 2 : 0)} height="12" rx="3" />
      </svg>
      {' '}{usd(spent)} of {usd(budget.limitUsd)}
    </span>
  );
}

export function BudgetsPage() {
  const budgets = useLoad(budgetsWithSpend);
  const missing = budgets.error && /\[NOT_FOUND\]$/.test(budgets.error);
  return (
    <>
      <Section title="Budgets">
        {missing ? <p>The budget plugin is not configured on this gateway: add <code>budget</code> to a pipeline to use budgets.</p> : <ErrorMessage text={budgets.error} />}
        <Table label="Budgets" rows={budgets.data ?? []} empty={budgets.loading ? 'Loading…' : 'No budgets.'} columns={[
          { title: 'Scope', cell: (b) => `${b.scope}${b.scopeId ? ` ${b.scopeId}` : ''}` },
          { title: 'Tenant', cell: (b) => b.tenantId },
          { title: 'Period', cell: (b) => b.period },
          { title: 'Spend vs limit', cell: (b) => <SpendBar budget={b} /> },
          { title: 'Remaining', cell: (b) => usd(b.remainingUsd) },
          { title: 'Resets', cell: (b) => when(b.resetsAt) },
        ]} />
      </Section>
      {missing ? null : <Section title="Create a budget"><CreateBudget onCreated={budgets.reload} /></Section>}
    </>
  );
}

function CreateBudget({ onCreated }: { onCreated: () => void }) {
  const [scope, setScope] = useState('deployment');
  const [scopeId, setScopeId] = useState('');
  const [period, setPeriod] = useState('monthly');
  const [limit, setLimit] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      await api('POST', '/budgets', { scope, period, limitUsd: Number(limit), ...(scopeId.trim() ? { scopeId: scopeId.trim() } : {}) });
      setError(null);
      setLimit('');
      onCreated();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <form class="inline" onSubmit={submit} aria-label="Create a budget">
      <div class="field">
        <label for="budget-scope">Scope</label>
        <select id="budget-scope" value={scope} onChange={(e) => setScope((e.target as HTMLSelectElement).value)}>
          {['deployment', 'organization', 'department', 'key'].map((s) => <option value={s}>{s}</option>)}
        </select>
      </div>
      <div class="field">
        <label for="budget-scope-id">Scope id (not for deployment)</label>
        <input id="budget-scope-id" value={scopeId} onInput={(e) => setScopeId((e.target as HTMLInputElement).value)} />
      </div>
      <div class="field">
        <label for="budget-period">Period</label>
        <select id="budget-period" value={period} onChange={(e) => setPeriod((e.target as HTMLSelectElement).value)}>
          {['daily', 'monthly', 'total'].map((p) => <option value={p}>{p}</option>)}
        </select>
      </div>
      <div class="field">
        <label for="budget-limit">Limit (USD)</label>
        <input id="budget-limit" type="number" min="0" step="any" required value={limit} onInput={(e) => setLimit((e.target as HTMLInputElement).value)} />
      </div>
      <button type="submit">Create budget</button>
      <ErrorMessage text={error} />
    </form>
  );
}

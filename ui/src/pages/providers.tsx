/** Providers: what the config declares, the models routed to each, and the breakers of the instance that answers. */
import { api } from '../api.ts';
import { ErrorMessage, Section, Table, useLoad } from '../common.tsx';

interface Breaker { baseUrl: string; state: 'closed' | 'open' | 'half-open'; failures: number; successes: number }
interface Provider { id: string; enabled: boolean; baseUrl: string | null; models: string[]; breakers: Breaker[] }

export function ProvidersPage() {
  const providers = useLoad(() => api<{ data: Provider[] }>('GET', '/providers').then((list) => list.data));
  return (
    <Section title="Configured providers">
      <ErrorMessage text={providers.error} />
      <p class="hint">Breaker states are this instance's: each instance keeps its own, and a breaker appears after the provider's first call.</p>
      <Table label="Providers" rows={providers.data ?? []} empty={providers.loading ? 'Loading…' : 'No providers configured.'} columns={[
        { title: 'Provider', cell: (p) => <code>{p.id}</code> },
        { title: 'Enabled', cell: (p) => (p.enabled ? 'yes' : 'no') },
        { title: 'Base URL', cell: (p) => p.baseUrl ?? '(default)' },
        { title: 'Models', cell: (p) => (p.models.length > 0 ? p.models.join(', ') : 'none') },
        {
          title: 'Breakers',
          cell: (p) => (p.breakers.length === 0 ? 'not called yet' : (
            <ul class="plain">
              {p.breakers.map((b) => (
                <li><span class={`status breaker-${b.state}`}>{b.state}</span> {b.baseUrl} ({b.successes} ok, {b.failures} failed)</li>
              ))}
            </ul>
          )),
        },
      ]} />
      <button type="button" class="secondary" onClick={providers.reload}>Refresh</button>
    </Section>
  );
}

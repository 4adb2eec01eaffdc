/** Audit (the audit plugin's GET /admin/v1/audit): records oldest first, a page at a time. */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorMessage, Section, Table, useLoad, when } from '../common.tsx';

interface AuditItem {
  seq: number;
  hash: string;
  record: { time?: string; method?: string; route?: string; path?: string; status?: number; actor?: string | null; apiKeyId?: string | null; userId?: string | null; tenantId?: string | null; errorCode?: string | null };
}
interface AuditPage { data: AuditItem[]; has_more: boolean; next_cursor: string | null }

export function AuditPage() {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const page = useLoad(() => api<AuditPage>('GET', `/audit?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`), [cursor]);
  const missing = page.error && /\[NOT_FOUND\]$/.test(page.error);
  return (
    <Section title="Audit records">
      {missing ? <p>The audit plugin is not configured on this gateway: add <code>audit</code> to a pipeline to keep an audit log.</p> : <ErrorMessage text={page.error} />}
      <Table label="Audit records" rows={page.data?.data ?? []} empty={page.loading ? 'Loading…' : 'No audit records.'} columns={[
        { title: 'Seq', cell: (i) => i.seq },
        { title: 'Time', cell: (i) => when(i.record.time) },
        // An admin write has an actor; a data-plane request a key or a JWT subject, in a tenant.
        { title: 'Who', cell: (i) => i.record.actor ?? i.record.apiKeyId ?? i.record.userId ?? '(no caller)' },
        { title: 'Tenant', cell: (i) => i.record.tenantId ?? '' },
        { title: 'Request', cell: (i) => `${i.record.method ?? ''} ${i.record.path ?? i.record.route ?? ''}` },
        { title: 'Status', cell: (i) => `${i.record.status ?? ''}${i.record.errorCode ? ` ${i.record.errorCode}` : ''}` },
      ]} />
      <div class="actions">
        {cursors.length > 0 ? <button type="button" class="secondary" onClick={() => setCursors(cursors.slice(0, -1))}>Previous page</button> : null}
        {page.data?.has_more && page.data.next_cursor ? <button type="button" onClick={() => setCursors([...cursors, page.data!.next_cursor!])}>Next page</button> : null}
      </div>
    </Section>
  );
}

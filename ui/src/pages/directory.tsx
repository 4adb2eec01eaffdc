/** Tenants, organizations and departments: lists, creation, and each organization's and department's policy. */
import { useState } from 'preact/hooks';
import { api, errorText, listAll } from '../api.ts';
import { ErrorMessage, Section, Table, useLoad, when } from '../common.tsx';
import { PolicyEditor, type PolicyOwner } from './policy-editor.tsx';

interface Tenant { id: string; name: string; createdAt: string }
interface Organization { id: string; tenantId: string; name: string; policy: unknown; createdAt: string }
interface Department extends Organization { organizationId: string }

const policySummary = (policy: unknown) => {
  const text = JSON.stringify(policy ?? {});
  return text === '{}' ? 'none' : text.length > 60 ? `${text.slice(0, 60)}…` : text;
};

/** A one-line form: its fields are text inputs, all required unless their label says optional. */
function CreateForm({ label, fields, path, onCreated }: { label: string; fields: Array<{ name: string; label: string; optional?: boolean }>; path: string; onCreated: () => void }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    const body = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v.trim()]).filter(([, v]) => v !== ''));
    try {
      await api('POST', path, body);
      setValues({});
      setError(null);
      onCreated();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <form class="inline" onSubmit={submit} aria-label={label}>
      {fields.map((f) => (
        <div class="field">
          <label for={`${path.slice(1)}-${f.name}`}>{f.label}{f.optional ? ' (optional)' : ''}</label>
          <input id={`${path.slice(1)}-${f.name}`} required={!f.optional} value={values[f.name] ?? ''}
            onInput={(e) => setValues({ ...values, [f.name]: (e.target as HTMLInputElement).value })} />
        </div>
      ))}
      <button type="submit">{label}</button>
      <ErrorMessage text={error} />
    </form>
  );
}

export function DirectoryPage() {
  const tenants = useLoad(() => listAll<Tenant>('/tenants'));
  const organizations = useLoad(() => listAll<Organization>('/organizations'));
  const departments = useLoad(() => listAll<Department>('/departments'));
  const [editing, setEditing] = useState<PolicyOwner | null>(null);
  const policyButton = (kind: PolicyOwner['kind'], record: Organization) => (
    <button type="button" class="secondary" aria-label={`Policy of ${record.name}`}
      onClick={() => setEditing({ kind, id: record.id, name: record.name, policy: record.policy })}>Policy</button>
  );
  return (
    <>
      <Section title="Tenants">
        <ErrorMessage text={tenants.error} />
        <Table label="Tenants" rows={tenants.data ?? []} columns={[
          { title: 'Id', cell: (t) => <code>{t.id}</code> },
          { title: 'Name', cell: (t) => t.name },
          { title: 'Created', cell: (t) => when(t.createdAt) },
        ]} />
        <CreateForm label="Create tenant" path="/tenants" onCreated={tenants.reload}
          fields={[{ name: 'id', label: 'Id' }, { name: 'name', label: 'Name' }]} />
      </Section>
      <Section title="Organizations">
        <ErrorMessage text={organizations.error} />
        <Table label="Organizations" rows={organizations.data ?? []} columns={[
          { title: 'Name', cell: (o) => o.name },
          { title: 'Id', cell: (o) => <code>{o.id}</code> },
          { title: 'Tenant', cell: (o) => o.tenantId },
          { title: 'Policy', cell: (o) => <code>{policySummary(o.policy)}</code> },
          { title: 'Actions', cell: (o) => policyButton('organizations', o) },
        ]} />
        <CreateForm label="Create organization" path="/organizations" onCreated={organizations.reload}
          fields={[{ name: 'name', label: 'Name' }, { name: 'tenantId', label: 'Tenant', optional: true }]} />
      </Section>
      <Section title="Departments">
        <ErrorMessage text={departments.error} />
        <Table label="Departments" rows={departments.data ?? []} columns={[
          { title: 'Name', cell: (d) => d.name },
          { title: 'Id', cell: (d) => <code>{d.id}</code> },
          { title: 'Organization', cell: (d) => organizations.data?.find((o) => o.id === d.organizationId)?.name ?? d.organizationId },
          { title: 'Policy', cell: (d) => <code>{policySummary(d.policy)}</code> },
          { title: 'Actions', cell: (d) => policyButton('departments', d) },
        ]} />
        <CreateForm label="Create department" path="/departments" onCreated={departments.reload}
          fields={[{ name: 'name', label: 'Name' }, { name: 'organizationId', label: 'Organization id' }]} />
      </Section>
      {editing ? (
        <PolicyEditor owner={editing} onClose={() => setEditing(null)}
          onSaved={editing.kind === 'organizations' ? organizations.reload : departments.reload} />
      ) : null}
    </>
  );
}

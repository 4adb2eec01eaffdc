/** Keys: the list, creation (./key-create.tsx), revocation with a confirmation, limits changed with PATCH. */
import { useState } from 'preact/hooks';
import { api, errorText, listAll } from '../api.ts';
import { ErrorMessage, Notice, Section, Table, useLoad, when } from '../common.tsx';
import { Modal } from '../dialog.tsx';
import { describeLimits, LimitInputs, limitTexts, parseLimits, type RateLimits } from '../limits.tsx';
import { CreateKeyForm } from './key-create.tsx';

export interface KeyRecord {
  id: string;
  name: string;
  tenantId: string;
  prefix: string;
  status: 'active' | 'expired' | 'revoked';
  rateLimits: RateLimits | null;
  allowedIps: string[];
  expiresAt: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  scopes?: { capabilities?: string[] };
}

export function KeysPage() {
  const keys = useLoad(() => listAll<KeyRecord>('/keys'));
  const [revoking, setRevoking] = useState<KeyRecord | null>(null);
  const [editing, setEditing] = useState<KeyRecord | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  return (
    <>
      <Section title="Create a key">
        <CreateKeyForm onCreated={keys.reload} />
      </Section>
      <Section title="All keys">
        <ErrorMessage text={keys.error} />
        <Notice text={notice} />
        <Table label="Keys" rows={keys.data ?? []} empty={keys.loading ? 'Loading…' : 'No keys yet.'} columns={[
          { title: 'Name', cell: (k) => k.name },
          { title: 'Prefix', cell: (k) => <code>{k.prefix}…</code> },
          { title: 'Tenant', cell: (k) => k.tenantId },
          { title: 'Status', cell: (k) => <span class={`status status-${k.status}`}>{k.status}</span> },
          { title: 'Capabilities', cell: (k) => (k.scopes?.capabilities ?? []).join(', ') },
          { title: 'Rate limits', cell: (k) => describeLimits(k.rateLimits) },
          { title: 'Allowed IPs', cell: (k) => (k.allowedIps.length > 0 ? k.allowedIps.join(', ') : 'any') },
          { title: 'Expires', cell: (k) => when(k.expiresAt) },
          { title: 'Last used', cell: (k) => when(k.lastUsedAt) },
          {
            title: 'Actions',
            cell: (k) => (
              <span class="actions">
                <button type="button" class="secondary" onClick={() => setEditing(k)} aria-label={`Edit limits of ${k.name}`}>Edit limits</button>
                {k.status !== 'revoked'
                  ? <button type="button" class="danger" onClick={() => setRevoking(k)} aria-label={`Revoke ${k.name}`}>Revoke</button>
                  : null}
              </span>
            ),
          },
        ]} />
      </Section>
      {revoking ? (
        <ConfirmRevoke record={revoking} onClose={() => setRevoking(null)}
          onRevoked={() => { setNotice(`Key "${revoking.name}" revoked.`); setRevoking(null); keys.reload(); }} />
      ) : null}
      {editing ? (
        <EditLimits record={editing} onClose={() => setEditing(null)}
          onSaved={() => { setNotice(`Limits of "${editing.name}" saved.`); setEditing(null); keys.reload(); }} />
      ) : null}
    </>
  );
}

function ConfirmRevoke({ record, onClose, onRevoked }: { record: KeyRecord; onClose: () => void; onRevoked: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const revoke = async () => {
    try {
      await api('POST', `/keys/${encodeURIComponent(record.id)}/revoke`);
      onRevoked();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <Modal title={`Revoke key "${record.name}"?`} onClose={onClose}>
      <p>Every request with this key is refused from now on, on every instance. This cannot be undone.</p>
      <div class="actions">
        <button type="button" class="danger" onClick={revoke}>Yes, revoke</button>
        <button type="button" class="secondary" onClick={onClose}>Cancel</button>
      </div>
      <ErrorMessage text={error} />
    </Modal>
  );
}

function EditLimits({ record, onClose, onSaved }: { record: KeyRecord; onClose: () => void; onSaved: () => void }) {
  const [limits, setLimits] = useState(limitTexts(record.rateLimits));
  const [error, setError] = useState<string | null>(null);
  const save = async (event: Event) => {
    event.preventDefault();
    try {
      await api('PATCH', `/keys/${encodeURIComponent(record.id)}`, { rateLimits: parseLimits(limits) });
      onSaved();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <Modal title={`Rate limits of "${record.name}"`} onClose={onClose}>
      <form onSubmit={save}>
        <LimitInputs idPrefix="edit-key" value={limits} onChange={setLimits} />
        <div class="actions">
          <button type="submit">Save limits</button>
          <button type="button" class="secondary" onClick={onClose}>Cancel</button>
        </div>
        <ErrorMessage text={error} />
      </form>
    </Modal>
  );
}

/** The form that creates a key, and the dialog that shows its plaintext once. */
import { useState } from 'preact/hooks';
import { api, errorText } from '../api.ts';
import { ErrorMessage, splitList } from '../common.tsx';
import { Modal } from '../dialog.tsx';
import { LimitInputs, limitTexts, parseLimits } from '../limits.tsx';

const blank = { name: '', tenantId: '', organizationId: '', departmentId: '', capabilities: 'chat', allowedIps: '', expiresAt: '' };

export function CreateKeyForm({ onCreated }: { onCreated: () => void }) {
  const [fields, setFields] = useState(blank);
  const [limits, setLimits] = useState(limitTexts(null));
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const field = (name: keyof typeof blank, label: string, hint?: string, type: 'text' | 'datetime-local' = 'text') => (
    <div class="field">
      <label for={`new-key-${name}`}>{label}</label>
      <input id={`new-key-${name}`} type={type as 'text'} value={fields[name]} aria-describedby={hint ? `new-key-${name}-hint` : undefined}
        onInput={(e) => setFields({ ...fields, [name]: (e.target as HTMLInputElement).value })} />
      {hint ? <small id={`new-key-${name}-hint`}>{hint}</small> : null}
    </div>
  );
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    const body: Record<string, unknown> = { name: fields.name };
    for (const name of ['tenantId', 'organizationId', 'departmentId'] as const) if (fields[name].trim()) body[name] = fields[name].trim();
    body.scopes = { capabilities: splitList(fields.capabilities) };
    const ips = splitList(fields.allowedIps);
    if (ips.length > 0) body.allowedIps = ips;
    if (fields.expiresAt) body.expiresAt = new Date(fields.expiresAt).toISOString();
    const rateLimits = parseLimits(limits);
    if (rateLimits) body.rateLimits = rateLimits;
    try {
      const record = await api<{ name: string; key: string }>('POST', '/keys', body);
      setCreated({ name: record.name, key: record.key });
      setFields(blank);
      setLimits(limitTexts(null));
      onCreated();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <>
    <form onSubmit={submit} aria-label="Create a key">
      <div class="grid">
        {field('name', 'Name')}
        {field('tenantId', 'Tenant', 'Empty: default')}
        {field('organizationId', 'Organization (optional)')}
        {field('departmentId', 'Department (optional)')}
        {field('capabilities', 'Capabilities', 'Comma list, e.g. chat, embeddings')}
        {field('allowedIps', 'Allowed IPs', 'Comma list of addresses or CIDR ranges; empty: any')}
        {field('expiresAt', 'Expires at (optional)', undefined, 'datetime-local')}
      </div>
      <LimitInputs idPrefix="new-key" value={limits} onChange={setLimits} />
      <button type="submit">Create key</button>
      <ErrorMessage text={error} />
    </form>
    {created ? <ShowKeyOnce name={created.name} plaintext={created.key} onClose={() => setCreated(null)} /> : null}
    </>
  );
}

function ShowKeyOnce({ name, plaintext, onClose }: { name: string; plaintext: string; onClose: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(plaintext);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('The browser refused the clipboard: select the key and copy it by hand.');
    }
  };
  return (
    <Modal title={`Key "${name}" created`} onClose={onClose}>
      <p class="warning"><strong>Copy this key now.</strong> It is not shown again: the gateway keeps only its hash.</p>
      <label for="created-key">The new key</label>
      <input id="created-key" class="secret" readOnly value={plaintext} onFocus={(e) => (e.target as HTMLInputElement).select()} />
      <div class="actions">
        <button type="button" onClick={copy}>Copy key</button>
        <button type="button" class="secondary" onClick={onClose}>I have saved it, close</button>
      </div>
      {copied ? <p role="status">{copied}</p> : null}
    </Modal>
  );
}

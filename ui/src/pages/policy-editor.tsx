/** An organization's or department's policy as JSON, replaced with PUT .../policy; the API's validation messages shown. */
import { useState } from 'preact/hooks';
import { api, errorText } from '../api.ts';
import { ErrorMessage, Notice } from '../common.tsx';
import { Modal } from '../dialog.tsx';

export interface PolicyOwner {
  kind: 'organizations' | 'departments';
  id: string;
  name: string;
  policy: unknown;
}

export function PolicyEditor({ owner, onClose, onSaved }: { owner: PolicyOwner; onClose: () => void; onSaved: () => void }) {
  const [text, setText] = useState(JSON.stringify(owner.policy ?? {}, null, 2));
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const save = async (event: Event) => {
    event.preventDefault();
    setSaved(null);
    let policy: unknown;
    try {
      policy = JSON.parse(text);
    } catch (err) {
      setError(`Not valid JSON: ${(err as Error).message}`);
      return;
    }
    try {
      await api('PUT', `/${owner.kind}/${encodeURIComponent(owner.id)}/policy`, policy);
      setError(null);
      setSaved('Policy saved.');
      onSaved();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <Modal title={`Policy of "${owner.name}"`} onClose={onClose}>
      <form onSubmit={save}>
        <label for="policy-json">Policy (JSON: models, modelOverrides, rateLimits)</label>
        <textarea id="policy-json" rows={12} spellcheck={false} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
        <div class="actions">
          <button type="submit">Save policy</button>
          <button type="button" class="secondary" onClick={onClose}>Close</button>
        </div>
        <ErrorMessage text={error} />
        <Notice text={saved} />
      </form>
    </Modal>
  );
}

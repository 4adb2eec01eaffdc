/** The admin UI: a sign-in form, then pages chosen by the URL's hash (#/keys, #/usage, ...). */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, clearToken, errorText, getToken, setToken } from './api.ts';
import { ErrorMessage } from './common.tsx';
import { AuditPage } from './pages/audit.tsx';
import { BudgetsPage } from './pages/budgets.tsx';
import { DirectoryPage } from './pages/directory.tsx';
import { KeysPage } from './pages/keys.tsx';
import { ProvidersPage } from './pages/providers.tsx';
import { UsagePage } from './pages/usage.tsx';

const PAGES = [
  { path: 'keys', title: 'Keys', page: KeysPage },
  { path: 'directory', title: 'Tenants & organizations', page: DirectoryPage },
  { path: 'budgets', title: 'Budgets', page: BudgetsPage },
  { path: 'usage', title: 'Usage', page: UsagePage },
  { path: 'providers', title: 'Providers', page: ProvidersPage },
  { path: 'audit', title: 'Audit', page: AuditPage },
] as const;

const currentPath = () => location.hash.replace(/^#\/?/, '') || 'keys';

function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [token, setTokenText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // Any admin call proves the token; the providers list is small.
      await api('GET', '/providers', undefined, token.trim());
      setToken(token.trim());
      onSignedIn();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>aigw admin</h1>
      <form onSubmit={submit}>
        <label for="token">Admin token or admin JWT</label>
        <input id="token" name="token" type="password" autocomplete="off" required value={token}
          onInput={(e) => setTokenText((e.target as HTMLInputElement).value)} />
        <button type="submit" disabled={busy}>Sign in</button>
      </form>
      <ErrorMessage text={error} />
      <p class="hint">The token is kept in this tab's session storage only, until you sign out or close the tab.</p>
    </main>
  );
}

function App() {
  const [signedIn, setSignedIn] = useState(getToken() !== null);
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const onHash = () => setPath(currentPath());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  const current = PAGES.find((p) => p.path === path) ?? PAGES[0];
  const Page = current.page;
  const signOut = () => {
    clearToken();
    setSignedIn(false);
  };
  return (
    <div class="shell">
      <header>
        <span class="brand">aigw admin</span>
        <nav aria-label="Pages">
          {PAGES.map((p) => <a href={`#/${p.path}`} aria-current={p === current ? 'page' : undefined}>{p.title}</a>)}
        </nav>
        <button type="button" class="secondary" onClick={signOut}>Sign out</button>
      </header>
      <main>
        <h1>{current.title}</h1>
        <Page />
      </main>
    </div>
  );
}

const root = document.getElementById('app')!;
// The "Loading" placeholder is plain HTML for browsers where the script does not run: replaced, not diffed.
root.replaceChildren();
render(<App />, root);

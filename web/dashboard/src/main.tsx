/**
 * The dashboard page: sign-in, the clusters overview and a cluster's page,
 * routed by the path under /dashboard/. Each page refetches its data when
 * the server's event stream says something it shows changed.
 */
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, apiBase, call, dashboardRoot, rememberSession, type SessionInfo } from './api';
import { ClusterPage } from './cluster-page';
import { navigate } from './navigation';
import { Overview } from './overview';
import './styles.css';

/** `<root>/namespaces/<ns>/clusters/<name>` is a cluster's page; anything else the overview. */
function routeOf(pathname: string): { page: 'overview' } | { page: 'cluster'; namespace: string; name: string } {
  const match = /^\/namespaces\/([^/]+)\/clusters\/([^/]+)\/?$/.exec(pathname.slice(dashboardRoot.length));
  return match ? { page: 'cluster', namespace: decodeURIComponent(match[1]!), name: decodeURIComponent(match[2]!) } : { page: 'overview' };
}

function App() {
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined);
  const [path, setPath] = useState(location.pathname);
  const [revision, setRevision] = useState(0);

  useEffect(() => {
    call<SessionInfo>('GET', '/session').then(
      (found) => {
        rememberSession(found);
        setSession(found);
      },
      () => setSession(null),
    );
    const onPop = () => setPath(location.pathname);
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);

  // Live: every change the stream reports, and every (re)connection, bumps the revision pages refetch on.
  useEffect(() => {
    if (!session) return;
    const events = new EventSource(`${apiBase}/events`);
    const bump = () => setRevision((current) => current + 1);
    events.addEventListener('ready', bump);
    events.addEventListener('change', bump);
    return () => events.close();
  }, [session]);

  const signOut = useCallback(async () => {
    await call('DELETE', '/session').catch(() => undefined);
    setSession(null);
  }, []);

  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) return <SignIn onSignedIn={setSession} />;
  const route = routeOf(path);
  return (
    <>
      <header>
        <a
          href={`${dashboardRoot}/`}
          class="brand"
          onClick={(event) => {
            event.preventDefault();
            navigate(`${dashboardRoot}/`);
          }}
        >
          capo-apiserver
        </a>
        <span class="user" data-testid="user">
          {session.user.name}
        </span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        {route.page === 'cluster' ? <ClusterPage namespace={route.namespace} name={route.name} revision={revision} /> : <Overview revision={revision} />}
      </main>
    </>
  );
}

function SignIn({ onSignedIn }: { onSignedIn: (session: SessionInfo) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | undefined>();
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      const session = await call<SessionInfo>('POST', '/session', { token: token.trim() });
      rememberSession(session);
      onSignedIn(session);
    } catch (thrown) {
      setError(thrown instanceof ApiError && thrown.code === 401 ? 'That token is not valid.' : String((thrown as Error).message));
    }
  };
  return (
    <form class="sign-in" onSubmit={submit}>
      <h1>capo-apiserver</h1>
      <label>
        Bearer token
        <input type="password" name="token" autocomplete="off" value={token} onInput={(event) => setToken((event.target as HTMLInputElement).value)} />
      </label>
      <p class="hint">The embedded server writes the admin's token to the file named token in its data directory.</p>
      <button type="submit">Sign in</button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

render(<App />, document.getElementById('app')!);

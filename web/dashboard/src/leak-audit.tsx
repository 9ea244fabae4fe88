/**
 * The leak audit: resources of ours in the clouds whose owner object is gone.
 * It reads every cloud in use, so it runs when asked, not on each refresh;
 * deleting asks for a second click that names how many resources go.
 */
import { useState } from 'preact/hooks';
import { call } from './api';

interface Leak {
  cloud: string;
  kind: string;
  id: string;
  name: string;
  ownerUid: string;
}

interface Audit {
  clouds: string[];
  leaks: Leak[];
  otherInstallations: number;
  failed: { cloud: string; message: string }[];
  mayCleanUp: boolean;
}

interface Outcome {
  kind: string;
  id: string;
  outcome: string;
  message?: string;
}

export function LeakAudit() {
  const [audit, setAudit] = useState<Audit | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [confirming, setConfirming] = useState(false);
  const [outcomes, setOutcomes] = useState<Outcome[] | undefined>();
  const run = async () => {
    setError(undefined);
    setConfirming(false);
    try {
      setAudit(await call<Audit>('GET', '/leaks'));
    } catch (thrown) {
      setError((thrown as Error).message);
    }
  };
  const cleanUp = async () => {
    if (!audit) return;
    try {
      const answer = await call<{ outcomes: Outcome[] }>('POST', '/leaks/cleanup', { resources: audit.leaks.map(({ kind, id }) => ({ kind, id })) });
      setOutcomes(answer.outcomes);
      await run();
    } catch (thrown) {
      setError((thrown as Error).message);
    }
  };
  return (
    <section data-testid="leaks">
      <h2>Leak audit</h2>
      <div class="actions">
        <button type="button" onClick={run}>
          Run leak audit
        </button>
        {audit?.mayCleanUp && audit.leaks.length > 0 && !confirming && (
          <button type="button" onClick={() => setConfirming(true)}>
            Delete leaked resources…
          </button>
        )}
        {confirming && audit && (
          <button type="button" class="danger" onClick={cleanUp}>
            Confirm: delete {audit.leaks.length} resources
          </button>
        )}
      </div>
      <p class="hint">
        Resources carrying our owner tag whose owner object no longer exists, in each cloud project our objects use. What another capo-apiserver installation
        made in the same project is left out; resources made before installations were tagged count as this one's.
      </p>
      {error && <p class="error">{error}</p>}
      {audit && (
        <p class="muted" data-testid="leak-summary">
          {audit.leaks.length === 0 ? 'No leaks' : `${audit.leaks.length} leaked`} in {audit.clouds.length} cloud{audit.clouds.length === 1 ? '' : 's'}
          {audit.otherInstallations > 0 && ` · ${audit.otherInstallations} of other installations left alone`}
          {audit.failed.map((failure) => ` · ${failure.cloud} could not be audited: ${failure.message}`).join('')}
        </p>
      )}
      {audit && audit.leaks.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Kind</th>
              <th>Name</th>
              <th>ID</th>
              <th>Owner uid (gone)</th>
              <th>Cloud</th>
            </tr>
          </thead>
          <tbody>
            {audit.leaks.map((leak) => (
              <tr key={`${leak.kind}/${leak.id}`} data-leak={leak.id}>
                <td>{leak.kind}</td>
                <td>{leak.name}</td>
                <td>
                  <code>{leak.id}</code>
                </td>
                <td>
                  <code>{leak.ownerUid}</code>
                </td>
                <td>{leak.cloud}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {outcomes && (
        <ul data-testid="cleanup-outcomes">
          {outcomes.map((outcome) => (
            <li key={`${outcome.kind}/${outcome.id}`}>
              {outcome.kind} {outcome.id}: {outcome.outcome}
              {outcome.message ? ` (${outcome.message})` : ''}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

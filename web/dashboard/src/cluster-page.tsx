/**
 * A cluster's page: why it is not Ready, the actions the user may take, the
 * tree from the Cluster to its ports, the bootstrap variables and the
 * Ansible inventory.
 */
import { useEffect, useState } from 'preact/hooks';
import { apiBase, call, clusterPath, type ClusterDetail, type TreeNode } from './api';
import { Timeline } from './timeline';
import { Badge, toneOf } from './widgets';

export function ClusterPage({ namespace, name, revision }: { namespace: string; name: string; revision: number }) {
  const [detail, setDetail] = useState<ClusterDetail | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [preflight, setPreflight] = useState<unknown>();
  const [inventory, setInventory] = useState<unknown>();
  const path = clusterPath(namespace, name);

  const load = () =>
    call<ClusterDetail>('GET', path).then(
      (found) => {
        setDetail(found);
        setError(undefined);
      },
      (thrown: Error) => setError(thrown.message),
    );
  useEffect(() => {
    void load();
  }, [namespace, name, revision]);

  const act = async (action: 'reconcile' | 'pause' | 'resume') => {
    try {
      await call('POST', `${path}/${action}`);
      setNotice(action === 'reconcile' ? 'Queued for reconcile.' : action === 'pause' ? 'Paused.' : 'Resumed.');
      await load();
    } catch (thrown) {
      setNotice(`${action} refused: ${(thrown as Error).message}`);
    }
  };
  const runPreflight = async () => {
    setPreflight('running…');
    setPreflight(await call('GET', `${path}/preflight`).catch((thrown: Error) => thrown.message));
  };
  const showInventory = async () => setInventory(await call('GET', `${path}/inventory`).catch((thrown: Error) => thrown.message));

  if (error) return <p class="error">{error}</p>;
  if (!detail) return <p class="loading">Loading…</p>;
  const { summary, blockers, actions } = detail;
  // The variables the bootstrap needs and lacks, as the overview counts them (not those that do not apply here).
  const missing = (detail.variables?.status?.missing ?? []).filter((variable) => detail.summary.missingVariables.includes(variable.variable));
  const vars = detail.variables?.status?.vars ?? {};
  return (
    <section>
      <h1>
        {namespace}/{name} <Badge tone={summary.ready ? 'ok' : 'bad'}>{summary.ready ? 'Ready' : 'Not ready'}</Badge>
        {summary.paused && <Badge tone="warn">paused</Badge>}
        {detail.drift && <Badge tone="warn">drift</Badge>}
      </h1>
      <p class="facts">
        {summary.phase && `Phase ${summary.phase} · `}machines ready {summary.machinesReady}/{summary.machines} · API endpoint{' '}
        {summary.apiEndpoint ?? 'not yet'}
      </p>
      {summary.hidden && (
        <p class="muted" data-testid="hidden">
          Not shown to you: {summary.hidden.map((resource) => resource.split('.')[0]).join(', ')}
        </p>
      )}
      <div class="actions" data-testid="actions">
        {actions.reconcile && (
          <button type="button" onClick={() => act('reconcile')}>
            Reconcile now
          </button>
        )}
        {actions.pause &&
          (summary.paused ? (
            <button type="button" onClick={() => act('resume')}>
              Resume
            </button>
          ) : (
            <button type="button" onClick={() => act('pause')}>
              Pause
            </button>
          ))}
        {actions.preflight && (
          <button type="button" onClick={runPreflight}>
            Run preflight
          </button>
        )}
        {notice && (
          <span class="notice" role="status">
            {notice}
          </span>
        )}
      </div>
      {preflight !== undefined && <pre data-testid="preflight">{typeof preflight === 'string' ? preflight : JSON.stringify(preflight, null, 2)}</pre>}

      <section class={`why ${summary.ready ? 'ready' : 'blocked'}`} data-testid="why-not-ready">
        <h2>{summary.ready ? 'Ready' : 'Why not Ready'}</h2>
        {blockers.length === 0 && !summary.ready && <p>Nothing reports a problem yet: the reconciler has not written a status.</p>}
        {blockers[0] && (
          <div class="blocker">
            <p>
              <strong>{blockers[0].object}</strong>: {blockers[0].reason}
            </p>
            <p class="message">{blockers[0].message}</p>
            <p class="advice">{blockers[0].advice}</p>
          </div>
        )}
        {blockers.length > 1 && (
          <details>
            <summary>{blockers.length - 1} more</summary>
            <ul>
              {blockers.slice(1).map((blocker) => (
                <li key={`${blocker.object}/${blocker.reason}`}>
                  <strong>{blocker.object}</strong>: {blocker.reason} — {blocker.message}
                </li>
              ))}
            </ul>
          </details>
        )}
      </section>

      {detail.drift && (
        <section class="drift" data-testid="drift">
          <h2>Changed behind our back</h2>
          <p>Resources the cloud no longer has, though nothing here deleted them: made again, or their object failed for its owner to replace.</p>
          <ul>
            {detail.drift.map((event) => (
              <li key={`${event.object}/${event.firstAt}/${event.message}`}>
                <strong>{event.object}</strong> <time dateTime={event.lastAt}>{event.lastAt}</time>: {event.message}
              </li>
            ))}
          </ul>
        </section>
      )}

      <section>
        <h2>Resources</h2>
        <ul class="tree" data-testid="tree">
          <Node node={detail.tree} />
        </ul>
      </section>

      <section>
        <h2>Provisioning timeline</h2>
        <Timeline spans={detail.timeline} endsAt={detail.timelineEndsAt} events={detail.events} />
        {detail.events && detail.events.length > 0 && (
          <table class="events" data-testid="events">
            <thead>
              <tr>
                <th>Type</th>
                <th>Reason</th>
                <th>Object</th>
                <th>Message</th>
                <th>Count</th>
              </tr>
            </thead>
            <tbody>
              {detail.events.map((event) => (
                <tr key={`${event.object}/${event.reason}/${event.firstAt}/${event.message}`} class={event.type.toLowerCase()}>
                  <td>{event.type}</td>
                  <td>{event.reason}</td>
                  <td>{event.object}</td>
                  <td>{event.message}</td>
                  <td>{event.count}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <section data-testid="variables">
        <h2>Bootstrap variables</h2>
        {missing.length > 0 && (
          <table class="missing">
            <thead>
              <tr>
                <th>Missing</th>
                <th>Field</th>
                <th>Reason</th>
                <th>Message</th>
              </tr>
            </thead>
            <tbody>
              {missing.map((variable) => (
                <tr key={variable.variable + variable.path}>
                  <td>{variable.variable}</td>
                  <td>{variable.path}</td>
                  <td>{variable.reason}</td>
                  <td>{variable.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <table>
          <tbody>
            {Object.entries(vars).map(([variable, value]) => (
              <tr key={variable}>
                <td>{variable}</td>
                <td>
                  <code>{typeof value === 'string' ? value : JSON.stringify(value)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>

      <section>
        <h2>Ansible inventory</h2>
        <div class="actions">
          <button type="button" onClick={showInventory}>
            View
          </button>
          <a class="button" href={`${apiBase}${path}/inventory`} download={`${namespace}-${name}-inventory.json`}>
            Download
          </a>
        </div>
        {inventory !== undefined && <pre data-testid="inventory">{typeof inventory === 'string' ? inventory : JSON.stringify(inventory, null, 2)}</pre>}
      </section>
    </section>
  );
}

function Node({ node }: { node: TreeNode }) {
  return (
    <li data-kind={node.kind} data-id={node.id}>
      <span class="kind">{node.kind}</span> <span class="name">{node.name}</span>
      {node.state && <Badge tone={toneOf(node.state, node.ready)}>{node.state}</Badge>}
      {node.id && node.id !== node.name && <code class="id">{node.id}</code>}
      {node.reason && <span class="reason">{node.reason}</span>}
      {node.message && <span class="message">{node.message}</span>}
      {node.children.length > 0 && (
        <ul>
          {node.children.map((child) => (
            <Node key={`${child.kind}/${child.id ?? child.name}`} node={child} />
          ))}
        </ul>
      )}
    </li>
  );
}

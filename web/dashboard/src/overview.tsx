/** The clusters overview: one row per cluster the user may list, and the reconcile queue. */
import { useEffect, useState } from 'preact/hooks';
import { call, clusterPath, dashboardRoot, type ClusterSummary } from './api';
import { CallsChart } from './calls-chart';
import { LeakAudit } from './leak-audit';
import { navigate } from './navigation';
import { Badge } from './widgets';

export function Overview({ revision }: { revision: number }) {
  const [clusters, setClusters] = useState<ClusterSummary[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    call<{ clusters: ClusterSummary[] }>('GET', '/clusters').then(
      (found) => {
        setClusters(found.clusters);
        setError(undefined);
      },
      (thrown: Error) => setError(thrown.message),
    );
  }, [revision]);

  return (
    <section>
      <h1>Clusters</h1>
      {error && <p class="error">{error}</p>}
      {clusters && clusters.length === 0 && <p>No OpenStackCluster you may list. Apply one (kubectl apply -f examples/) and it shows here.</p>}
      {clusters && clusters.length > 0 && (
        <table data-testid="clusters">
          <thead>
            <tr>
              <th>Cluster</th>
              <th>Phase</th>
              <th>Ready</th>
              <th>Machines ready</th>
              <th>API endpoint</th>
              <th>Missing variables</th>
              <th>Blocked by</th>
            </tr>
          </thead>
          <tbody>
            {clusters.map((cluster) => (
              <tr key={`${cluster.namespace}/${cluster.name}`} data-cluster={`${cluster.namespace}/${cluster.name}`}>
                <td>
                  <a
                    href={`${dashboardRoot}${clusterPath(cluster.namespace, cluster.name)}`}
                    onClick={(event) => {
                      event.preventDefault();
                      navigate(`${dashboardRoot}${clusterPath(cluster.namespace, cluster.name)}`);
                    }}
                  >
                    {cluster.namespace}/{cluster.name}
                  </a>
                </td>
                <td>
                  {cluster.phase ?? '—'}
                  {cluster.paused && <Badge tone="warn">paused</Badge>}
                </td>
                <td>
                  <Badge tone={cluster.ready ? 'ok' : 'bad'}>{cluster.ready ? 'Ready' : 'Not ready'}</Badge>
                </td>
                <td data-testid="machines">
                  {cluster.machinesReady}/{cluster.machines}
                </td>
                <td>{cluster.apiEndpoint ?? '—'}</td>
                <td>{cluster.missingVariables.length === 0 ? 'none' : cluster.missingVariables.join(', ')}</td>
                <td class="message">{cluster.lastError ? `${cluster.lastError.object}: ${cluster.lastError.reason}` : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Queue revision={revision} />
      <section>
        <h2>OpenStack calls per service, last 15 minutes</h2>
        <CallsChart revision={revision} />
      </section>
      <LeakAudit />
    </section>
  );
}

interface ControllerStatus {
  name: string;
  leading: boolean;
  queued: number;
  processing: number;
  scheduled: number;
}

function Queue({ revision }: { revision: number }) {
  const [queue, setQueue] = useState<{ controllers: ControllerStatus[] } | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    call<{ controllers: ControllerStatus[] }>('GET', '/queue').then(setQueue, (thrown: Error) => setError(thrown.message));
  }, [revision]);
  return (
    <section>
      <h2>Reconcile queue</h2>
      {error && <p class="muted">{error}</p>}
      {queue && (
        <table data-testid="queue">
          <thead>
            <tr>
              <th>Controller</th>
              <th>Leading</th>
              <th>Queued</th>
              <th>Processing</th>
              <th>Scheduled</th>
            </tr>
          </thead>
          <tbody>
            {queue.controllers.map((controller) => (
              <tr key={controller.name}>
                <td>{controller.name}</td>
                <td>{controller.leading ? 'yes' : 'no'}</td>
                <td>{controller.queued}</td>
                <td>{controller.processing}</td>
                <td>{controller.scheduled}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

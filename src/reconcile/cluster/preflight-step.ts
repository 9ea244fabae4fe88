/**
 * Preflight, before the first create: credentials, images, flavors,
 * external network, Octavia and quota headroom, for the cluster and the
 * machines known so far. A failure becomes PreflightChecksPassed=False with
 * what to fix, and nothing is created until the checks pass (rechecked at a
 * steady pace, since most fixes happen in the cloud, not in the object).
 * Checks the cloud did not answer (a 503, a 429) are no finding: they are
 * retried with the queue's backoff, as any failed call is.
 * Once the cluster has resources the checks are history and are not rerun.
 */
import { failedOnlyUndecided, requirementsOf, runPreflight, summarizeFailures } from '../../preflight/index.js';
import { findCondition, isConditionTrue } from '../conditions.js';
import type { ClusterContext } from './context.js';

const recheckMs = 60_000;

/** Whether this pass is the cluster's first to run the checks: none has run yet and nothing has been created. */
export function firstPreflight(context: ClusterContext): boolean {
  const { status } = context.pass;
  return findCondition(status, 'PreflightChecksPassed') === undefined && status.network === undefined;
}

export async function reconcilePreflight(context: ClusterContext): Promise<boolean> {
  const { pass, spec, cluster, deps, cloud } = context;
  if (isConditionTrue(pass.status, 'PreflightChecksPassed') || pass.status.network !== undefined) return true;
  // The creates that follow the checks ask whether Neutron takes tags in a create body: asked beside
  // the checks, that read is not one more round trip before the network's create (it never rejects).
  void cloud.clients.neutron.createTakesTags();
  const machines = await deps.machines.list(cluster.namespace, { 'cluster.x-k8s.io/cluster-name': cluster.name }, { asCached: true });
  const report = await runPreflight(
    cloud.clients,
    cloud.session,
    requirementsOf(
      spec,
      machines.map((machine) => machine.spec),
    ),
  );
  if (report.passed) {
    pass.event('Normal', 'PreflightPassed', 'every preflight check passed: the cloud has what the cluster asks for');
    pass.condition({ type: 'PreflightChecksPassed', status: 'True', reason: 'Passed' });
    // Found by the reconciler's own rule (the given one, or the only match; none when the spec turns it off): the network step takes it as recorded.
    const external = report.externalNetwork;
    if (external !== undefined)
      pass.observe((status) => {
        status.externalNetwork = external;
      });
    return true;
  }
  const message = summarizeFailures(report);
  // Once per finding: the check reruns every minute, and the same answer is not news.
  if (findCondition(pass.status, 'PreflightChecksPassed')?.message !== message && !failedOnlyUndecided(report))
    pass.event('Warning', 'PreflightFailed', message);
  pass.condition({ type: 'PreflightChecksPassed', status: 'False', reason: 'PreflightFailed', message });
  if (failedOnlyUndecided(report)) throw new Error(message);
  pass.condition({ type: 'Ready', status: 'False', reason: 'PreflightFailed', message });
  pass.wait({ waitingFor: `preflight checks to pass (${message})`, requeueAfterMs: recheckMs }, true);
  return false;
}

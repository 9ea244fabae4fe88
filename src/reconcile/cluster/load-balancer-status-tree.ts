/**
 * One read of a load balancer's status tree vouching for the load balancer
 * and its listeners, pools and monitors, at resync and when a first build is
 * found ACTIVE, rather than a read of each.
 */
import { poolMonitors, provisioningStatuses } from '../../openstack/index.js';
import { setOwned } from '../owned.js';
import { absentOn404 } from '../resource/actuator.js';
import type { ClusterContext } from './context.js';
import { owned } from './load-balancer-shared.js';

/** What runs out this soon is vouched for by the tree now: the pass's own reads of the children come later than its check. */
const treeVouchAheadMs = 1_000;

/**
 * At resync, the load balancer and its listeners, pools and monitors are
 * vouched for by one read of its status tree instead of a GET each (four for
 * a one-port API load balancer, seven for the two-port ingress one): when
 * each was verified here at this generation, one at least has run out, and
 * the tree shows every one of them ACTIVE, all count as verified again.
 * Anything else (one missing or not ACTIVE, the tree not found, one never
 * verified since a restart) leaves them to their own reads, which judge it
 * as always. The tree has no other fields: a spec change (a new generation)
 * reads them in full again, so a listener's allowed CIDRs or a monitor's
 * timings changed behind our back are put right then, not at every resync.
 *
 * The same read ends a first build: once the load balancer is found ACTIVE,
 * the listeners and pools its fully populated create made here, seen only in
 * that answer, are vouched for by the tree, which also names each pool's
 * monitor (recorded then), instead of a read of each and a lookup of the
 * monitor by name. A child the cloud left unfinished (not ACTIVE in the
 * tree) goes to its own reads, which deal with it.
 *
 * True when it read the tree.
 */
export async function vouchForTree(context: ClusterContext, lbRole: string, prefix: string, lbId: string | undefined): Promise<boolean> {
  const { pass, cloud } = context;
  if (lbId === undefined) return false;
  const recorded = owned(pass);
  const children = Object.entries(recorded).filter(
    ([role]) => role.startsWith(prefix) && /^(listener|pool|healthmonitor)\/\d+$/.test(role.slice(prefix.length)),
  );
  const seen = [[lbRole, lbId], ...children].map(([role, id]) => ({
    role,
    id,
    last: pass.lastVerified<{ id: string; provisioning_status: string }>(role, id, treeVouchAheadMs),
  }));
  if (seen.some(({ last }) => last === undefined) || !seen.some(({ last }) => last!.expired)) return false;
  const tree = await absentOn404(cloud.clients.octavia.getLoadBalancerStatus(lbId));
  if (!tree) return true;
  const monitors = builtMonitors(prefix, seen, recorded, poolMonitors(tree));
  const vouched = [...seen.map(({ role, id, last }) => ({ role, id, resource: last!.resource })), ...monitors];
  const statuses = provisioningStatuses(tree);
  if (!vouched.every(({ id }) => statuses.get(id) === 'ACTIVE')) return true;
  if (monitors.length > 0) {
    await pass.record((status) => {
      for (const { role, id } of monitors) setOwned(status, role, id);
    });
  }
  for (const { role, resource } of vouched) {
    const active: { id: string; provisioning_status: string } = { ...resource, provisioning_status: 'ACTIVE' };
    pass.trust(role, active);
  }
  return true;
}

/** The monitor under each pool a fully populated create made here (seen only in its answer) whose monitor is not recorded yet, as the status tree names it. */
function builtMonitors(
  prefix: string,
  seen: readonly { role: string; id: string; last: { unverified: boolean } | undefined }[],
  recorded: Record<string, string>,
  monitorsByPool: ReadonlyMap<string, { id: string; provisioning_status: string }>,
): { role: string; id: string; resource: { id: string; provisioning_status: string } }[] {
  return seen.flatMap(({ role, id, last }) => {
    const port = role.slice(prefix.length).match(/^pool\/(\d+)$/)?.[1];
    if (port === undefined || !last?.unverified || recorded[`${prefix}healthmonitor/${port}`] !== undefined) return [];
    const monitor = monitorsByPool.get(id);
    return monitor ? [{ role: `${prefix}healthmonitor/${port}`, id: monitor.id, resource: monitor }] : [];
  });
}

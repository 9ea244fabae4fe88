/**
 * The managed security groups. Their rules reference each other's IDs, so a
 * new cluster first makes sure every group exists (asking for Neutron's own
 * default rules only, which changes nothing), then applies the full rule
 * sets with all IDs known, in the same pass and without reading the groups
 * again, then or in the next pass.
 */
import type { JsonObject } from '../../storage/interface.js';
import { securityGroupName, type SecurityGroupRole } from '../../capo/names.js';
import { settleAll } from '../reconcile-pass.js';
import { securityGroupActuator, type SecurityGroupDesired } from '../resource/security-group.js';
import { desiredRules, type ManagedGroupIds } from '../../capo/security-group-rules.js';
import type { ClusterContext } from './context.js';

const statusFields: Record<SecurityGroupRole, string> = {
  controlplane: 'controlPlaneSecurityGroup',
  worker: 'workerSecurityGroup',
  bastion: 'bastionSecurityGroup',
};

function bastionEnabled(context: ClusterContext): boolean {
  const bastion = context.spec.bastion;
  return bastion !== undefined && bastion.enabled !== false;
}

function recordedId(status: JsonObject, role: SecurityGroupRole): string | undefined {
  return (status[statusFields[role]] as { id?: string } | undefined)?.id;
}

/** The managed groups' lookups by name, started ahead for a new cluster (see the reconciler's reconcileNormal). */
export function lookUpSecurityGroupsAhead(context: ClusterContext): void {
  const { pass, spec, cluster, cloud } = context;
  if (spec.managedSecurityGroups === undefined) return;
  const actuator = securityGroupActuator(cloud.clients.neutron);
  for (const role of managedRoles(context)) {
    if (recordedId(pass.status, role) === undefined)
      pass.readAhead(`securitygroup/${role}`, actuator, { recordedId: undefined, name: securityGroupName(cluster, role) });
  }
}

function managedRoles(context: ClusterContext): SecurityGroupRole[] {
  return bastionEnabled(context) ? ['controlplane', 'worker', 'bastion'] : ['controlplane', 'worker'];
}

/** True once every managed group has its rules, or none is managed. */
export async function reconcileSecurityGroups(context: ClusterContext): Promise<boolean> {
  const { pass, spec, cluster, cloud } = context;
  const managed = spec.managedSecurityGroups;
  if (managed === undefined) return true;
  const roles = managedRoles(context);
  const actuator = securityGroupActuator(cloud.clients.neutron);

  // With every ID already recorded, one ensure per group applies the full rules; otherwise the groups come first.
  const knownIds = Object.fromEntries(roles.map((role) => [role, recordedId(pass.status, role)])) as Partial<ManagedGroupIds>;
  const allKnown = roles.every((role) => knownIds[role] !== undefined);
  const context_ = {
    apiServerPorts: apiServerPorts(context),
    subnetCidrs: clusterSubnetCidrs(context),
  };
  const desiredFor = (role: SecurityGroupRole, groups: ManagedGroupIds | undefined): SecurityGroupDesired => ({
    name: securityGroupName(cluster, role),
    description: 'Cluster API managed group',
    // Until every group's ID is known its rules are left alone: a new group has Neutron's defaults
    // (which the full rules keep), and one found by its name rather than its recorded ID (a copy of
    // the object without its status, as clusterctl move makes) keeps the rules it has until the
    // full ones replace them, instead of losing them for a moment.
    rules: groups ? desiredRules(role, managed, { ...context_, groups }) : undefined,
  });

  const groups = await settleAll(
    roles.map((role) =>
      pass.ensure(`securitygroup/${role}`, actuator, {
        recordedId: knownIds[role],
        desired: desiredFor(role, allKnown ? (knownIds as ManagedGroupIds) : undefined),
        record: (status, id) => {
          status[statusFields[role]] = { id, name: securityGroupName(cluster, role) };
        },
      }),
    ),
  );
  const ids = Object.fromEntries(roles.map((role, index) => [role, groups[index].resource.id])) as unknown as ManagedGroupIds;
  if (!allKnown) {
    await settleAll(
      roles.map(async (role, index) => {
        // Verified with the default rules only: unverified until the full rules are in (a failure here leaves it so).
        pass.invalidate(`securitygroup/${role}`);
        const progress = await actuator.postCreate!(groups[index].resource, desiredFor(role, ids), pass.owner);
        if (!('done' in progress)) pass.wait(progress);
        // Only its ID is used from here; the next pass need not read the rules it just wrote.
        else pass.trust(`securitygroup/${role}`, groups[index].resource, actuator);
      }),
    );
  }
  pass.observe((status) => {
    roles.forEach((role, index) => {
      status[statusFields[role]] = { id: groups[index].resource.id, name: groups[index].resource.name };
    });
  });
  const ready = groups.every((group) => group.ready);
  pass.condition(
    ready
      ? { type: 'SecurityGroupsReady', status: 'True', reason: 'Ready' }
      : { type: 'SecurityGroupsReady', status: 'False', reason: 'Provisioning', message: 'waiting for the security groups' },
  );
  return ready;
}

/**
 * A disabled bastion's group goes once the bastion server is gone (the
 * caller runs this after the bastion step); without a recorded group there
 * is nothing to look up.
 */
export async function removeDisabledBastionGroup(context: ClusterContext): Promise<void> {
  if (context.spec.managedSecurityGroups === undefined || bastionEnabled(context)) return;
  if (recordedId(context.pass.status, 'bastion') === undefined || context.pass.status.bastion !== undefined) return;
  await removeGroup(context, 'bastion');
}

/**
 * The cluster subnets' IPv4 CIDRs (NodePorts are open to them): as built, or
 * before the managed subnet exists, as the spec will have it built, so that a
 * new cluster's groups get their full rules in the same pass as the network.
 */
function clusterSubnetCidrs(context: ClusterContext): string[] {
  const built = ((context.pass.status.network as { subnets?: { cidr: string }[] } | undefined)?.subnets ?? []).map((subnet) => subnet.cidr);
  const planned = built.length > 0 ? built : (context.spec.managedSubnets ?? []).slice(0, 1).map((subnet) => subnet.cidr);
  return planned.filter((cidr) => !cidr.includes(':'));
}

export function apiServerPorts(context: ClusterContext): number[] {
  const apiServer = context.spec.apiServer;
  const port = context.spec.controlPlaneEndpoint?.port ?? apiServer?.port ?? 6443;
  return [port, ...(apiServer?.managedLoadBalancer?.additionalPorts ?? [])];
}

async function removeGroup(context: ClusterContext, role: SecurityGroupRole): Promise<boolean> {
  const { pass, cluster, cloud } = context;
  if (
    !(await pass.remove(securityGroupActuator(cloud.clients.neutron), {
      recordedId: recordedId(pass.status, role),
      name: securityGroupName(cluster, role),
      owner: pass.owner,
    }))
  )
    return false;
  if (pass.status[statusFields[role]] !== undefined) await pass.record((status) => delete status[statusFields[role]]);
  return true;
}

export async function deleteSecurityGroups(context: ClusterContext): Promise<boolean> {
  const results: boolean[] = [];
  for (const role of ['bastion', 'worker', 'controlplane'] as const) results.push(await removeGroup(context, role));
  return results.every(Boolean);
}

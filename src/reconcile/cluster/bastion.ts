/**
 * The bastion, as its own OpenStackServer object owned by the cluster: this
 * reconciler only decides whether the object should exist and with which
 * spec. A spec change replaces the server (the object is deleted, then
 * created anew), which is the one safe meaning of changing an immutable
 * server; the floating IP we own survives the replacement and moves to the
 * new server.
 */
import { serverDeletedAt } from '../server/reconciler.js';
import type { JsonObject } from '../../storage/interface.js';
import { metaOf, statusOf } from '../objects.js';
import { bastionServerName } from '../../capo/names.js';
import { findUserFloatingIp, floatingIpActuator } from '../resource/floating-ip.js';
import { serverSpecFor, specHash } from '../server-spec.js';
import { clusterNameLabel } from '../paused.js';
import { ownedResources, setOwned } from '../owned.js';
import type { Networking } from './network.js';
import type { ClusterContext } from './context.js';
import { adoptAnnotation } from '../adoption.js';

export const specHashAnnotation = 'capo-apiserver.io/spec-hash';
/**
 * How often to look at a bastion being built or removed when no event arrives sooner. Every change of
 * the bastion's OpenStackServer brings its cluster's pass (manager.ts), so this is only the net under
 * that: at 15 s a fleet whose servers queued for minutes spent a third of its cluster passes on it.
 */
const bastionRequeueMs = 60_000;

function ownedFloatingIp(status: JsonObject): string | undefined {
  return ownedResources(status)['floatingip/bastion'];
}

/** True once the bastion is ready, or gone when it is not asked for. */
export async function reconcileBastion(context: ClusterContext, networking: Networking): Promise<boolean> {
  const { pass, spec, cluster, deps } = context;
  const name = { namespace: cluster.namespace, name: bastionServerName(cluster) };
  const existing = await deps.servers.get(name);
  const bastion = spec.bastion;
  if (!bastion || bastion.enabled === false || !bastion.spec) {
    // The server, then the floating IP we created for it (CAPO releases it on disable too). With nothing of a bastion
    // left, no lookup is made on every pass; an unrecorded floating IP is still found when the cluster is deleted.
    const leftovers = existing !== undefined || pass.status.bastion !== undefined || ownedFloatingIp(pass.status) !== undefined;
    const gone = !leftovers || (await deleteBastion(context, existing));
    pass.condition(
      gone
        ? { type: 'BastionReady', status: 'True', reason: 'NotRequested' }
        : { type: 'BastionReady', status: 'False', reason: 'Deleting', message: 'deleting the bastion' },
    );
    return gone;
  }
  const desired = serverSpecFor({
    machineSpec: bastion.spec,
    clusterSpec: spec,
    clusterStatus: pass.status,
    role: 'bastion',
    availabilityZone: bastion.availabilityZone,
  });
  const hash = specHash(desired);
  if (existing && metaOf(existing).annotations?.[specHashAnnotation] !== hash) {
    await removeBastionServer(context, existing);
    pass.condition({ type: 'BastionReady', status: 'False', reason: 'Replacing', message: 'the bastion spec changed: replacing the bastion server' });
    return false;
  }
  if (existing && serverDeletedAt(statusOf(existing)) !== undefined) {
    // Deleted behind our back. A machine's is Cluster API's to replace; the bastion is the cluster's own, so it is made again (CAPO waits for good).
    if (metaOf(existing).deletionTimestamp === undefined)
      pass.event('Normal', 'ReplacingBastion', 'the bastion server was deleted behind our back: replacing it');
    await removeBastionServer(context, existing);
    pass.condition({ type: 'BastionReady', status: 'False', reason: 'Replacing', message: 'the bastion server was deleted behind our back: replacing it' });
    return false;
  }
  if (!existing) {
    await deps.servers.create(cluster.namespace, {
      metadata: {
        name: name.name,
        namespace: cluster.namespace,
        labels: { [clusterNameLabel]: pass.meta.labels?.[clusterNameLabel] ?? cluster.name },
        // The bastion server of a cluster adopting CAPO's resources adopts CAPO's bastion.
        annotations: { [specHashAnnotation]: hash, ...(pass.owner.adopt ? { [adoptAnnotation]: 'capo' } : {}) },
        ownerReferences: [
          {
            apiVersion: deps.clusters.apiVersion,
            kind: 'OpenStackCluster',
            name: cluster.name,
            uid: pass.meta.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: desired,
    });
    pass.condition({ type: 'BastionReady', status: 'False', reason: 'Creating', message: 'creating the bastion server' });
    pass.wait({ waitingFor: 'the bastion server to be created', requeueAfterMs: bastionRequeueMs }, true);
    return false;
  }
  const serverStatus = statusOf(existing);
  const addresses = (serverStatus.addresses as { type: string; address: string }[] | undefined) ?? [];
  const ip = addresses.find((address) => address.type === 'InternalIP')?.address;
  if (serverStatus.ready !== true) {
    pass.observe((status) => {
      status.bastion = {
        name: name.name,
        ...(serverStatus.instanceID ? { id: serverStatus.instanceID } : {}),
        ...(serverStatus.instanceState ? { state: serverStatus.instanceState } : {}),
      };
    });
    pass.condition({
      type: 'BastionReady',
      status: 'False',
      reason: 'InstanceNotReady',
      message: `bastion server is ${String(serverStatus.instanceState ?? 'being created')}`,
    });
    pass.wait({ waitingFor: 'the bastion server to become ready', requeueAfterMs: bastionRequeueMs }, true);
    return false;
  }
  let floatingIP: string | undefined;
  const portId = ((serverStatus.resources as JsonObject | undefined)?.ports as { id: string }[] | undefined)?.[0]?.id;
  if (networking.externalNetworkId !== undefined && portId !== undefined) {
    floatingIP = await reconcileBastionFloatingIp(context, networking.externalNetworkId, portId);
    if (floatingIP === undefined) return false;
  }
  pass.observe((status) => {
    status.bastion = {
      id: serverStatus.instanceID,
      name: name.name,
      ...(bastion.spec?.sshKeyName ? { sshKeyName: bastion.spec.sshKeyName } : {}),
      state: serverStatus.instanceState,
      ...(ip ? { ip } : {}),
      ...(floatingIP ? { floatingIP } : {}),
      ...(serverStatus.resolved ? { resolved: serverStatus.resolved } : {}),
      ...(serverStatus.resources ? { resources: serverStatus.resources } : {}),
    };
  });
  pass.condition({ type: 'BastionReady', status: 'True', reason: 'Ready' });
  return true;
}

async function reconcileBastionFloatingIp(context: ClusterContext, externalNetworkId: string, portId: string): Promise<string | undefined> {
  const { pass, spec, cluster, cloud } = context;
  const neutron = cloud.clients.neutron;
  const address = spec.bastion?.floatingIP;
  if (address !== undefined) {
    const users = await findUserFloatingIp(neutron, address);
    if (users) {
      if (users.port_id !== portId) await neutron.updateFloatingIp(users.id, { port_id: portId });
      return users.floating_ip_address;
    }
  }
  const fip = await pass.ensure('floatingip/bastion', floatingIpActuator(neutron), {
    recordedId: ownedFloatingIp(pass.status),
    desired: {
      name: bastionServerName(cluster),
      floating_network_id: externalNetworkId,
      port_id: portId,
      ...(address === undefined ? {} : { floating_ip_address: address }),
    },
    record: (status, id) => setOwned(status, 'floatingip/bastion', id),
  });
  return fip.ready ? fip.resource.floating_ip_address : undefined;
}

/** Deletes the bastion object; true once it is gone. */
async function removeBastionServer(context: ClusterContext, existing: JsonObject | undefined): Promise<boolean> {
  const { pass, deps } = context;
  if (!existing) return true;
  const meta = metaOf(existing);
  if (meta.deletionTimestamp === undefined) await deps.servers.delete({ namespace: meta.namespace, name: meta.name }, meta.uid);
  pass.wait({ waitingFor: `bastion server ${meta.name} to be deleted`, requeueAfterMs: bastionRequeueMs }, true);
  return false;
}

/** The bastion server first (`existing` when the caller has just read it), then the floating IP we created for it. */
export async function deleteBastion(context: ClusterContext, existing?: JsonObject): Promise<boolean> {
  const { pass, cluster, deps, cloud } = context;
  const server = existing ?? (await deps.servers.get({ namespace: cluster.namespace, name: bastionServerName(cluster) }));
  if (!(await removeBastionServer(context, server))) return false;
  if (
    !(await pass.remove(floatingIpActuator(cloud.clients.neutron), {
      recordedId: ownedFloatingIp(pass.status),
      name: bastionServerName(cluster),
      owner: pass.owner,
    }))
  )
    return false;
  if (ownedFloatingIp(pass.status) !== undefined || pass.status.bastion !== undefined) {
    await pass.record((status) => {
      setOwned(status, 'floatingip/bastion', undefined);
      delete status.bastion;
    });
  }
  return true;
}

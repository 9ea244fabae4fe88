/**
 * The dry run of adopting CAPO's resources (`capo-apiserver.io/adopt:
 * dry-run`): for every resource the cluster and its machines would have,
 * the same lookup adoption makes (ours, else one of CAPO's name that no
 * capo-apiserver object owns), reported as "would adopt" with its ID or
 * "would create". Nothing is created, tagged or recorded.
 */
import {
  apiLoadBalancerName,
  bastionServerName,
  clusterResourceName,
  loadBalancerPortName,
  memberName,
  portName,
  securityGroupName,
  volumeName,
} from '../../capo/names.js';
import type { JsonObject } from '../../storage/interface.js';
import { ownerUidOf } from '../adoption.js';
import { metaOf } from '../objects.js';
import { clusterNameLabel } from '../paused.js';
import type { Owner, ResourceActuator } from '../resource/actuator.js';
import { floatingIpActuator } from '../resource/floating-ip.js';
import { healthMonitorActuator } from '../resource/health-monitor.js';
import { listenerActuator } from '../resource/listener.js';
import { loadBalancerActuator } from '../resource/load-balancer.js';
import { memberActuator } from '../resource/member.js';
import { networkActuator } from '../resource/network.js';
import { poolActuator } from '../resource/pool.js';
import { portActuator } from '../resource/port.js';
import { routerActuator } from '../resource/router.js';
import { securityGroupActuator } from '../resource/security-group.js';
import { serverActuator } from '../resource/server.js';
import { subnetActuator } from '../resource/subnet.js';
import { volumeActuator } from '../resource/volume.js';
import type { ClusterContext } from './context.js';
import { apiServerPorts } from './security-group-step.js';

export interface AdoptionSurvey {
  /** `<kind> <name> (<id>)` of what adoption would take over. */
  adopt: string[];
  /** `<kind> <name>` of what would be created. */
  create: string[];
}

interface MachineShape {
  ports?: { nameSuffix?: string }[];
  rootVolume?: unknown;
  additionalBlockDevices?: { name: string; storage?: { type?: string } }[];
}

export async function surveyAdoption(context: ClusterContext): Promise<AdoptionSurvey> {
  const { spec, cluster, cloud, pass, deps } = context;
  const { neutron, octavia, nova, cinder } = cloud.clients;
  const survey: AdoptionSurvey = { adopt: [], create: [] };
  const adopting = (owner: Owner): Owner => ({ ...owner, adopt: true });
  // biome-ignore lint/suspicious/noExplicitAny: each lookup names its own actuator's resource type
  const look = async <R extends { id: string }>(actuator: ResourceActuator<any, R>, name: string, owner: Owner, desired?: unknown): Promise<R | undefined> => {
    const [found] = await actuator.findAdoptable(name, adopting(owner), desired);
    if (found) survey.adopt.push(`${actuator.kind} ${name} (${found.id})`);
    else survey.create.push(`${actuator.kind} ${name}`);
    return found;
  };

  const clusterName = clusterResourceName(cluster);
  const external = spec.enableExternalNetwork !== false;
  await look(networkActuator(neutron), clusterName, pass.owner);
  await look(subnetActuator(neutron), clusterName, pass.owner);
  if (external) await look(routerActuator(neutron), clusterName, pass.owner);
  const bastion = spec.bastion !== undefined && spec.bastion.enabled !== false;
  if (spec.managedSecurityGroups !== undefined) {
    for (const role of ['controlplane', 'worker', ...(bastion ? ['bastion' as const] : [])] as const) {
      await look(securityGroupActuator(neutron), securityGroupName(cluster, role), pass.owner);
    }
  }

  const machines = await deps.machines.list(
    cluster.namespace,
    { [clusterNameLabel]: metaOf(pass.object).labels?.[clusterNameLabel] ?? cluster.name },
    { asCached: true },
  );
  const managed = spec.apiServer?.managedLoadBalancer;
  const lbName = apiLoadBalancerName(cluster);
  if (managed !== undefined && managed.enabled !== false) {
    const lb = await look(loadBalancerActuator(octavia), lbName, pass.owner);
    for (const port of apiServerPorts(context)) {
      const name = loadBalancerPortName(lbName, port);
      await look(listenerActuator(octavia), name, pass.owner);
      const pool = await look(poolActuator(octavia), name, pass.owner);
      await look(healthMonitorActuator(octavia), name, pass.owner);
      for (const machine of machines.filter((candidate) => metaOf(candidate).labels?.['cluster.x-k8s.io/control-plane'] !== undefined)) {
        const member = memberName(lbName, port, metaOf(machine).name);
        if (pool) await look(memberActuator(octavia, pool.id), member, machineOwner(machine));
        else survey.create.push(`member ${member}`);
      }
    }
    if (external && spec.apiServer?.enableFloatingIP !== false) {
      await look(floatingIpActuator(neutron), lbName, pass.owner, lb ? { name: lbName, port_id: lb.vip_port_id } : undefined);
    }
  }

  const servers: [string, MachineShape][] = machines.map((machine) => [metaOf(machine).name, (machine.spec ?? {}) as MachineShape]);
  if (bastion) servers.push([bastionServerName(cluster), (spec.bastion?.spec ?? {}) as MachineShape]);
  for (const [name, shape] of servers) {
    // The server objects do not exist yet: the lookups are as their owners will make them.
    const owner = { ...pass.owner, name };
    await look(serverActuator(nova), name, owner);
    const ports = shape.ports && shape.ports.length > 0 ? shape.ports : [{}];
    for (const [index, port] of ports.entries()) {
      const found = await look(portActuator(neutron), portName(name, index, port.nameSuffix), owner);
      if (name === bastionServerName(cluster) && index === 0 && external) {
        await look(floatingIpActuator(neutron), name, pass.owner, found ? { name, port_id: found.id } : undefined);
      }
    }
    if (shape.rootVolume) await look(volumeActuator(cinder), volumeName(name, 'root'), owner);
    for (const device of shape.additionalBlockDevices ?? []) {
      if (device.storage?.type === 'Volume') await look(volumeActuator(cinder), volumeName(name, device.name), owner);
    }
  }
  return survey;
}

function machineOwner(machine: JsonObject): Owner {
  const meta = metaOf(machine);
  return { uid: ownerUidOf(machine), namespace: meta.namespace, name: meta.name, kind: 'OpenStackMachine' };
}

/**
 * What the dashboard shows of one cluster, computed from one inventory
 * snapshot (and Cluster API's Cluster, wherever it lives): the
 * overview row, the tree from the Cluster down to ports, and the one thing
 * that keeps the cluster from Ready with what to do about it. The OpenStack
 * side comes from what the reconciler recorded in status (IDs, states), so
 * the page costs no cloud call and shows what the reconciler believes.
 *
 * Only what the caller may read: a kind it may not list in the cluster's
 * namespace is left out of the page (with what is computed from it, such as
 * machine counts, spans and Events about those objects) and named in the
 * summary's `hidden`.
 */
import { clusterNameOf, indexOf, servedClusterExtensionOf, type InventorySnapshot } from '../inventory/index.js';
import type { JsonObject } from '../storage/interface.js';
import type { Blocker, ClusterApiView, ClusterDetail, ClusterSummary, ConditionView, EventView, ImageView, TimelineSpan, TreeNode } from './view-types.js';

type Loose = Record<string, unknown>;

/** The parts of a cluster's page that show another kind than the OpenStackCluster. */
export type PagePart = 'machines' | 'servers' | 'variables' | 'events' | 'images' | 'cluster';

/** The parts the caller may not read, each with the resource it would need to list (as `resource.group`). */
export type HiddenParts = Partial<Record<PagePart, string>>;

export function clusterDetail(
  snapshot: InventorySnapshot,
  namespace: string,
  name: string,
  clusterApiCluster: ClusterApiView | undefined,
  images: ImageView[] = [],
  namespaceEvents: JsonObject[] = [],
  hidden: HiddenParts = {},
): ClusterDetail | undefined {
  const index = indexOf(snapshot);
  const cluster = index.cluster(namespace, name);
  if (!cluster) return undefined;
  const status = (cluster.status ?? {}) as Loose;
  const machines = hidden.machines ? [] : index.machinesOf(namespace, clusterNameOf(cluster));
  const serverOf = (machine: (typeof machines)[number]) => (hidden.servers ? undefined : index.serverOf(machine));
  const bastion = hidden.servers ? undefined : snapshot.servers.find((server) => ownedBy(server, 'OpenStackCluster', name));
  const variables = hidden.variables ? undefined : servedClusterExtensionOf(snapshot, namespace, name);
  const missing = blockingVariables(variables);

  const machineNodes = machines.map((machine) => {
    const server = serverOf(machine);
    const machineStatus = (machine.status ?? {}) as Loose;
    return objectNode('OpenStackMachine', machine as unknown as JsonObject, {
      id: text(machineStatus.instanceID),
      state: text(machineStatus.instanceState),
      children: server ? [serverNode(server as unknown as JsonObject)] : [],
    });
  });
  const infrastructure = objectNode('OpenStackCluster', cluster as unknown as JsonObject, {
    children: [...cloudResources(status), ...images.map(imageNode), ...(bastion ? [serverNode(bastion)] : []), ...machineNodes],
  });
  const tree: TreeNode = clusterApiCluster
    ? { kind: 'Cluster', name: clusterApiCluster.name, ...(clusterApiCluster.phase ? { state: clusterApiCluster.phase } : {}), children: [infrastructure] }
    : infrastructure;

  const blockers = [...waitingForOwner(cluster as unknown as JsonObject, clusterApiCluster), ...blockersOf(tree, clusterApiCluster, missing)];
  const readyMachines = machineNodes.filter((node) => node.ready).length;
  const phase = clusterApiCluster?.phase;
  const endpoint = ((cluster.spec ?? {}) as Loose).controlPlaneEndpoint as Loose | undefined;
  const summary: ClusterSummary = {
    namespace,
    name,
    ...(phase ? { phase } : {}),
    paused: clusterApiCluster?.paused === true,
    // Ready as a person means it: the infrastructure, every machine, and nothing else in the way.
    ready: infrastructure.ready === true && readyMachines === machineNodes.length && blockers.length === 0,
    machinesReady: readyMachines,
    machines: machineNodes.length,
    ...(typeof endpoint?.host === 'string' && endpoint.host !== '' ? { apiEndpoint: `${endpoint.host}:${String(endpoint.port ?? 6443)}` } : {}),
    missingVariables: missing.map((variable) => variable.variable),
    ...(blockers[0] ? { lastError: blockers[0] } : {}),
    ...(Object.keys(hidden).length > 0 ? { hidden: [...new Set(Object.values(hidden))].sort() } : {}),
  };
  const objects = [cluster as unknown as JsonObject, bastion, ...machines.flatMap((machine) => [machine, serverOf(machine)])].filter(
    (object): object is JsonObject => object !== undefined,
  );
  const timeline = objects
    .map(spanOf)
    .filter((span) => span !== undefined)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  const events = eventsAbout(objects, namespaceEvents);
  const drift = events.filter((event) => event.type === 'Warning' && event.reason === vanishedReason);
  const lastChange = [
    ...objects.flatMap((object) => [
      text((object.metadata as Loose).creationTimestamp),
      ...conditionsOf(object).map((condition) => text(condition.lastTransitionTime)),
    ]),
    ...events.map((event) => event.lastAt),
  ]
    .filter((time) => time !== undefined)
    .sort()
    .at(-1);
  return {
    summary,
    tree,
    blockers,
    timeline,
    ...(events.length > 0 ? { events } : {}),
    ...(drift.length > 0 ? { drift } : {}),
    ...(lastChange ? { timelineEndsAt: lastChange } : {}),
    ...(variables ? { variables: variables as NonNullable<ClusterDetail['variables']> } : {}),
  };
}

/** The reason of the reconciler's Warning about a resource deleted behind its back (reconcile-pass.ts), which the dashboard marks as drift. */
const vanishedReason = 'ResourceVanished';

/** The Events whose involvedObject is one of `objects` (by uid), oldest first. */
function eventsAbout(objects: JsonObject[], namespaceEvents: JsonObject[]): EventView[] {
  const names = new Map(
    objects.map((object) => [String((object.metadata as Loose).uid), `${String(object.kind ?? '')} ${String((object.metadata as Loose).name)}`]),
  );
  const views: EventView[] = [];
  for (const event of namespaceEvents) {
    const object = names.get(String(((event.involvedObject ?? {}) as Loose).uid));
    const lastAt = text(event.lastTimestamp) ?? text(event.eventTime);
    if (!object || !lastAt) continue;
    views.push({
      object,
      type: String(event.type ?? 'Normal'),
      reason: String(event.reason ?? ''),
      message: String(event.message ?? ''),
      count: Number(event.count ?? 1),
      firstAt: text(event.firstTimestamp) ?? lastAt,
      lastAt,
    });
  }
  return views.sort((a, b) => a.firstAt.localeCompare(b.firstAt));
}

/** The ORC Images (image.imageRef) the cluster's machines (unless hidden) and bastion boot from, by name, sorted. */
export function imagesNamed(snapshot: InventorySnapshot, namespace: string, name: string, hidden: HiddenParts = {}): string[] {
  const index = indexOf(snapshot);
  const cluster = index.cluster(namespace, name);
  if (!cluster) return [];
  const bastionSpec = (((cluster.spec ?? {}) as Loose).bastion as Loose | undefined)?.spec as Loose | undefined;
  const machines = hidden.machines ? [] : index.machinesOf(namespace, clusterNameOf(cluster));
  const specs = [bastionSpec, ...machines.map((machine) => machine.spec as Loose | undefined)];
  const names = specs
    .map((spec) => ((spec?.image as Loose | undefined)?.imageRef as Loose | undefined)?.name)
    .filter((image): image is string => typeof image === 'string');
  return [...new Set(names)].sort();
}

/** An ORC Image object as the dashboard shows it: its Available condition decides. */
export function imageViewOf(image: JsonObject): ImageView {
  const status = (image.status ?? {}) as Loose;
  const available = conditionsOf(image).find((condition) => condition.type === 'Available');
  const ready = available?.status === 'True';
  return {
    name: String((image.metadata as Loose).name),
    ...(typeof status.id === 'string' ? { id: status.id } : {}),
    state: ready ? 'Available' : (available?.reason ?? 'Pending'),
    ready,
    ...(!ready && available?.message ? { message: available.message } : {}),
  };
}

function imageNode(image: ImageView): TreeNode {
  return {
    kind: 'Image',
    name: image.name,
    ...(image.id ? { id: image.id } : {}),
    state: image.state,
    ready: image.ready,
    ...(image.ready ? {} : { reason: image.state }),
    ...(image.message ? { message: image.message } : {}),
    children: [],
  };
}

/** The OpenStack resources an OpenStackCluster recorded, as CAPO's status names them. */
function cloudResources(status: Loose): TreeNode[] {
  const nodes: TreeNode[] = [];
  const network = status.network as Loose | undefined;
  if (network) {
    const subnets = Array.isArray(network.subnets) ? (network.subnets as Loose[]) : [];
    nodes.push(
      resourceNode(
        'Network',
        network,
        subnets.map((subnet) => resourceNode('Subnet', subnet, [], text(subnet.cidr))),
      ),
    );
  }
  if (status.externalNetwork) nodes.push(resourceNode('External network', status.externalNetwork as Loose));
  if (status.router) nodes.push(resourceNode('Router', status.router as Loose, [], ((status.router as Loose).ips as string[] | undefined)?.join(', ')));
  for (const [field, label] of [
    ['controlPlaneSecurityGroup', 'Security group (control plane)'],
    ['workerSecurityGroup', 'Security group (workers)'],
    ['bastionSecurityGroup', 'Security group (bastion)'],
  ] as const) {
    if (status[field]) nodes.push(resourceNode(label, status[field] as Loose));
  }
  const apiServer = status.apiServerManagedLoadBalancer as Loose | undefined;
  if (apiServer) {
    const floating =
      text(apiServer.ip) !== undefined && apiServer.ip !== apiServer.internalIP ? [{ kind: 'Floating IP', name: text(apiServer.ip)!, children: [] }] : [];
    nodes.push(resourceNode('Load balancer (API server)', apiServer, floating, text(apiServer.internalIP)));
  }
  const extra = ((status.extensions as Loose | undefined)?.loadBalancers ?? {}) as Record<string, Loose>;
  // The control plane's entry there is the API server's load balancer again.
  for (const [role, balancer] of Object.entries(extra)) {
    if (text(balancer.id) !== undefined && balancer.id === apiServer?.id) continue;
    nodes.push(resourceNode(`Load balancer (${role})`, { ...balancer, name: text(balancer.name) ?? role }, [], text(balancer.vip)));
  }
  return nodes;
}

function resourceNode(kind: string, recorded: Loose, children: TreeNode[] = [], detail?: string): TreeNode {
  const id = text(recorded.id);
  const state = text(recorded.provisioningStatus) ?? text(recorded.state);
  return {
    kind,
    name: text(recorded.name) ?? id ?? kind,
    ...(id ? { id } : {}),
    ...(state ? { state } : {}),
    ...(detail ? { message: detail } : {}),
    children,
  };
}

function serverNode(server: JsonObject): TreeNode {
  const status = (server.status ?? {}) as Loose;
  const ports = (((status.resources as Loose | undefined)?.ports ?? []) as Loose[]).map((port) => resourceNode('Port', port));
  const volumes = (((status.resources as Loose | undefined)?.volumes ?? []) as Loose[]).map((volume) => resourceNode('Volume', volume));
  return objectNode('OpenStackServer', server, { id: text(status.instanceID), state: text(status.instanceState), children: [...ports, ...volumes] });
}

function objectNode(kind: string, object: JsonObject, extra: { id?: string; state?: string; children: TreeNode[] }): TreeNode {
  const metadata = object.metadata as Loose;
  const conditions = conditionsOf(object);
  const ready = conditions.find((condition) => condition.type === 'Ready') ?? conditions.find((condition) => condition.type === 'InstanceReady');
  const failing = ready?.status === 'True' ? undefined : ready;
  return {
    kind,
    name: String(metadata.name),
    ...(extra.id ? { id: extra.id } : {}),
    ...(extra.state ? { state: extra.state } : ready ? { state: ready.status === 'True' ? 'Ready' : 'NotReady' } : {}),
    ready: ready?.status === 'True',
    ...(failing?.reason ? { reason: failing.reason } : {}),
    ...(failing?.message ? { message: failing.message } : {}),
    children: extra.children,
  };
}

/**
 * Everything keeping the cluster from Ready, the most actionable first: a
 * pause (only a person lifts it), a resource the cloud put in ERROR, the
 * OpenStackCluster's own reason, the machines', then missing variables.
 */
function blockersOf(tree: TreeNode, clusterApiCluster: ClusterApiView | undefined, missing: { variable: string; message: string }[]): Blocker[] {
  const blockers: Blocker[] = [];
  if (clusterApiCluster?.paused) {
    blockers.push({
      object: `Cluster ${clusterApiCluster.name}`,
      reason: 'Paused',
      message: 'reconciliation is paused',
      advice: 'Resume the cluster when the change it was paused for is done.',
    });
  }
  const nodes = flatten(tree);
  // The innermost object in ERROR is the one to name: an OpenStackMachine only mirrors its server's state.
  for (const node of nodes) {
    if (node.state === 'ERROR' && !node.children.some((child) => child.state === 'ERROR'))
      blockers.push({
        object: `${node.kind} ${node.name}`,
        reason: 'ERROR',
        message: node.message ?? `the cloud reports ${node.kind} ${node.id ?? node.name} in ERROR`,
        advice: adviceFor('ERROR'),
      });
  }
  for (const node of nodes) {
    if (node.ready === false && node.state !== 'ERROR' && node.reason)
      blockers.push({ object: `${node.kind} ${node.name}`, reason: node.reason, message: node.message ?? '', advice: adviceFor(node.reason) });
  }
  for (const variable of missing) {
    blockers.push({
      object: 'ClusterExtension',
      reason: 'MissingVariable',
      message: `${variable.variable}: ${variable.message}`,
      advice: 'Set the field the message names; the bootstrap cannot run without it.',
    });
  }
  return blockers;
}

/**
 * The reconciler writes nothing to an OpenStackCluster until its Cluster exists (as CAPO), so an
 * object it never touched, whose Cluster is nowhere, says why here rather than in its conditions.
 */
function waitingForOwner(cluster: JsonObject, clusterApiCluster: ClusterApiView | undefined): Blocker[] {
  if (clusterApiCluster || conditionsOf(cluster).length > 0) return [];
  const owner = ((cluster.metadata as Loose).labels as Record<string, string> | undefined)?.['cluster.x-k8s.io/cluster-name'];
  const message =
    owner === undefined ? 'no Cluster owns it: it has no cluster.x-k8s.io/cluster-name label' : `the Cluster ${owner} its label names does not exist`;
  return [
    { object: `OpenStackCluster ${String((cluster.metadata as Loose).name)}`, reason: 'WaitingForCluster', message, advice: adviceFor('WaitingForCluster') },
  ];
}

/** What to do, by the condition reasons our reconcilers set (CAPO's names). */
function adviceFor(reason: string): string {
  switch (reason) {
    case 'ERROR':
    case 'InstanceStateError':
      return 'The cloud failed the resource: read its fault with `openstack server show`, then delete the Machine so Cluster API replaces it.';
    case 'PreflightFailed':
      return 'Fix what the preflight names in the cloud or in the spec; the check reruns by itself every minute.';
    case 'OpenStackError':
      return 'A cloud call failed and is retried with backoff; if the message repeats, the cloud needs a look.';
    case 'WaitingForCluster':
    case 'WaitingForClusterInfrastructure':
    case 'WaitingForBootstrapData':
      return 'Nothing to do yet: this waits for another object to progress.';
    case 'InstanceNotReady':
    case 'LoadBalancerNotReady':
    case 'BastionNotReady':
      return 'Resources are being created; this clears by itself unless one stays stuck.';
    default:
      return 'Read the message, and the conditions of the object it names.';
  }
}

/** From the object's creation to its readiness condition's last turn to True (conditions record when they last changed). */
function spanOf(object: JsonObject): TimelineSpan | undefined {
  const metadata = object.metadata as Loose;
  const createdAt = text(metadata.creationTimestamp);
  if (!createdAt) return undefined;
  const conditions = conditionsOf(object);
  const ready = conditions.find((condition) => condition.type === 'Ready') ?? conditions.find((condition) => condition.type === 'InstanceReady');
  // Nothing in this server judges the object's readiness (the embedded Cluster has no Cluster API controller): no span to draw.
  if (!ready) return undefined;
  const readyAt = ready.status === 'True' ? text(ready.lastTransitionTime) : undefined;
  return { object: `${String(object.kind ?? '')} ${String(metadata.name)}`.trim(), createdAt, ...(readyAt ? { readyAt } : {}) };
}

/** The variables the bootstrap needs and lacks (NotApplicable ones are not needed). */
function blockingVariables(variables: JsonObject | undefined): { variable: string; message: string }[] {
  const missing = ((variables?.status as Loose | undefined)?.missing ?? []) as { variable: string; message: string; reason: string }[];
  return missing.filter((variable) => variable.reason !== 'NotApplicable');
}

function flatten(node: TreeNode): TreeNode[] {
  return [node, ...node.children.flatMap(flatten)];
}

function conditionsOf(object: JsonObject): ConditionView[] {
  const conditions = (object.status as Loose | undefined)?.conditions;
  return Array.isArray(conditions) ? (conditions as ConditionView[]) : [];
}

function ownedBy(object: JsonObject, kind: string, name: string): boolean {
  const owners = ((object.metadata as Loose).ownerReferences ?? []) as Loose[];
  return owners.some((owner) => owner.kind === kind && owner.name === name);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

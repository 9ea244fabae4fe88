/**
 * The inventory's view of stored CAPO objects: only the fields it reads,
 * checked with zod where they leave storage, and indexed per snapshot so
 * that computing one cluster or one node never rescans every object.
 */
import { z } from 'zod';
import type { JsonObject } from '../storage/interface.js';
import { clusterSpecExtensions, clusterStatusExtensions, machineSpecExtensions, machineStatusExtensions } from '../api/infrastructure/extensions.js';

/** Stored objects of the three input kinds, all read at one storage revision. */
export interface InventorySnapshot {
  revision: number;
  clusters: JsonObject[];
  machines: JsonObject[];
  servers: JsonObject[];
}

export const clusterNameLabel = 'cluster.x-k8s.io/cluster-name';
export const controlPlaneLabel = 'cluster.x-k8s.io/control-plane';

const ownerReference = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string().optional(),
});

const objectMeta = z.looseObject({
  name: z.string().min(1),
  namespace: z.string().min(1),
  uid: z.string().optional(),
  resourceVersion: z.string().regex(/^\d+$/),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  ownerReferences: z.array(ownerReference).optional(),
});

const address = z.looseObject({ type: z.string(), address: z.string() });

const condition = z.looseObject({
  type: z.string(),
  status: z.string(),
  reason: z.string().optional(),
  message: z.string().optional(),
});

const clusterView = z.looseObject({
  metadata: objectMeta,
  spec: z
    .looseObject({
      extensions: clusterSpecExtensions.optional(),
      apiServer: z.looseObject({ managedLoadBalancer: z.looseObject({ enabled: z.boolean().optional() }).optional() }).optional(),
      bastion: z.looseObject({ enabled: z.boolean().optional() }).optional(),
    })
    .optional(),
  status: z
    .looseObject({
      extensions: clusterStatusExtensions.optional(),
      bastion: z
        .looseObject({
          name: z.string().optional(),
          state: z.string().optional(),
          ip: z.string().optional(),
          floatingIP: z.string().optional(),
        })
        .optional(),
      conditions: z.array(condition).optional(),
    })
    .optional(),
});

const machineView = z.looseObject({
  metadata: objectMeta,
  spec: z
    .looseObject({
      flavor: z.looseObject({ id: z.string().optional(), filter: z.looseObject({ name: z.string().optional() }).optional() }).optional(),
      image: z
        .looseObject({
          id: z.string().optional(),
          filter: z.looseObject({ name: z.string().optional() }).optional(),
          imageRef: z.looseObject({ name: z.string() }).optional(),
        })
        .optional(),
      extensions: machineSpecExtensions.optional(),
    })
    .optional(),
  status: z
    .looseObject({
      instanceID: z.string().optional(),
      instanceState: z.string().optional(),
      addresses: z.array(address).optional(),
      initialization: z.looseObject({ provisioned: z.boolean().optional() }).optional(),
      resources: z.looseObject({ ports: z.array(z.looseObject({ id: z.string() })).optional() }).optional(),
      conditions: z.array(condition).optional(),
      extensions: machineStatusExtensions.optional(),
    })
    .optional(),
});

const volumeSpec = z.looseObject({ sizeGiB: z.number().optional(), type: z.string().optional(), availabilityZone: z.unknown().optional() });

const serverView = z.looseObject({
  metadata: objectMeta,
  spec: z
    .looseObject({
      flavor: z.string().optional(),
      flavorID: z.string().optional(),
      rootVolume: volumeSpec.optional(),
      additionalBlockDevices: z
        .array(
          z.looseObject({
            name: z.string(),
            sizeGiB: z.number(),
            storage: z.looseObject({ type: z.string(), volume: volumeSpec.optional() }).optional(),
          }),
        )
        .optional(),
    })
    .optional(),
  status: z
    .looseObject({
      ready: z.boolean().optional(),
      instanceID: z.string().optional(),
      instanceState: z.string().optional(),
      addresses: z.array(address).optional(),
      resolved: z
        .looseObject({
          imageID: z.string().optional(),
          flavorID: z.string().optional(),
          ports: z
            .array(
              z.looseObject({
                name: z.string().optional(),
                networkID: z.string().optional(),
                fixedIPs: z.array(z.looseObject({ ipAddress: z.string().optional() })).optional(),
              }),
            )
            .optional(),
        })
        .optional(),
      resources: z.looseObject({ ports: z.array(z.looseObject({ id: z.string() })).optional() }).optional(),
      conditions: z.array(condition).optional(),
      extensions: z.looseObject({ ownedResources: z.record(z.string(), z.string()).optional() }).optional(),
    })
    .optional(),
});

export type ClusterView = z.infer<typeof clusterView>;
export type MachineView = z.infer<typeof machineView>;
export type ServerView = z.infer<typeof serverView>;
export type Condition = z.infer<typeof condition>;

export interface InventoryIndex {
  clusters: ClusterView[];
  machines: MachineView[];
  cluster(namespace: string, name: string): ClusterView | undefined;
  machine(namespace: string, name: string): MachineView | undefined;
  /** Machines labelled with a Cluster API cluster name, control plane first, then by name. */
  machinesOf(namespace: string, clusterName: string): MachineView[];
  /** OpenStackClusters whose Cluster API cluster name is this one (normally one). */
  clustersNamed(namespace: string, clusterName: string): ClusterView[];
  serverOf(machine: MachineView): ServerView | undefined;
  /** The machine an OpenStackServer realises: its OpenStackMachine owner, else the machine of the same name. */
  machineOfServer(server: ServerView): MachineView | undefined;
}

/** The Cluster API cluster name of an OpenStackCluster: its label, else its own name. */
export function clusterNameOf(cluster: ClusterView): string {
  return cluster.metadata.labels?.[clusterNameLabel] ?? cluster.metadata.name;
}

export function isControlPlane(machine: MachineView): boolean {
  return machine.metadata.labels?.[controlPlaneLabel] !== undefined;
}

export function parseCluster(object: JsonObject): ClusterView {
  return parseCached(clusterView, object, 'OpenStackCluster');
}

export function parseMachine(object: JsonObject): MachineView {
  return parseCached(machineView, object, 'OpenStackMachine');
}

export function parseServer(object: JsonObject): ServerView {
  return parseCached(serverView, object, 'OpenStackServer');
}

const indexes = new WeakMap<InventorySnapshot, InventoryIndex>();

/** The index of a snapshot, built once per snapshot object. */
export function indexOf(snapshot: InventorySnapshot): InventoryIndex {
  let index = indexes.get(snapshot);
  if (!index) {
    index = buildIndex(snapshot);
    indexes.set(snapshot, index);
  }
  return index;
}

function buildIndex(snapshot: InventorySnapshot): InventoryIndex {
  const clusters = snapshot.clusters.map(parseCluster);
  const machines = snapshot.machines.map(parseMachine);
  const servers = snapshot.servers.map(parseServer);
  const key = (namespace: string, name: string) => `${namespace}/${name}`;

  const clusterByName = new Map(clusters.map((c) => [key(c.metadata.namespace, c.metadata.name), c]));
  const clustersByClusterName = groupBy(clusters, (c) => key(c.metadata.namespace, clusterNameOf(c)));
  const machineByName = new Map(machines.map((m) => [key(m.metadata.namespace, m.metadata.name), m]));
  const machinesByCluster = groupBy(
    machines.filter((m) => m.metadata.labels?.[clusterNameLabel] !== undefined),
    (m) => key(m.metadata.namespace, m.metadata.labels![clusterNameLabel]),
  );
  for (const members of machinesByCluster.values()) members.sort(byRoleThenName);

  const serverByOwner = new Map<string, ServerView>();
  const serverByName = new Map<string, ServerView>();
  for (const server of servers) {
    const { namespace, name } = server.metadata;
    serverByName.set(key(namespace, name), server);
    const owner = machineOwner(server);
    if (owner) serverByOwner.set(key(namespace, owner), server);
  }

  return {
    clusters,
    machines,
    cluster: (namespace, name) => clusterByName.get(key(namespace, name)),
    machine: (namespace, name) => machineByName.get(key(namespace, name)),
    machinesOf: (namespace, clusterName) => machinesByCluster.get(key(namespace, clusterName)) ?? [],
    clustersNamed: (namespace, clusterName) => clustersByClusterName.get(key(namespace, clusterName)) ?? [],
    serverOf: (machine) => {
      const id = key(machine.metadata.namespace, machine.metadata.name);
      return serverByOwner.get(id) ?? serverByName.get(id);
    },
    machineOfServer: (server) => machineByName.get(key(server.metadata.namespace, machineOwner(server) ?? server.metadata.name)),
  };
}

function machineOwner(server: ServerView): string | undefined {
  return server.metadata.ownerReferences?.find((o) => o.kind === 'OpenStackMachine' && o.apiVersion.startsWith('infrastructure.cluster.x-k8s.io/'))?.name;
}

function byRoleThenName(a: MachineView, b: MachineView): number {
  const role = Number(isControlPlane(b)) - Number(isControlPlane(a));
  return role !== 0 ? role : a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
}

function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/**
 * Stored objects are immutable once read, and a watch keeps unchanged ones
 * from event to event, so each object is checked once.
 */
const parsed = new WeakMap<JsonObject, unknown>();

function parseCached<T>(schema: z.ZodType<T>, object: JsonObject, kind: string): T {
  const known = parsed.get(object);
  if (known !== undefined) return known as T;
  const result = schema.safeParse(object);
  if (!result.success) {
    const meta = (object.metadata ?? {}) as { namespace?: string; name?: string };
    const issues = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`stored ${kind} ${meta.namespace ?? '?'}/${meta.name ?? '?'} cannot be read by the inventory: ${issues}`);
  }
  parsed.set(object, result.data);
  return result.data;
}

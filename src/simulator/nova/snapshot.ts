/** Nova's servers, flavors, keypairs, server groups and counters as a state file keeps them, validated when read back. */
import { z } from 'zod';
import { epochMs, parseSnapshot, refill, stringRecord } from '../snapshots.js';
import type { BlockDevice, Flavor, Keypair, Nic, NovaStore, RequestedNetwork, Server, ServerGroup } from './model.js';

const flavor = z.object({
  id: z.string(),
  name: z.string(),
  vcpus: z.number().int(),
  ram: z.number().int(),
  disk: z.number().int(),
  ephemeral: z.number().int(),
  swap: z.number().int(),
  isPublic: z.boolean(),
  description: z.string().nullable(),
  extraSpecs: stringRecord,
}) satisfies z.ZodType<Flavor>;

const keypair = z.object({
  id: z.number().int(),
  name: z.string(),
  userId: z.string(),
  publicKey: z.string(),
  fingerprint: z.string(),
  type: z.enum(['ssh', 'x509']),
  createdAt: epochMs,
}) satisfies z.ZodType<Keypair>;

const serverGroup = z.object({
  id: z.string(),
  name: z.string(),
  policy: z.string(),
  rules: z.record(z.string(), z.number()),
  projectId: z.string(),
  userId: z.string(),
  members: z.array(z.string()),
}) satisfies z.ZodType<ServerGroup>;

const requestedNetwork = z.union([
  z.object({ kind: z.literal('port'), portId: z.string(), tag: z.string().optional() }),
  z.object({ kind: z.literal('network'), networkId: z.string(), fixedIp: z.string().optional(), tag: z.string().optional() }),
]) satisfies z.ZodType<RequestedNetwork>;

const nic = z.object({ portId: z.string(), createdByNova: z.boolean(), tag: z.string().optional() }) satisfies z.ZodType<Nic>;

const blockDevice = z.object({
  sourceType: z.enum(['image', 'volume', 'blank', 'snapshot']),
  destinationType: z.enum(['local', 'volume']),
  uuid: z.string().optional(),
  volumeSize: z.number().int().optional(),
  bootIndex: z.number().int().nullable(),
  deleteOnTermination: z.boolean(),
  tag: z.string().optional(),
  volumeId: z.string().optional(),
  createdByNova: z.boolean(),
  device: z.string().nullable(),
  attachmentId: z.string().optional(),
  bdmId: z.string(),
}) satisfies z.ZodType<BlockDevice>;

const server = z.object({
  id: z.string(),
  name: z.string(),
  projectId: z.string(),
  userId: z.string(),
  flavor,
  imageId: z.string(),
  keyName: z.string().nullable(),
  metadata: stringRecord,
  tags: z.array(z.string()),
  description: z.string().nullable(),
  availabilityZone: z.string().nullable(),
  requestedHost: z.string().optional(),
  host: z.string().nullable(),
  vmState: z.string(),
  taskState: z.string().nullable(),
  powerState: z.number().int(),
  createdAt: epochMs,
  updatedAt: epochMs,
  launchedAt: epochMs.nullable(),
  terminatedAt: epochMs.nullable(),
  fault: z.object({ code: z.number().int(), message: z.string(), created: epochMs }).optional(),
  requestedNetworks: z.array(requestedNetwork),
  nics: z.array(nic),
  blockDevices: z.array(blockDevice),
  securityGroups: z.array(z.string()),
  userData: z.string().nullable(),
  configDrive: z.boolean(),
  groupId: z.string().optional(),
  instanceName: z.string(),
  reservationId: z.string(),
  launchIndex: z.number().int(),
  hostname: z.string(),
  accessIPv4: z.string(),
  accessIPv6: z.string(),
  diskConfig: z.enum(['AUTO', 'MANUAL']),
}) satisfies z.ZodType<Server>;

const novaSnapshotSchema = z.object({
  servers: z.array(server),
  /** Tombstones, which `changes-since` still lists. */
  deleted: z.array(server),
  flavors: z.array(flavor),
  keypairs: z.array(keypair),
  groups: z.array(serverGroup),
  volumesToDelete: z.array(z.string()),
  nextKeypairId: z.number().int().positive(),
  nextInstanceNumber: z.number().int().positive(),
});

type NovaSnapshot = z.infer<typeof novaSnapshotSchema>;

export function snapshotStore(store: NovaStore): NovaSnapshot {
  return {
    servers: [...store.servers.values()],
    deleted: [...store.deleted.values()],
    flavors: [...store.flavors.values()],
    keypairs: store.keypairs,
    groups: [...store.groups.values()],
    volumesToDelete: [...store.volumesToDelete],
    nextKeypairId: store.nextKeypairId,
    nextInstanceNumber: store.nextInstanceNumber,
  };
}

/** Replaces the seeded flavors and everything else with a snapshot's; the compute hosts stay those of this start's zones. */
export function restoreStore(store: NovaStore, snapshot: unknown): void {
  const data = parseSnapshot('nova', novaSnapshotSchema, snapshot);
  refill(store.servers, data.servers);
  refill(store.deleted, data.deleted);
  refill(store.flavors, data.flavors);
  refill(store.groups, data.groups);
  store.keypairs.splice(0, store.keypairs.length, ...data.keypairs);
  store.volumesToDelete.clear();
  for (const id of data.volumesToDelete) store.volumesToDelete.add(id);
  store.nextKeypairId = data.nextKeypairId;
  store.nextInstanceNumber = data.nextInstanceNumber;
}

/**
 * Reads Secrets and Cluster API objects as either source delivers them (the
 * JSON of kube-apiserver or of our storage) into the source's own types.
 * Only the fields the reconciler uses are checked; anything else may change
 * between Cluster API releases without breaking the reconciler.
 */
import { z } from 'zod';
import type { ObjectName } from '../../storage/interface.js';
import { MalformedObjectError, type ClusterApiCluster, type ClusterApiMachine, type SecretData, type SourceKind } from './source.js';

export const clusterApiGroup = 'cluster.x-k8s.io';
export const clusterApiVersions = ['v1beta2', 'v1beta1'] as const;
export type ClusterApiVersion = (typeof clusterApiVersions)[number];

const pausedAnnotation = 'cluster.x-k8s.io/paused';
const controlPlaneLabel = 'cluster.x-k8s.io/control-plane';

const stringMap = z.record(z.string(), z.string());

const metadata = z.object({
  resourceVersion: z.string().min(1),
  labels: stringMap.optional(),
  annotations: stringMap.optional(),
});

const ownedMetadata = metadata.extend({ uid: z.string().min(1), deletionTimestamp: z.string().optional() });

// No stringData: both API servers fold it into data on write.
const secretSchema = z.object({ metadata, type: z.string().optional(), data: z.record(z.string(), z.base64()).optional() });

const name = z.string().min(1);
/** v1beta2 ContractVersionedObjectReference. */
const groupRef = z.object({ apiGroup: z.string().min(1), kind: name, name });
/** v1beta1 ObjectReference, of which the reconciler needs kind and name. */
const versionRef = z.object({ apiVersion: z.string().min(1), kind: name, name });

const endpoint = z.object({ host: z.string().optional(), port: z.number().int().min(0).max(65535).optional() });

function clusterSchema(infrastructureRef: typeof groupRef | typeof versionRef) {
  return z.object({
    metadata: ownedMetadata,
    spec: z.object({ paused: z.boolean().optional(), infrastructureRef: infrastructureRef.optional(), controlPlaneEndpoint: endpoint.optional() }).default({}),
    status: z.object({ phase: z.string().optional() }).optional(),
  });
}

function machineSchema(infrastructureRef: typeof groupRef | typeof versionRef) {
  return z.object({
    metadata: ownedMetadata,
    spec: z.object({
      clusterName: name,
      bootstrap: z.object({ dataSecretName: z.string().optional() }).optional(),
      failureDomain: z.string().optional(),
      version: z.string().optional(),
      infrastructureRef: infrastructureRef.optional(),
    }),
  });
}

const clusterSchemas = { v1beta2: clusterSchema(groupRef), v1beta1: clusterSchema(versionRef) };
const machineSchemas = { v1beta2: machineSchema(groupRef), v1beta1: machineSchema(versionRef) };

export function parseSecret(object: unknown, at: ObjectName): SecretData {
  const secret = check(secretSchema, object, 'Secret', at);
  const data: Record<string, Buffer> = {};
  for (const [key, value] of Object.entries(secret.data ?? {})) data[key] = Buffer.from(value, 'base64');
  return { ...at, resourceVersion: secret.metadata.resourceVersion, ...(secret.type !== undefined && { type: secret.type }), data };
}

export function parseCluster(object: unknown, at: ObjectName): ClusterApiCluster {
  const { metadata: meta, spec, status } = check(clusterSchemas[versionOf(object, 'Cluster', at)], object, 'Cluster', at);
  const { host, port } = spec.controlPlaneEndpoint ?? {};
  return {
    ...at,
    uid: meta.uid,
    paused: spec.paused === true || pausedAnnotation in (meta.annotations ?? {}),
    deleting: meta.deletionTimestamp !== undefined,
    labels: meta.labels ?? {},
    ...(spec.infrastructureRef && { infrastructureRef: kindAndName(spec.infrastructureRef) }),
    ...(host && port ? { controlPlaneEndpoint: { host, port } } : {}),
    ...(status?.phase ? { phase: status.phase } : {}),
  };
}

export function parseMachine(object: unknown, at: ObjectName): ClusterApiMachine {
  const { metadata: meta, spec } = check(machineSchemas[versionOf(object, 'Machine', at)], object, 'Machine', at);
  const labels = meta.labels ?? {};
  return {
    ...at,
    uid: meta.uid,
    clusterName: spec.clusterName,
    labels,
    controlPlane: controlPlaneLabel in labels,
    ...(spec.bootstrap?.dataSecretName && { bootstrapDataSecretName: spec.bootstrap.dataSecretName }),
    ...(spec.failureDomain && { failureDomain: spec.failureDomain }),
    ...(spec.version && { version: spec.version }),
    ...(spec.infrastructureRef && { infrastructureRef: kindAndName(spec.infrastructureRef) }),
  };
}

function kindAndName(ref: { kind: string; name: string }): { kind: string; name: string } {
  return { kind: ref.kind, name: ref.name };
}

function versionOf(object: unknown, kind: SourceKind, at: ObjectName): ClusterApiVersion {
  const apiVersion = (object as { apiVersion?: unknown } | null)?.apiVersion;
  const version = clusterApiVersions.find((candidate) => apiVersion === `${clusterApiGroup}/${candidate}`);
  if (!version) {
    throw new MalformedObjectError(
      kind,
      at.namespace,
      at.name,
      `apiVersion ${JSON.stringify(apiVersion)} is not one of ${clusterApiVersions.map((v) => `${clusterApiGroup}/${v}`).join(', ')}`,
    );
  }
  return version;
}

function check<T>(schema: z.ZodType<T>, object: unknown, kind: SourceKind, at: ObjectName): T {
  const parsed = schema.safeParse(object);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.length === 0 ? '(object)' : issue.path.map(String).join('.')}: ${issue.message}`);
  throw new MalformedObjectError(kind, at.namespace, at.name, problems.join('; '));
}

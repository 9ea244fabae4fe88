/**
 * What `npm run preflight` checks: the cluster and machines of YAML
 * manifests (v1beta1 or v1beta2, converted to the v1beta2 storage form), or
 * a default cluster shape around a given image and flavor.
 */
import YAML from 'yaml';
import { z } from 'zod';
import type { Converter } from '../apiserver/registry/kind.js';
import {
  openStackClusterConverter,
  openStackClusterTemplateConverter,
  openStackMachineConverter,
  openStackMachineTemplateConverter,
} from '../api/infrastructure/conversion/index.js';
import type { JsonObject } from '../storage/interface.js';
import { parseClusterSpec, parseMachineSpec } from './requirements.js';

/** A bad manifest: the CLI shows the message with its usage. */
export class ManifestError extends Error {}

export interface Manifest {
  /** Shown in messages, e.g. the file name. */
  source: string;
  text: string;
}

/** v1beta2 specs; `machines` holds one spec per server (a template once per replica). */
export interface ClusterShape {
  cluster?: unknown;
  machines: unknown[];
}

const infrastructureGroup = 'infrastructure.cluster.x-k8s.io';

interface InfrastructureKind {
  converter: Converter;
  role: 'cluster' | 'machine' | 'machineTemplate';
  /** Where the cluster or machine spec sits in the object. */
  spec: (object: JsonObject) => unknown;
}

const templateSpec = (object: JsonObject) => ((object.spec as JsonObject | undefined)?.template as JsonObject | undefined)?.spec;

const infrastructureKinds: Record<string, InfrastructureKind> = {
  OpenStackCluster: { converter: openStackClusterConverter, role: 'cluster', spec: (object) => object.spec },
  OpenStackClusterTemplate: { converter: openStackClusterTemplateConverter, role: 'cluster', spec: templateSpec },
  OpenStackMachine: { converter: openStackMachineConverter, role: 'machine', spec: (object) => object.spec },
  OpenStackMachineTemplate: { converter: openStackMachineTemplateConverter, role: 'machineTemplate', spec: templateSpec },
};

const documentSchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.looseObject({ name: z.string().optional() }).optional(),
});

const infrastructureRef = z.looseObject({ kind: z.string(), name: z.string() });

/** KubeadmControlPlane (v1beta1 and v1beta2 places of the reference) and MachineDeployment: how many machines of which template. */
const replicaOwnerSchema = z.looseObject({
  kind: z.enum(['KubeadmControlPlane', 'MachineDeployment']),
  spec: z.looseObject({
    replicas: z.int().min(0).optional(),
    machineTemplate: z
      .looseObject({ infrastructureRef: infrastructureRef.optional(), spec: z.looseObject({ infrastructureRef: infrastructureRef.optional() }).optional() })
      .optional(),
    template: z.looseObject({ spec: z.looseObject({ infrastructureRef: infrastructureRef.optional() }).optional() }).optional(),
  }),
});

interface Found {
  kind: string;
  name: string;
  source: string;
  spec: unknown;
}

/**
 * A template counts once per replica of each KubeadmControlPlane or
 * MachineDeployment in the manifests that uses it (Cluster API's default of
 * one replica when unset), and once when none does.
 */
export function readManifests(manifests: readonly Manifest[]): ClusterShape {
  const clusters: Found[] = [];
  const machines: Found[] = [];
  const templates: Found[] = [];
  const replicas = new Map<string, number>();
  for (const manifest of manifests) {
    for (const document of documentsOf(manifest)) {
      const owner = replicaOwnerSchema.safeParse(document);
      if (owner.success) {
        const spec = owner.data.spec;
        const ref = spec.machineTemplate?.infrastructureRef ?? spec.machineTemplate?.spec?.infrastructureRef ?? spec.template?.spec?.infrastructureRef;
        if (ref?.kind === 'OpenStackMachineTemplate') replicas.set(ref.name, (replicas.get(ref.name) ?? 0) + (spec.replicas ?? 1));
        continue;
      }
      const found = infrastructureObject(document, manifest.source);
      if (found === undefined) continue;
      const role = infrastructureKinds[found.kind]!.role;
      (role === 'cluster' ? clusters : role === 'machine' ? machines : templates).push(found);
    }
  }
  if (clusters.length > 1) {
    throw new ManifestError(`the manifests hold ${clusters.length} clusters (${clusters.map(describe).join(', ')}); check one cluster at a time`);
  }
  if (clusters.length + machines.length + templates.length === 0) {
    throw new ManifestError('the manifests hold no OpenStackCluster, OpenStackClusterTemplate, OpenStackMachine or OpenStackMachineTemplate');
  }
  const cluster = clusters[0];
  if (cluster !== undefined) parseClusterSpec(cluster.spec, describe(cluster));
  for (const machine of [...machines, ...templates]) parseMachineSpec(machine.spec, describe(machine));
  return {
    ...(cluster === undefined ? {} : { cluster: cluster.spec }),
    machines: [
      ...machines.map((machine) => machine.spec),
      ...templates.flatMap((template) => Array.from({ length: replicas.get(template.name) ?? 1 }, () => template.spec)),
    ],
  };
}

function documentsOf(manifest: Manifest): unknown[] {
  const values: unknown[] = [];
  for (const document of YAML.parseAllDocuments(manifest.text)) {
    const error = document.errors[0];
    if (error !== undefined) {
      const position = error.linePos?.[0];
      const where = position === undefined ? '' : ` at line ${position.line}, column ${position.col}`;
      throw new ManifestError(`${manifest.source} is not valid YAML${where}: ${error.message.split('\n')[0]}`);
    }
    const value: unknown = document.toJS();
    if (value !== null && value !== undefined) values.push(value);
  }
  return values;
}

function infrastructureObject(document: unknown, source: string): Found | undefined {
  const parsed = documentSchema.safeParse(document);
  if (!parsed.success) return undefined;
  const { apiVersion, kind, metadata } = parsed.data;
  const [group, version] = apiVersion.split('/');
  const known = infrastructureKinds[kind];
  if (group !== infrastructureGroup || known === undefined) return undefined;
  const name = metadata?.name ?? '(unnamed)';
  if (version !== 'v1beta1' && version !== 'v1beta2') {
    throw new ManifestError(`${kind} "${name}" in ${source}: apiVersion ${apiVersion} is not supported; use ${infrastructureGroup}/v1beta1 or v1beta2`);
  }
  const stored = known.converter.toStorage(parsed.data as JsonObject);
  const spec = known.spec(stored);
  const unrendered = /\$\{[A-Za-z0-9_]+\}/.exec(JSON.stringify(spec ?? null));
  if (unrendered !== null) {
    throw new ManifestError(
      `${kind} "${name}" in ${source} still holds the variable ${unrendered[0]}; render the template first (clusterctl generate cluster)`,
    );
  }
  return { kind, name, source, spec };
}

function describe(found: Found): string {
  return `${found.kind} "${found.name}" in ${found.source}`;
}

export interface DefaultShapeOptions {
  cloudName: string;
  /** A UUID is taken as an image ID, anything else as an image name. */
  image: string;
  flavor: string;
  loadBalancer: boolean;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A server of the default shape: the given image and flavor, one port on the cluster network. */
export function defaultMachineSpec(options: Pick<DefaultShapeOptions, 'image' | 'flavor'>): JsonObject {
  return {
    flavor: { filter: { name: options.flavor } },
    image: uuidPattern.test(options.image) ? { id: options.image } : { filter: { name: options.image } },
  };
}

/** The cluster `clusterctl generate cluster` gives by default: a managed network, managed security groups, the API load balancer and a bastion. */
export function defaultClusterSpec(options: DefaultShapeOptions): JsonObject {
  return {
    identityRef: { type: 'Secret', name: `${options.cloudName}-cloud-config`, cloudName: options.cloudName },
    managedSubnets: [{ cidr: '10.6.0.0/24' }],
    managedSecurityGroups: { allowAllInClusterTraffic: false },
    ...(options.loadBalancer ? { apiServer: { managedLoadBalancer: { enabled: true } } } : {}),
    bastion: { enabled: true, spec: defaultMachineSpec(options) },
  };
}

/** Three control plane machines and three workers. */
export const defaultMachineCount = 6;

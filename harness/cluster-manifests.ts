/**
 * The objects of examples/ (what a user applies after `npm start`), pointed
 * at a benchmark's or a test's cloud, and copies of them for more clusters: cluster i
 * takes the example's objects with `demo` renamed, every cluster using the
 * example's one identity Secret, and as many worker machines as asked.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { repositoryRoot } from './control-plane.js';

/** The URL examples/ point the identity at: `npm start`'s embedded cloud. */
const exampleCloudUrl = 'http://127.0.0.1:6445';
const exampleCluster = 'demo';
const controlPlaneLabel = 'cluster.x-k8s.io/control-plane';

const objectSchema = z.looseObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  metadata: z.looseObject({ name: z.string().min(1), namespace: z.string().optional(), labels: z.record(z.string(), z.string()).optional() }),
});
export type KubeObject = z.infer<typeof objectSchema>;

export interface ClusterObjects {
  /** What every cluster shares, created once: the identity Secret and the ORC Images the machines boot from. */
  shared: KubeObject[];
  /** Everything else but the machines, in the examples' order: bootstrap Secrets, Cluster, OpenStackCluster. */
  cluster: KubeObject[];
  /** Machine and OpenStackMachine pairs. */
  controlPlane: KubeObject[][];
  workers: KubeObject[][];
}

/** The example objects in file order, identity pointed at `cloudUrl`. */
export function loadExamples(cloudUrl: string): KubeObject[] {
  const dir = path.join(repositoryRoot(import.meta.dirname), 'examples');
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .sort();
  if (files.length === 0) throw new Error(`no manifests in ${dir}`);
  const objects: KubeObject[] = [];
  for (const file of files) {
    const text = readFileSync(path.join(dir, file), 'utf8').replaceAll(exampleCloudUrl, cloudUrl);
    for (const document of parseAllDocuments(text)) {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0].message}`);
      const value: unknown = document.toJS();
      if (value === null) continue;
      const parsed = objectSchema.safeParse(value);
      if (!parsed.success) throw new Error(`${file}: not a Kubernetes object: ${parsed.error.issues[0].message}`);
      objects.push(parsed.data);
    }
  }
  return objects;
}

/** The machines' Machine + OpenStackMachine pairs, keyed by machine name, in file order. */
function machinePairs(objects: KubeObject[]): Map<string, KubeObject[]> {
  const pairs = new Map<string, KubeObject[]>();
  for (const object of objects) {
    if (object.kind !== 'Machine' && object.kind !== 'OpenStackMachine') continue;
    const pair = pairs.get(object.metadata.name) ?? [];
    pair.push(object);
    pairs.set(object.metadata.name, pair);
  }
  return pairs;
}

/**
 * The example cluster as `clusterName`, with `workers` worker machines (the
 * example's first worker copied as needed) and the example's control plane.
 */
export function clusterObjects(examples: KubeObject[], clusterName: string, workers: number): ClusterObjects {
  const spec = examples.find((object) => object.kind === 'OpenStackCluster')?.spec as { identityRef?: { name?: string } } | undefined;
  const isIdentity = (object: KubeObject) => object.kind === 'Secret' && object.metadata.name === spec?.identityRef?.name;
  const identity = examples.find(isIdentity);
  if (!identity) throw new Error('examples/ has no OpenStackCluster whose identityRef names a Secret in examples/');
  const rename = (name: string) =>
    name === exampleCluster ? clusterName : name.startsWith(`${exampleCluster}-`) ? `${clusterName}${name.slice(exampleCluster.length)}` : name;
  const renamed = (object: KubeObject): KubeObject => renameObject(structuredClone(object), rename);
  const pairs = [...machinePairs(examples).values()];
  const isControlPlane = (pair: KubeObject[]) => pair.some((object) => object.metadata.labels?.[controlPlaneLabel] !== undefined);
  const controlPlane = pairs.filter(isControlPlane);
  const workerTemplate = pairs.find((pair) => !isControlPlane(pair));
  if (!workerTemplate || controlPlane.length === 0) throw new Error('examples/ needs control-plane and worker machines');
  const workerName = workerTemplate[0].metadata.name.replace(/-\d+$/, '');
  const workerPairs = Array.from({ length: workers }, (_, index) =>
    workerTemplate.map((object) => {
      const copy = structuredClone(object);
      copy.metadata.name = `${workerName}-${index}`;
      if (object.kind === 'Machine') (copy.spec as { infrastructureRef: { name: string } }).infrastructureRef.name = copy.metadata.name;
      return copy;
    }),
  );
  const isShared = (object: KubeObject) => isIdentity(object) || object.kind === 'Image';
  return {
    shared: [identity, ...examples.filter((object) => object.kind === 'Image')],
    cluster: examples.filter((object) => !isShared(object) && object.kind !== 'Machine' && object.kind !== 'OpenStackMachine').map(renamed),
    controlPlane: controlPlane.map((pair) => pair.map(renamed)),
    workers: workerPairs.map((pair) => pair.map(renamed)),
  };
}

/** Renames every reference to the cluster's objects: names, cluster labels, and the Machine's references. */
function renameObject(object: KubeObject, rename: (name: string) => string): KubeObject {
  object.metadata.name = rename(object.metadata.name);
  const labels = object.metadata.labels;
  for (const label of ['cluster.x-k8s.io/cluster-name', 'cluster.x-k8s.io/deployment-name']) {
    if (labels?.[label] !== undefined) labels[label] = rename(labels[label]);
  }
  const spec = object.spec as { clusterName?: string; infrastructureRef?: { name?: string }; bootstrap?: { dataSecretName?: string } } | undefined;
  if (spec?.clusterName !== undefined) spec.clusterName = rename(spec.clusterName);
  if (spec?.infrastructureRef?.name !== undefined) spec.infrastructureRef.name = rename(spec.infrastructureRef.name);
  if (spec?.bootstrap?.dataSecretName !== undefined) spec.bootstrap.dataSecretName = rename(spec.bootstrap.dataSecretName);
  return object;
}

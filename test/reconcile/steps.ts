/**
 * The reconcilers driven one pass at a time: the embedded server (its storage, Secrets,
 * Clusters and Machines) with no controllers running, the simulated cloud, and the reconcile
 * functions the controllers would call, so a test decides when each pass runs and looks at the
 * objects and the cloud's request log in between.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { expect, vi } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { embeddedClusterApiKinds } from '../../src/api/embedded/kinds.js';
import { servedKinds } from '../../src/served-kinds.js';
import type { ServedRequest, Simulator, SimulatorOptions } from '../../src/simulator/host.js';
import type { Reconcile, ReconcileResult } from '../../src/reconcile/runtime/controller.js';
import { openStackClusterReconciler } from '../../src/reconcile/cluster/reconciler.js';
import { reconcilerDeps } from '../../src/reconcile/manager.js';
import { openStackMachineReconciler } from '../../src/reconcile/machine/reconciler.js';
import type { KindClient } from '../../src/reconcile/objects.js';
import { openStackServerReconciler } from '../../src/reconcile/server/reconciler.js';
import { orcImageReconciler } from '../../src/reconcile/image/reconciler.js';
import { StorageClusterApiSource } from '../../src/reconcile/sources/storage-source.js';
import type { JsonObject } from '../../src/storage/interface.js';
import { kubectlOk, startTestServer, type TestServer } from '../../harness/test-server.js';
import { renderExamples } from './flows/examples.js';

export type StepKind = 'cluster' | 'machine' | 'server' | 'image';

export interface Steps {
  server: TestServer;
  cloud: Simulator;
  /** The rendered examples/ (identity Secret, Cluster, OpenStackCluster, Machines, bootstrap data). */
  manifests: string;
  /** Every OpenStack request the reconcilers made, `<service> <METHOD> <path> <status>`, in order. */
  requests: string[];
  /** One pass of a reconciler over the object of that name in namespace default. */
  pass(kind: StepKind, name: string): Promise<ReconcileResult>;
  /** The object as stored, or undefined once it is gone. */
  get(kind: StepKind, name: string): Promise<JsonObject | undefined>;
  /**
   * Runs the passes (in order, a failing one does not stop the others) until `reached` holds of
   * the first one's object (undefined once it is gone), within the deadline.
   */
  until(passes: [StepKind, string][], reached: (object: JsonObject | undefined) => boolean, timeoutMs?: number): Promise<JsonObject | undefined>;
  kubectl(args: string[], input?: string): Promise<string>;
  /** Applies files of the rendered examples, e.g. `apply('00-cloud-credentials.yaml', '01-cluster.yaml')`. */
  apply(...files: string[]): Promise<void>;
  /** The documents of one rendered example file, to apply changed. */
  documents(file: string): Promise<JsonObject[]>;
  applyObjects(objects: JsonObject[]): Promise<void>;
  stop(): Promise<void>;
}

/** `cloud` adds to the simulated cloud's options, e.g. an Octavia with quirks or a watcher of the requests it serves; `resyncPeriodMs` sets when what a pass verified runs out (default 10 minutes). */
export async function startSteps(cloud: Pick<SimulatorOptions, 'services' | 'onRequest'> = {}, options: { resyncPeriodMs?: number } = {}): Promise<Steps> {
  const server = await startTestServer({ kinds: servedKinds, simulatedCloud: { port: 0, transitionDelayMs: 20, faultSeed: 11, ...cloud } });
  const simulator = server.cloud!;
  const manifests = await renderExamples(simulator.url);
  const requests: string[] = [];
  const find = (kind: string) => embeddedClusterApiKinds.find((candidate) => candidate.kind === kind)!;
  const deps = reconcilerDeps({
    storage: server.storage,
    stores: server.stores,
    kinds: servedKinds,
    source: new StorageClusterApiSource(server.stores, { secret: find('Secret'), cluster: find('Cluster'), machine: find('Machine') }),
    sessionOptions: { logger: (line) => requests.push(line.replace(/^openstack /, '')) },
    // The simulated cloud's image mirror is on loopback, which downloads refuse unless allowed, as the app allows its own.
    imageDownloads: { allow: [new URL(simulator.url).host] },
    ...options,
  });
  const images = deps.images!;
  const clients: Record<StepKind, KindClient> = { cluster: deps.clusters, machine: deps.machines, server: deps.servers, image: images };
  const reconcilers: Record<StepKind, Reconcile> = {
    cluster: openStackClusterReconciler(deps),
    machine: openStackMachineReconciler(deps),
    server: openStackServerReconciler(deps),
    image: orcImageReconciler(deps, images),
  };
  const get = (kind: StepKind, name: string) => clients[kind].get({ namespace: 'default', name });
  const pass = (kind: StepKind, name: string) => reconcilers[kind]({ namespace: 'default', name });
  return {
    server,
    cloud: simulator,
    manifests,
    requests,
    pass,
    get,
    async until(passes, reached, timeoutMs = 30_000) {
      const [kind, name] = passes[0];
      return vi.waitFor(
        async () => {
          for (const [passKind, passName] of passes) await pass(passKind, passName).catch(() => undefined);
          const object = await get(kind, name);
          expect(reached(object), `${kind} ${name}: ${JSON.stringify((object?.status as JsonObject | undefined)?.conditions)}`).toBe(true);
          return object;
        },
        { timeout: timeoutMs, interval: 20 },
      );
    },
    kubectl: (args, input) => kubectlOk(server, args, input),
    async apply(...files) {
      for (const file of files) await kubectlOk(server, ['apply', '-f', path.join(manifests, file)]);
    },
    async documents(file) {
      return parseAllDocuments(await readFile(path.join(manifests, file), 'utf8')).map((document) => document.toJS() as JsonObject);
    },
    async applyObjects(objects) {
      for (const object of objects) await kubectlOk(server, ['apply', '-f', '-'], JSON.stringify(object));
    },
    async stop() {
      deps.clouds.close();
      await server.stop();
      await rm(manifests, { recursive: true, force: true });
    },
  };
}

/** The condition of that type in an object's status. */
export function condition(object: JsonObject | undefined, type: string): Record<string, unknown> | undefined {
  const conditions = ((object?.status as JsonObject | undefined)?.conditions ?? []) as Record<string, unknown>[];
  return conditions.find((candidate) => candidate.type === type);
}

export function isReady(object: JsonObject | undefined): boolean {
  return condition(object, 'Ready')?.status === 'True';
}

/** The first GET the cloud served for `service` whose path matches. */
export function firstRead(served: readonly ServedRequest[], service: string, path: RegExp): ServedRequest | undefined {
  return served.find((request) => request.service === service && request.method === 'GET' && path.test(request.path));
}

/** Whether two requests were in the cloud at one moment. */
export function overlapping(a: ServedRequest, b: ServedRequest): boolean {
  return a.startMs < b.endMs && b.startMs < a.endMs;
}

/** The index of the last request matching `pattern` (e.g. /^load-balancer DELETE /), -1 when none did. */
export function lastRequest(requests: readonly string[], pattern: RegExp): number {
  for (let index = requests.length - 1; index >= 0; index--) if (pattern.test(requests[index])) return index;
  return -1;
}

/** The example's credentials, Cluster and OpenStackCluster, without the bastion (a server of its own), driven to Ready. */
export async function provisionExampleCluster(steps: Steps, options: { bastion?: boolean; ready?: boolean } = {}): Promise<void> {
  await steps.apply('00-cloud-credentials.yaml', '01-cluster.yaml');
  const [cluster] = await steps.documents('02-openstackcluster.yaml');
  if (!options.bastion) delete (cluster.spec as JsonObject).bastion;
  await steps.applyObjects([cluster]);
  if (options.ready ?? true) await steps.until([['cluster', 'demo']], isReady, 60_000);
}

/** The example's ORC Images (00-images.yaml), driven to Available, for the servers whose image.imageRef names them. */
export async function provideExampleImages(steps: Steps): Promise<void> {
  await steps.apply('00-images.yaml');
  for (const name of ['node-image', 'bastion-image']) {
    await steps.until([['image', name]], (object) => condition(object, 'Available')?.status === 'True', 30_000);
  }
}

/**
 * The example's cluster (applied, not yet reconciled), its Images and bootstrap data, and these
 * example machines: what a machine test starts from.
 */
export async function startMachineSteps(machines: readonly string[]): Promise<Steps> {
  const steps = await startSteps();
  await provisionExampleCluster(steps, { ready: false });
  await provideExampleImages(steps);
  await steps.apply('04-bootstrap-data.yaml');
  for (const name of machines) await steps.applyObjects(await exampleMachine(steps, name));
  return steps;
}

/** The Machine and OpenStackMachine of one example machine, e.g. `exampleMachine(steps, 'demo-md-0-0')`. */
export async function exampleMachine(steps: Steps, name: string): Promise<JsonObject[]> {
  const documents = await steps.documents('03-machines.yaml');
  return documents.filter((document) => (document.metadata as JsonObject).name === name);
}

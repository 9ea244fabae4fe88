/**
 * The user's side of a cluster flow, through kubectl: wait for Ready, delete
 * everything, and, when either does not happen in time, a report of every
 * object's unmet conditions, so a failing test says which object is stuck
 * and what the reconciler last wrote about it.
 */
import { z } from 'zod';
import type { KubectlResult } from './test-server.js';

/** kubectl against the server under test; waits pass a timeout longer than their own --timeout. */
export type Kubectl = (args: string[], options?: { timeoutMs?: number }) => Promise<KubectlResult>;

/** Every kind whose deletion deletes OpenStack resources: a wait for deletion that leaves one out checks the cloud too early. */
const reconciledKinds = 'openstackclusters,openstackmachines,openstackservers,images.openstack.k-orc.cloud';

const objectList = z.object({
  items: z.array(
    z.looseObject({
      kind: z.string(),
      metadata: z.looseObject({ name: z.string(), deletionTimestamp: z.string().optional(), finalizers: z.array(z.string()).optional() }),
      status: z
        .looseObject({
          conditions: z
            .array(z.looseObject({ type: z.string(), status: z.string(), reason: z.string().optional(), message: z.string().optional() }))
            .optional(),
        })
        .optional(),
    }),
  ),
});

/** One line per object: its name, whether it is being deleted, and each condition that is not True. */
export async function conditionsReport(kubectl: Kubectl): Promise<string> {
  const listed = await kubectl(['get', reconciledKinds, '-o', 'json']);
  if (listed.code !== 0) return `(could not list objects: ${listed.stderr.trim()})`;
  const { items } = objectList.parse(JSON.parse(listed.stdout));
  if (items.length === 0) return '(no objects left)';
  return items
    .map((item) => {
      const deleting = item.metadata.deletionTimestamp ? ` deleting (finalizers ${JSON.stringify(item.metadata.finalizers ?? [])})` : '';
      const unmet = (item.status?.conditions ?? []).filter((condition) => condition.status !== 'True');
      const conditions = unmet.map((condition) => `${condition.type}=${condition.status} ${condition.reason ?? ''}: ${condition.message ?? ''}`);
      return `${item.kind}/${item.metadata.name}${deleting}${conditions.length > 0 ? `\n    ${conditions.join('\n    ')}` : ''}`;
    })
    .join('\n');
}

async function mustSucceed(kubectl: Kubectl, args: string[], what: string, timeoutMs?: number): Promise<string> {
  const result = await kubectl(args, timeoutMs === undefined ? undefined : { timeoutMs });
  if (result.code !== 0)
    throw new Error(`${what}: kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr.trim()}\n${await conditionsReport(kubectl)}`);
  return result.stdout;
}

/** `kubectl wait --for=condition=Ready` on the cluster, then on every machine. */
export async function waitForReady(kubectl: Kubectl, cluster: string, timeoutSeconds: number): Promise<void> {
  const timeout = `--timeout=${timeoutSeconds}s`;
  const killAfterMs = (timeoutSeconds + 10) * 1000;
  await mustSucceed(kubectl, ['wait', '--for=condition=Ready', `openstackcluster/${cluster}`, timeout], `cluster ${cluster} did not become Ready`, killAfterMs);
  await mustSucceed(kubectl, ['wait', '--for=condition=Ready', 'openstackmachines', '--all', timeout], 'machines did not become Ready', killAfterMs);
}

/** Waits until no cluster, machine or server object is left (each removed only once its finalizer is). */
export async function waitForDeletion(kubectl: Kubectl, timeoutSeconds: number): Promise<void> {
  const args = ['wait', '--for=delete', reconciledKinds, '--all', `--timeout=${timeoutSeconds}s`];
  const result = await kubectl(args, { timeoutMs: (timeoutSeconds + 10) * 1000 });
  // With nothing left to wait for, kubectl says so and fails; that is the outcome waited for.
  if (result.code === 0 || /no matching resources found/.test(result.stderr)) return;
  throw new Error(`objects were not deleted: kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr.trim()}\n${await conditionsReport(kubectl)}`);
}

/** Applies the manifests; kubectl must not complain. */
export async function apply(kubectl: Kubectl, manifests: string): Promise<void> {
  const result = await kubectl(['apply', '-f', manifests]);
  if (result.code !== 0 || result.stderr !== '') throw new Error(`kubectl apply -f ${manifests} failed (${result.code}): ${result.stderr}`);
}

/** Starts deleting everything the manifests made, without waiting for finalizers. */
export async function deleteWithoutWaiting(kubectl: Kubectl, manifests: string): Promise<void> {
  await mustSucceed(kubectl, ['delete', '-f', manifests, '--wait=false', '--ignore-not-found'], 'delete was refused');
}

/** JSON of one object, e.g. `openstackcluster/demo`. */
export async function getObject(kubectl: Kubectl, reference: string): Promise<unknown> {
  return JSON.parse(await mustSucceed(kubectl, ['get', reference, '-o', 'json'], `cannot read ${reference}`));
}

/**
 * Polls an object until `reached` holds, for states kubectl wait cannot name
 * (a new bastion ID); fails after the timeout with every object's unmet
 * conditions.
 */
export async function waitForObject<T>(kubectl: Kubectl, reference: string, what: string, reached: (object: T) => boolean, timeoutSeconds: number): Promise<T> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  for (;;) {
    const object = (await getObject(kubectl, reference)) as T;
    if (reached(object)) return object;
    if (Date.now() > deadline) throw new Error(`${reference}: ${what} did not happen within ${timeoutSeconds}s\n${await conditionsReport(kubectl)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Each reconciler, by the kind it reconciles: its `controller` label in /metrics. */
const controllers = { openstackclusters: 'openstackcluster', openstackmachines: 'openstackmachine', openstackservers: 'openstackserver' } as const;

/**
 * Waits until every reconciler has finished at least one reconcile of each of its objects since the
 * server started (for a server just restarted: it has looked at everything again) and its queue
 * is empty, read from the server's /metrics (reconcile_duration_seconds_count, reconcile_queue_depth).
 */
export async function waitForReconciledOnce(kubectl: Kubectl, timeoutSeconds: number): Promise<void> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  const objects: Record<string, number> = {};
  for (const resource of Object.keys(controllers)) {
    const listed = await kubectl(['get', resource, '-A', '-o', 'name']);
    objects[resource] = listed.stdout.split('\n').filter(Boolean).length;
  }
  for (;;) {
    const metrics = (await kubectl(['get', '--raw', '/metrics'])).stdout;
    const lagging = Object.entries(controllers).filter(([resource, controller]) => {
      const reconciles = sampleSum(metrics, 'reconcile_duration_seconds_count', controller);
      return reconciles < objects[resource] || sampleSum(metrics, 'reconcile_queue_depth', controller) > 0;
    });
    if (lagging.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(`reconcilers ${lagging.map(([, controller]) => controller).join(', ')} did not go through their objects within ${timeoutSeconds}s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The sum of a family's samples for one controller, in the Prometheus text format. */
function sampleSum(metrics: string, family: string, controller: string): number {
  let sum = 0;
  for (const line of metrics.split('\n')) {
    if (line.startsWith(`${family}{`) && line.includes(`controller="${controller}"`)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

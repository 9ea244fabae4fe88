/**
 * The steps every reconciler takes around its own work, in CAPO's order:
 * nothing while the object is paused or waits for its owner, the finalizer
 * stored before anything is created in OpenStack (its write triggers the
 * next pass), the identity Secret protected while the object needs it, the
 * authentication reported as a condition; and at the end of a deletion, the
 * finalizer dropped last.
 */
import type { JsonObject } from '../storage/interface.js';
import { ownerUidAnnotation } from './adoption.js';
import type { CloudConnection } from './cloud.js';
import { describeWaits, type ReconcilePass } from './reconcile-pass.js';
import type { ReconcileResult } from './runtime/controller.js';
import type { ReconcilerDeps } from './deps.js';
import { identitySecretOf } from './identity-guard.js';
import { metaOf, type KindClient } from './objects.js';

/**
 * What clusterctl move puts on each object it copied to the target management cluster, just before
 * deleting it from the source (Cluster API's clusterctl.cluster.x-k8s.io/delete-for-move). It
 * deletes the object first and removes the finalizers after: in between, a deleting object of ours
 * must not delete its resources.
 */
export const deleteForMoveAnnotation = 'clusterctl.cluster.x-k8s.io/delete-for-move';

/**
 * Undefined: go on with the pass; otherwise the pass ends here with this result. A deletion that
 * clusterctl move makes lets go of the object without touching OpenStack.
 */
export async function prepare(
  deps: ReconcilerDeps,
  client: KindClient,
  object: JsonObject,
  finalizer: string,
  closed: (() => Promise<ReconcileResult>) | undefined,
): Promise<ReconcileResult | undefined> {
  const meta = metaOf(object);
  if (meta.deletionTimestamp !== undefined) {
    if (!meta.finalizers?.includes(finalizer)) return {};
    if (meta.annotations?.[deleteForMoveAnnotation] === undefined) return undefined;
    // clusterctl move deletes the original once its copy is in the target management cluster:
    // what it made in OpenStack belongs to the copy now (the owner uid it recorded came along).
    deps.verified.forget(meta.uid);
    await client.removeFinalizer({ namespace: meta.namespace, name: meta.name, uid: meta.uid }, finalizer);
    await deps.guard.release(identitySecretOf(object), object);
    return {};
  }
  if (closed) return closed();
  // The owner uid is recorded before anything is created in OpenStack, so that a copy of the object elsewhere (clusterctl move) names the same.
  if (await client.addFinalizer({ namespace: meta.namespace, name: meta.name, uid: meta.uid }, finalizer, { [ownerUidAnnotation]: meta.uid })) return {};
  await deps.guard.protect(identitySecretOf(object));
  return undefined;
}

/** Everything of the object is gone from OpenStack: forget it, drop the finalizer, release the identity Secret. */
export async function finishDeletion(deps: ReconcilerDeps, pass: ReconcilePass, finalizer: string): Promise<ReconcileResult> {
  deps.verified.forget(pass.meta.uid);
  await pass.client.removeFinalizer(pass.target, finalizer);
  await deps.guard.release(identitySecretOf(pass.object), pass.object);
  return {};
}

/** What a deletion that has to come back shows: who blocks it, or what it waits for. */
export function deletionProgress(pass: ReconcilePass, type: string, blockedReason: string): void {
  const blocked = pass.blockedBy.length > 0;
  pass.condition({
    type,
    status: 'False',
    reason: blocked ? blockedReason : 'Deleting',
    message: blocked ? pass.blockedBy.join('; ') : describeWaits(pass.waiting),
  });
}

/** Clients for `identityRef`, authenticated; CAPO's OpenStackAuthenticationSucceeded condition says whether that worked. */
export async function authenticate(deps: ReconcilerDeps, pass: ReconcilePass, identityRef: unknown): Promise<CloudConnection> {
  try {
    const cloud = await deps.clouds.connect(pass.meta.namespace, identityRef);
    await cloud.session.authenticate();
    pass.condition({ type: 'OpenStackAuthenticationSucceeded', status: 'True', reason: 'Succeeded' });
    return cloud;
  } catch (error) {
    pass.condition({
      type: 'OpenStackAuthenticationSucceeded',
      status: 'False',
      reason: 'OpenStackAuthenticationFailed',
      message: error instanceof Error ? error.message : String(error),
    });
    throw error;
  }
}

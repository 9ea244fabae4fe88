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
import type { ReconcileResult } from './controller.js';
import type { ReconcilerDeps } from './deps.js';
import { identitySecretOf } from './identity-guard.js';
import { metaOf, type KindClient } from './objects.js';

/** Undefined: go on with the pass; otherwise the pass ends here with this result. */
export async function prepare(
  deps: ReconcilerDeps,
  client: KindClient,
  object: JsonObject,
  finalizer: string,
  closed: (() => Promise<ReconcileResult>) | undefined,
): Promise<ReconcileResult | undefined> {
  const meta = metaOf(object);
  if (meta.deletionTimestamp !== undefined) return meta.finalizers?.includes(finalizer) ? undefined : {};
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
  pass.condition({ type, status: 'False', reason: blocked ? blockedReason : 'Deleting', message: blocked ? pass.blockedBy.join('; ') : describeWaits(pass.waiting) });
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

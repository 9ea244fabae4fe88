/**
 * What the Octavia actuators share. Octavia changes one load balancer at a
 * time: every create, update or delete below it puts the load balancer in
 * PENDING_UPDATE, and it answers 409 to the next change until the amphora
 * driver is done. CAPO met that 409 with errors and backoff (#1687) and took
 * PENDING_UPDATE for a failure (#1197); here a busy load balancer is
 * something to wait for, and only ERROR fails.
 *
 * A refused change costs one request and changes nothing, so a child's
 * change is sent without reading the load balancer first; only a refusal
 * costs the one GET that tells busy from failed.
 */
import { isNotFound, OpenStackError, type LoadBalancer, type OctaviaClient } from '../../openstack/index.js';
import { carriesOwnerTag, ownOrAdoptable, ownerTag, ownerTags, WaitingError, type Owner, type Progress, type Readiness, type Waiting } from './actuator.js';
import { ResourceTerminalError } from './engine.js';

/** Amphora builds take a minute or two and child changes a few seconds; the controller's schedule bounds the polling. */
export const octaviaRequeueMs = 5_000;
/** When Octavia refused a change but the load balancer was ACTIVE again by the time we looked. */
const retrySoonMs = 1_000;

interface Provisioned {
  id: string;
  provisioning_status: string;
}

/**
 * The same for a load balancer and every object below it: ACTIVE is ready, ERROR failed, PENDING_*
 * (anything else) in progress. Octavia applies a change below a load balancer to the load balancer
 * as a whole (the child and the load balancer turn ACTIVE together), so every such wait is timed
 * as one transition, the load balancer's update; only the amphorae's boot (its create) differs.
 */
export function provisioningReadiness(kind: string, resource: Provisioned): Readiness {
  const status = resource.provisioning_status;
  if (status === 'ACTIVE') return { ready: true };
  if (status === 'ERROR') return { failed: 'Octavia reports provisioning_status ERROR' };
  const booting = kind === 'load balancer' && status === 'PENDING_CREATE';
  return {
    waitingFor: `${kind} ${resource.id} to become ACTIVE (now ${status})`,
    requeueAfterMs: octaviaRequeueMs,
    transition: booting ? { kind: 'load balancer PENDING_CREATE', id: resource.id } : { kind: 'load balancer change' },
  };
}

/**
 * Whether the resource serves, for what depends on it (the cluster's
 * endpoint, a machine's membership): ACTIVE, or PENDING_UPDATE, a change
 * applied to something already ACTIVE that keeps serving meanwhile (mostly
 * another machine's member; Octavia marks the whole chain above a member).
 * Whether a change may be sent now stays provisioningReadiness's question.
 */
export function servingReadiness(kind: string, resource: Provisioned): Readiness {
  return resource.provisioning_status === 'PENDING_UPDATE' ? { ready: true } : provisioningReadiness(kind, resource);
}

/**
 * Whether a change below the load balancer may be sent now: undefined when
 * it is ACTIVE, a wait while it is PENDING_*; in ERROR no change below it
 * will ever be accepted, which is a ResourceTerminalError.
 */
export function waitingForLoadBalancer(lb: LoadBalancer): Waiting | undefined {
  const readiness = provisioningReadiness('load balancer', lb);
  if ('failed' in readiness) {
    throw new ResourceTerminalError('Failed', 'load balancer', [lb.id], `load balancer ${lb.id} failed: ${readiness.failed}`);
  }
  return 'waitingFor' in readiness ? readiness : undefined;
}

/**
 * Thrown by a child's create that Octavia refused because its load balancer
 * was busy. Nothing was created: reconcile again after `requeueAfterMs`, as
 * for any other wait, rather than treating this as an error.
 */
export class LoadBalancerBusyError extends WaitingError {
  override name = 'LoadBalancerBusyError';
}

/**
 * Octavia's 409s for "not now": ImmutableObject (`... is immutable and cannot
 * be updated`, a parent not ACTIVE) and LBPendingStateError (`Invalid state
 * ... of loadbalancer resource`). Its other 409s (a listener port or member
 * address already used) are real conflicts.
 */
export function isBusyConflict(error: unknown): error is OpenStackError {
  return error instanceof OpenStackError && error.kind === 'Conflict' && /is immutable|Invalid state/.test(error.serviceMessage ?? '');
}

/**
 * After Octavia refused a change below the load balancer: one GET tells a
 * busy one (wait) from one in ERROR (ResourceTerminalError). Other errors
 * are rethrown as they are.
 */
export async function waitAfterRefusal(octavia: OctaviaClient, loadBalancerId: string, error: unknown): Promise<Waiting> {
  if (!isBusyConflict(error)) throw error;
  const lb = await octavia.getLoadBalancer(loadBalancerId);
  return waitingForLoadBalancer(lb) ?? retrySoon(lb);
}

/** Octavia refused, yet the load balancer is ACTIVE by the time we look: its change has just finished. */
function retrySoon(lb: LoadBalancer): Waiting {
  return { waitingFor: `load balancer ${lb.id} to accept changes again`, requeueAfterMs: retrySoonMs };
}

/** A child's create: one POST; a refusal because the load balancer is busy becomes a LoadBalancerBusyError. */
export async function createBelow<R>(octavia: OctaviaClient, loadBalancerId: string, post: () => Promise<R>): Promise<R> {
  try {
    return await post();
  } catch (error) {
    const waiting = await waitAfterRefusal(octavia, loadBalancerId, error);
    throw new LoadBalancerBusyError(waiting.waitingFor, waiting.requeueAfterMs);
  }
}

/** A child's update, sent only when something differs: the child is PENDING_* until Octavia has applied it, hence the wait. */
export async function updateBelow(
  octavia: OctaviaClient,
  loadBalancerId: string,
  kind: string,
  child: Provisioned,
  change: string,
  put: () => Promise<unknown>,
): Promise<Progress> {
  const pending = provisioningReadiness(kind, child);
  if ('waitingFor' in pending) return pending;
  try {
    await put();
  } catch (error) {
    return waitAfterRefusal(octavia, loadBalancerId, error);
  }
  return { waitingFor: `${kind} ${child.id} to apply ${change}`, requeueAfterMs: octaviaRequeueMs };
}

/**
 * A child's delete, which Octavia runs asynchronously: waiting until the
 * engine's next read answers 404, without a second DELETE meanwhile (that
 * would get 409). A refusal while the load balancer is busy is a wait; in
 * any other state (ERROR) the 409 is rethrown, so the engine reports the
 * child as blocked and looks again at a steady pace, since an operator's
 * failover or the load balancer's own cascade delete can still end it. A
 * 404 of the load balancer (or of the pool in between) means the child went
 * with it.
 */
export async function deleteBelow(
  octavia: OctaviaClient,
  kind: string,
  child: Provisioned,
  send: () => Promise<void>,
  loadBalancerIdOf: () => Promise<string>,
): Promise<Progress> {
  const gone: Waiting = { waitingFor: `${kind} ${child.id} to be deleted`, requeueAfterMs: octaviaRequeueMs };
  if (child.provisioning_status === 'PENDING_DELETE') return gone;
  try {
    await send();
    return gone;
  } catch (error) {
    if (!isBusyConflict(error)) throw error;
    let lb: LoadBalancer;
    try {
      lb = await octavia.getLoadBalancer(await loadBalancerIdOf());
    } catch (readError) {
      if (isNotFound(readError)) return { done: true };
      throw readError;
    }
    if (lb.provisioning_status === 'ERROR') throw error;
    return waitingForLoadBalancer(lb) ?? retrySoon(lb);
  }
}

/** Octavia takes tags in the create body; the owner tags come first and nothing is repeated. */
export function createTags(owner: Owner, extra: readonly string[] = []): string[] {
  return [...new Set([...ownerTags(owner), ...extra])];
}

/** The tag filter of a lookup by name: the owner tag, unless the owner adopts CAPO's untagged resources too. */
export function lookupTags(owner: Owner): { tags?: string[] } {
  return owner.adopt ? {} : { tags: [ownerTag(owner)] };
}

/** Of a lookup by name: ours, or (adopting) CAPO's, which carry no capo-apiserver owner tag. */
export function ownedOrCapo<R extends { tags?: string[] | null }>(found: readonly R[], owner: Owner): R[] {
  return ownOrAdoptable(
    found,
    owner,
    (resource) => (resource.tags ?? []).includes(ownerTag(owner)),
    (resource) => carriesOwnerTag(resource.tags ?? []),
  );
}

/**
 * An adopted child of a load balancer gets the owner's tags (CAPO's carry
 * none), one PUT, then a wait until Octavia applied it; undefined when it
 * carries them already.
 */
export async function claimBelow(
  octavia: OctaviaClient,
  loadBalancerId: string,
  kind: string,
  child: Provisioned & { tags?: string[] | null },
  owner: Owner,
  put: (tags: string[]) => Promise<unknown>,
): Promise<Progress | undefined> {
  const tags = child.tags ?? [];
  if (tags.includes(ownerTag(owner))) return undefined;
  return updateBelow(octavia, loadBalancerId, kind, child, 'its owner tags', () => put(createTags(owner, tags)));
}

/** The one parent Octavia lists for a child, e.g. a listener's `loadbalancers` or a monitor's `pools`. */
export function parentOf(kind: string, child: { id: string }, parentKind: string, parents: readonly { id: string }[] | undefined): string {
  const id = parents?.[0]?.id;
  if (id === undefined) throw new Error(`Octavia shows ${kind} ${child.id} without its ${parentKind}`);
  return id;
}

/** For members and monitors, which name only their pool: the pool's load balancer, one GET away. */
export async function loadBalancerOfPool(octavia: OctaviaClient, poolId: string): Promise<string> {
  const pool = await octavia.getPool(poolId);
  return parentOf('pool', pool, 'load balancer', pool.loadbalancers);
}

/**
 * Drives one actuator through create-or-adopt and delete so that a crash, a
 * lost response or a failed status write at any point leads, on the next
 * reconcile, to the same single resource rather than a duplicate or a leak.
 *
 * Lookup order on every ensure: the ID recorded in status (one GET, or a
 * share of a list read together with other objects' resources), then
 * the owner-tagged name (one list, only when nothing is recorded or the
 * recorded resource is gone), then create. Whatever is found or created is
 * recorded before any further step, so a later failure cannot lose it.
 *
 * Nothing here sleeps: a resource that is not ready yet, or not gone yet,
 * comes back as "waiting" with a requeue delay for the controller.
 */
import { isNotFound, OpenStackError, type OpenStackErrorKind } from '../../openstack/index.js';
import { TerminalError } from '../runtime/controller.js';
import { waitingOf, type Owner, type Progress, type ResourceActuator, type Waiting } from './actuator.js';

export type ErrorClass = 'terminal' | 'transient' | 'blocked';

/**
 * What the reconciler does with an OpenStack error:
 * - terminal: retrying the same request cannot help; surface it and wait
 *   for the object to change (TerminalError for the controller);
 * - transient: retry with backoff (after Retry-After when the error has it);
 * - blocked: something else in the cloud has to change first (a port on the
 *   network, quota used by others); show what, and requeue at a steady pace.
 *
 * A Record over every kind, so a new kind does not compile until it is placed.
 */
const classes: Record<OpenStackErrorKind, ErrorClass> = {
  BadRequest: 'terminal',
  Forbidden: 'terminal',
  Config: 'terminal',
  TLS: 'terminal',
  // getById and delete absorb a 404 of the resource itself; any other 404 is a dependency the spec names that does not exist.
  NotFound: 'terminal',
  Conflict: 'blocked',
  // CAPO and ORC both retry quota errors, since quota frees up without a spec change; the user needs to see that it is quota.
  OverQuota: 'blocked',
  Transient: 'transient',
  RateLimited: 'transient',
  Unreachable: 'transient',
  // The session has already retried with a fresh token. What remains is a Keystone hiccup or bad credentials, and the fix for
  // the latter lands in the Secret, not in the reconciled object, so only a retry would notice it.
  Unauthorized: 'transient',
  // A response we cannot read (a proxy's error page, a shape we do not know): backoff bounds the cost, and the message shows it.
  Unexpected: 'transient',
};

export function classify(error: unknown): ErrorClass {
  if (error instanceof TerminalError) return 'terminal';
  if (error instanceof OpenStackError) return classes[error.kind];
  // Storage conflicts on the status write, programming errors: the queue's backoff is the right answer.
  return 'transient';
}

/** The delay the service asked for (429 or 503 with Retry-After), to requeue after instead of the queue's backoff. */
export function retryAfterMs(error: unknown): number | undefined {
  if (!(error instanceof OpenStackError) || error.retryAfterSeconds === undefined) return undefined;
  return error.retryAfterSeconds * 1000;
}

/** How often to look again at a resource that something else keeps in use. */
export const blockedRequeueMs = 15_000;

export type TerminalReason = 'Ambiguous' | 'Failed' | 'Gone';

/** A resource-level outcome retrying cannot change; `ids` name the OpenStack resources concerned. */
export class ResourceTerminalError extends TerminalError {
  override name = 'ResourceTerminalError';

  constructor(
    readonly reason: TerminalReason,
    readonly resourceKind: string,
    readonly ids: readonly string[],
    message: string,
  ) {
    super(message);
  }
}

export interface EnsureInput<Desired, Resource> {
  recordedId: string | undefined;
  desired: Desired;
  owner: Owner;
  /** Persists the ID in status; ensure awaits it before any later step, so a failure there cannot lose the resource. */
  record(id: string): Promise<void>;
  /**
   * When the recorded resource is gone (404): `recreate` (the default) adopts
   * or creates anew and reports the lost ID as `goneId`; `fail` throws a
   * ResourceTerminalError `Gone`, for kinds whose replacement the user must
   * decide on (a server with data on it).
   */
  ifGone?: 'recreate' | 'fail';
  /** Reads the recorded resource instead of actuator.getById (with others, see read-together.ts); undefined when it is gone. */
  read?: (id: string) => Promise<Resource | undefined>;
  /** Answers the lookup by name instead of actuator.findAdoptable (a lookup started ahead, see ReconcilePass.readAhead). */
  find?: () => Promise<Resource[]>;
  /** Told what this ensure did to the cloud, for Events. */
  observer?: EnsureObserver;
}

/** What an ensure or a removal did, as it happens (the pass records Events from it). */
export interface EnsureObserver {
  created?(id: string): void;
  adopted?(id: string): void;
  createFailed?(error: unknown): void;
  /** The resource is gone: deleted now, or found gone after an earlier delete. */
  deleted?(id: string): void;
  /** The recorded resource no longer exists (drift: deleted behind our back); `next` says what happens now. */
  vanished?(id: string, next: string): void;
}

export type Found = 'recorded' | 'adopted' | 'created';

export type Ensured<Resource> = {
  resource: Resource;
  found: Found;
  /** The recorded ID that no longer existed, when this pass replaced it. */
  goneId?: string;
} & ({ ready: true } | ({ ready: false } & Waiting));

export async function ensure<Desired extends { name: string }, Resource extends { id: string }>(
  actuator: ResourceActuator<Desired, Resource>,
  input: EnsureInput<Desired, Resource>,
): Promise<Ensured<Resource>> {
  const { recordedId, desired, owner } = input;
  let resource: Resource | undefined;
  let found: Found = 'recorded';
  let goneId: string | undefined;
  if (recordedId !== undefined) {
    resource = await (input.read ? input.read(recordedId) : actuator.getById(recordedId));
    if (resource === undefined) {
      if (input.ifGone === 'fail') {
        input.observer?.vanished?.(recordedId, 'not made again: the object is failed, for its owner to replace');
        throw new ResourceTerminalError(
          'Gone',
          actuator.kind,
          [recordedId],
          `${actuator.kind} ${recordedId}, recorded in status, no longer exists in OpenStack`,
        );
      }
      input.observer?.vanished?.(recordedId, 'making it again');
      goneId = recordedId;
    }
  }
  if (resource === undefined) {
    resource = await adoptable(actuator, desired, owner, input.find);
    found = 'adopted';
    if (resource === undefined) {
      try {
        resource = await actuator.create(desired, owner);
      } catch (error) {
        input.observer?.createFailed?.(error);
        throw error;
      }
      found = 'created';
    }
    await input.record(resource.id);
    if (found === 'created') input.observer?.created?.(resource.id);
    else input.observer?.adopted?.(resource.id);
  }

  const base = { resource, found, ...(goneId === undefined ? {} : { goneId }) };
  const progress = (await actuator.postCreate?.(resource, desired, owner)) ?? { done: true };
  if (!('done' in progress)) return { ...base, ready: false, ...waitingOf(progress) };
  const readiness = actuator.readiness(resource);
  if ('failed' in readiness) {
    throw new ResourceTerminalError('Failed', actuator.kind, [resource.id], `${actuator.kind} ${resource.id} failed: ${readiness.failed}`);
  }
  if ('waitingFor' in readiness) {
    const waiting = waitingOf(readiness);
    // Created in this pass: its transition begins now.
    if (found === 'created' && waiting.transition) waiting.transition = { ...waiting.transition, begins: true };
    return { ...base, ready: false, ...waiting };
  }
  return { ...base, ready: true };
}

async function adoptable<Desired extends { name: string }, Resource extends { id: string }>(
  actuator: ResourceActuator<Desired, Resource>,
  desired: Desired,
  owner: Owner,
  find: () => Promise<Resource[]> = () => actuator.findAdoptable(desired.name, owner, desired),
): Promise<Resource | undefined> {
  const { name } = desired;
  const matches = await find();
  if (matches.length <= 1) return matches[0];
  const ids = matches.map((match) => match.id);
  throw new ResourceTerminalError(
    'Ambiguous',
    actuator.kind,
    ids,
    `${matches.length} ${actuator.kind}s named "${name}" carry the owner tag of ${owner.kind} ${owner.namespace}/${owner.name} (${ids.join(', ')}); delete all but one`,
  );
}

export interface RemoveInput {
  recordedId: string | undefined;
  /** The name ensure gave the resource, for finding copies whose ID never reached status. */
  name: string;
  owner: Owner;
  observer?: Pick<EnsureObserver, 'deleted'>;
}

export type Removal = { deleted: true } | { blockedBy: string; requeueAfterMs: number } | Waiting;

/** How many holders a blocked message names before summing up the rest. */
const blockersShown = 5;

/**
 * Deletes the recorded resource and every owner-tagged copy of the same
 * name: a create whose response was lost, or whose ID failed to reach
 * status, is found only by the tag, and would leak otherwise. Untagged
 * resources are never touched. Transient errors are thrown for backoff.
 * One at a time, the recorded one first: while it is still going (a
 * server, a load balancer), the pass ends without listing the copies,
 * which a later pass finds once it is gone.
 */
export async function remove<Desired extends { name: string }, Resource extends { id: string }>(
  actuator: ResourceActuator<Desired, Resource>,
  input: RemoveInput,
): Promise<Removal> {
  const deleted = input.observer?.deleted?.bind(input.observer) ?? (() => undefined);
  if (input.recordedId !== undefined) {
    const recorded = await actuator.getById(input.recordedId);
    // Gone since an earlier pass asked for its deletion (a server, a load balancer take a while).
    if (!recorded) deleted(input.recordedId);
    const held = recorded && (await removeOne(actuator, recorded, deleted));
    if (held) return held;
  }
  for (const copy of await actuator.findAdoptable(input.name, input.owner)) {
    // The recorded one is the GET's to judge: a list may still show what its DELETE just ended.
    if (copy.id === input.recordedId) continue;
    const held = await removeOne(actuator, copy, deleted);
    if (held) return held;
  }
  return { deleted: true };
}

/** Deletes one resource: undefined once it is gone, else what holds its removal (a wait, or who blocks it). */
async function removeOne<Desired extends { name: string }, Resource extends { id: string }>(
  actuator: ResourceActuator<Desired, Resource>,
  resource: Resource,
  deleted: (id: string) => void,
): Promise<Removal | undefined> {
  let progress: Progress;
  try {
    progress = await actuator.delete(resource);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    if (error instanceof OpenStackError && classify(error) === 'blocked') {
      return { blockedBy: await blockedMessage(actuator, resource, error), requeueAfterMs: blockedRequeueMs };
    }
    throw error;
  }
  if (!('done' in progress)) return progress;
  deleted(resource.id);
  return undefined;
}

async function blockedMessage<Desired extends { name: string }, Resource extends { id: string }>(
  actuator: ResourceActuator<Desired, Resource>,
  resource: Resource,
  error: OpenStackError,
): Promise<string> {
  const said = error.serviceMessage ?? error.detail;
  let message = `${actuator.kind} ${resource.id} cannot be deleted yet (${error.fault === undefined ? said : `${error.fault}: ${said}`})`;
  let holders: string[] = [];
  try {
    holders = (await actuator.blockers?.(resource)) ?? [];
  } catch {
    // Naming the holders is a courtesy on top of the service's own message; failing to must not hide that message.
  }
  if (holders.length > 0) {
    const rest = holders.length - blockersShown;
    message += `; held by ${holders.slice(0, blockersShown).join(', ')}${rest > 0 ? ` and ${rest} more` : ''}`;
  }
  return message;
}

/**
 * Drift: a resource deleted behind our back (by hand, by a cleanup script, by a cloud rebuilt or
 * restored from a backup). An object's own recorded resources are found gone by the engine's read
 * (engine.ts: recreated, or for a server a failure); this module recognises the other way drift
 * shows itself: a create or update answered "not found" for a resource it names (a port's network,
 * a router's external network, a load balancer's subnet). Such an answer is not a fault of the
 * object's spec to stop on: the resource's owner heals it (the cluster makes its network again),
 * so the pass waits, with backoff, and whoever had verified the resource forgets it at once.
 */
import { OpenStackError } from '../openstack/index.js';

/** A resource a request named that OpenStack says does not exist. */
export interface VanishedReference {
  /** As the service names it, lower case: `network`, `subnet`, `security group`, `port`. */
  kind: string;
  id: string;
}

const uuid = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/**
 * How Neutron, Nova, Octavia and Cinder word a named resource that is not there: `Network <id>
 * could not be found.` (Neutron's 404; Nova's 400 on a boot), `Port id <id> could not be found.`
 * (Nova), `Subnet <id> not found.` (Octavia's 400, InvalidSubresource), `Security group <id> does
 * not exist` (Neutron).
 */
const wordings = [new RegExp(`\\b([A-Za-z][A-Za-z ]*?)(?: id)? (${uuid}) (?:could not be found|not found|does not exist)`, 'i')];

/**
 * The resource a failed create or update named and did not find, if that is what the error says.
 * A read or a delete answering 404 is about its own resource, which the engine judges; so is a
 * 404 without a named ID.
 */
export function vanishedReference(error: unknown): VanishedReference | undefined {
  if (!(error instanceof OpenStackError) || (error.kind !== 'NotFound' && error.kind !== 'BadRequest')) return undefined;
  if (error.method === undefined || error.method === 'GET' || error.method === 'DELETE') return undefined;
  const said = error.serviceMessage ?? error.detail;
  for (const wording of wordings) {
    const match = wording.exec(said);
    if (match) return { kind: match[1].trim().toLowerCase(), id: match[2].toLowerCase() };
  }
  return undefined;
}

/** A reference the object froze in its status that OpenStack no longer has: the pass forgets it so the next resolves it again. */
export function forgetFrozen(status: Record<string, unknown>, path: readonly string[], id: string): boolean {
  let parent: Record<string, unknown> | undefined = status;
  for (const key of path.slice(0, -1)) {
    const next: unknown = parent[key];
    if (typeof next !== 'object' || next === null) return false;
    parent = next as Record<string, unknown>;
  }
  const last = path[path.length - 1];
  if (!JSON.stringify(parent[last] ?? null).includes(id)) return false;
  delete parent[last];
  return true;
}

/** A pass that met a vanished dependency: retried with the queue's backoff, its condition already written (DependencyNotFound). */
export class DependencyVanishedError extends Error {
  override name = 'DependencyVanishedError';

  constructor(
    message: string,
    readonly resourceKind: string,
    readonly id: string,
  ) {
    super(message);
  }
}

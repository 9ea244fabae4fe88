/**
 * Pool members go in batches. Octavia applies one change of a load balancer
 * at a time, a few seconds (on a public cloud, ten or more) each, so machines
 * joining a pool one member at a time wait on each other: nine members were
 * nine changes in a row. Here every machine that knows its address says which
 * member it wants in each pool; whichever machine gets the load balancer's
 * turn sends its own member together with every member wanted in that pool, in
 * one batch update (`additive_only`, so members not listed stay), and the
 * others find theirs by name and owner tag on their next pass, as after a
 * crash. A member alone goes in with a plain create, which answers with it.
 *
 * Wants live in memory only: a restart loses them, and each machine says
 * again what it wants on its next pass. A member a batch made for a machine
 * that has not recorded it yet carries that machine's name and owner tag, so
 * the machine adopts it, or its deletion finds it by name.
 *
 * Those lookups by name go to one list of the pool, shared: machines joining
 * a pool look for their members before their first create, the sender of a
 * batch looks for its own right after it, and the machines the batch served
 * look for theirs on their next passes, seconds later. One list answers them
 * all (a fleet's clusters made 24 filtered lookups a cluster, one per member
 * and pass, against 4 batches). A list answers for a name until this process
 * changes a member of that name (a batch, a create, a tag claim, a delete,
 * each of which marks its names when it starts and when it ends) or
 * `listingFreshMs` passes: the bound on a change made elsewhere unseen, by
 * the replica that held the cluster's shard before, or by a person. Such a
 * change cannot make a duplicate: Octavia refuses a second member at one
 * address and port of a pool, and a batch update takes it for the same one.
 */
import { OpenStackError, type CreateMember, type Member, type OctaviaClient } from '../openstack/index.js';
import { LoadBalancerTurns } from './load-balancer-turns.js';
import { absentOn404 } from './resource/actuator.js';
import { LoadBalancerBusyError } from './resource/octavia.js';

/** How long a list of a pool answers lookups of the names this process has not changed since. */
const listingFreshMs = 30_000;

interface Listing {
  /** Undefined: the pool is gone. */
  members: Promise<Member[] | undefined>;
  at: number;
  /** The names of members whose change started or ended since the list was started: it no longer answers for them. */
  changed: Set<string>;
}

const namedIn = (members: Member[] | undefined, name: string): Member[] => (members ?? []).filter((member) => member.name === name);

/** A member as a machine wants it: named, and carrying its owner tags. */
export type WantedMember = CreateMember & { name: string };

export class MemberBatches {
  /** Pool ID -> member name -> the member wanted. */
  private readonly wanted = new Map<string, Map<string, WantedMember>>();
  /** Pool ID -> the batch being sent, settled either way. */
  private readonly sending = new Map<string, Promise<void>>();
  /** Clouds that refused a batch update: they get plain creates from then on. */
  private readonly refusing = new WeakSet<OctaviaClient>();
  /** Pool ID -> its last list, while it answers lookups. */
  private readonly listings = new Map<string, Listing>();

  constructor(
    private readonly turns = new LoadBalancerTurns(),
    private readonly now: () => number = Date.now,
  ) {}

  /** The pool's members named `name` (none when the pool is gone), from a list of the pool shared by the lookups of several machines. */
  async named(octavia: OctaviaClient, poolId: string, name: string): Promise<Member[]> {
    const listing = this.listings.get(poolId);
    if (listing !== undefined && this.now() - listing.at <= listingFreshMs && !listing.changed.has(name)) {
      const found = namedIn(await listing.members, name);
      // A member on its way out is what a removal waits to see gone: a list from before it went would keep it waiting.
      if (!found.some((member) => member.provisioning_status === 'PENDING_DELETE')) return found;
    }
    return namedIn(await this.list(octavia, poolId), name);
  }

  private list(octavia: OctaviaClient, poolId: string): Promise<Member[] | undefined> {
    this.forgetStaleListings();
    const members = absentOn404(octavia.listMembers(poolId));
    const taken: Listing = { members, at: this.now(), changed: new Set() };
    this.listings.set(poolId, taken);
    // A failed list answers no one after its own caller.
    members.catch(() => {
      if (this.listings.get(poolId) === taken) this.listings.delete(poolId);
    });
    return members;
  }

  /** Runs a change of the pool's members of these names: the list taken before it ends no longer answers for them. */
  async changing<T>(poolId: string, names: readonly string[], change: () => Promise<T>): Promise<T> {
    this.markChanged(poolId, names);
    try {
      return await change();
    } finally {
      this.markChanged(poolId, names);
    }
  }

  private markChanged(poolId: string, names: readonly string[]): void {
    const changed = this.listings.get(poolId)?.changed;
    for (const name of names) changed?.add(name);
  }

  /** The lists of pools not looked up for a while (their clusters went): kept, they would pile up. */
  private forgetStaleListings(): void {
    for (const [poolId, listing] of this.listings) if (this.now() - listing.at > listingFreshMs) this.listings.delete(poolId);
  }

  /** How long until the load balancer takes another member change (undefined: now), without taking the turn. */
  waitMs(loadBalancerId: string): number | undefined {
    return this.turns.waitMs(loadBalancerId);
  }

  /**
   * A machine's member of a pool, to go in with the next batch. The same want
   * again (each pass says it) keeps the first, so that a batch on its way
   * still counts it as sent; a different one (a new address) replaces it.
   */
  want(poolId: string, member: WantedMember): void {
    const pool = this.wanted.get(poolId) ?? new Map<string, WantedMember>();
    this.wanted.set(poolId, pool);
    const current = pool.get(member.name);
    if (current === undefined || JSON.stringify(current) !== JSON.stringify(member)) pool.set(member.name, member);
  }

  /** The member is recorded: it is no longer wanted. */
  done(poolId: string, name: string): void {
    const pool = this.wanted.get(poolId);
    pool?.delete(name);
    if (pool?.size === 0) this.wanted.delete(poolId);
  }

  /**
   * The machine is going: its member is no longer wanted, and a batch on its
   * way is waited for, so that a lookup by name afterwards sees what it made.
   */
  async forget(poolId: string, name: string): Promise<void> {
    this.done(poolId, name);
    await this.sending.get(poolId);
  }

  /**
   * Takes the load balancer's turn and sends `own` with the other members
   * wanted in the pool: the created member when it went alone (a plain
   * create, or a cloud that refuses batch updates), undefined when a batch
   * went and Octavia answered without the members. Without the turn, a
   * LoadBalancerBusyError says how long to wait.
   */
  async send(octavia: OctaviaClient, loadBalancerId: string, poolId: string, own: WantedMember): Promise<Member | undefined> {
    const waitMs = this.turns.take(loadBalancerId);
    if (waitMs !== undefined) throw new LoadBalancerBusyError(`load balancer ${loadBalancerId} to finish another machine's member change`, waitMs);
    const others = [...(this.wanted.get(poolId)?.values() ?? [])].filter((member) => member.name !== own.name);
    try {
      const names = [own, ...others].map((member) => member.name);
      return await this.changing(poolId, names, () => this.sendBatch(octavia, poolId, own, others));
    } finally {
      // Accepted or refused, the load balancer is busy from now on (a change queued behind the cloud's limits reached it late).
      this.turns.busy(loadBalancerId);
    }
  }

  private async sendBatch(octavia: OctaviaClient, poolId: string, own: WantedMember, others: WantedMember[]): Promise<Member | undefined> {
    if (others.length === 0 || this.refusing.has(octavia)) return await octavia.createMember(poolId, own);
    const batch = [own, ...others];
    const sent = octavia.updateMembers(poolId, batch, { additiveOnly: true });
    const settled = sent.then(
      () => undefined,
      () => undefined,
    );
    this.sending.set(poolId, settled);
    try {
      await sent;
    } catch (error) {
      if (!refusesBatches(error)) throw error;
      this.refusing.add(octavia);
      return await octavia.createMember(poolId, own);
    } finally {
      if (this.sending.get(poolId) === settled) this.sending.delete(poolId);
    }
    // Sent: a want replaced meanwhile (a new address) stays for the next batch.
    for (const member of others) if (this.wanted.get(poolId)?.get(member.name) === member) this.done(poolId, member.name);
    return undefined;
  }
}

/**
 * A cloud without the batch update: a provider that does not implement it
 * (501), an API without the route (405) or without `additive_only` (before
 * API 2.11, an unknown argument). Nothing was changed.
 */
function refusesBatches(error: unknown): boolean {
  if (!(error instanceof OpenStackError)) return false;
  return error.status === 501 || error.status === 405 || (error.status === 400 && /additive_only/.test(error.serviceMessage ?? ''));
}

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
 */
import { OpenStackError, type CreateMember, type Member, type OctaviaClient } from '../openstack/index.js';
import { LoadBalancerTurns } from './load-balancer-turns.js';
import { LoadBalancerBusyError } from './resource/octavia.js';

/** A member as a machine wants it: named, and carrying its owner tags. */
export type WantedMember = CreateMember & { name: string };

export class MemberBatches {
  /** Pool ID -> member name -> the member wanted. */
  private readonly wanted = new Map<string, Map<string, WantedMember>>();
  /** Pool ID -> the batch being sent, settled either way. */
  private readonly sending = new Map<string, Promise<void>>();
  /** Clouds that refused a batch update: they get plain creates from then on. */
  private readonly refusing = new WeakSet<OctaviaClient>();

  constructor(private readonly turns = new LoadBalancerTurns()) {}

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
    } finally {
      // Accepted or refused, the load balancer is busy from now on (a change queued behind the cloud's limits reached it late).
      this.turns.busy(loadBalancerId);
    }
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

/**
 * Resources this process has seen ready recently, so a reconcile pass does
 * not read again what the previous pass (seconds ago) just read: while a
 * cluster's load balancer builds, every pass would otherwise re-read the
 * network, subnet, router and security groups. An entry lasts until its
 * object's next resync is due (runtime/resync-grid.ts), which keeps the promise of
 * one read per owned resource per resync, and is bound to the object's
 * generation so a spec change re-reads and re-applies everything. A restart
 * starts empty, so crash recovery always reads the cloud.
 *
 * Entries also name the group their resource can be read in together with
 * others (read-together.ts), which asks here for the ones to read along.
 * That question comes with every read, so entries are also kept by group and
 * by the instant they run out (grid instants: a few per group), and by owner
 * for what is done to all of an object's: a scan of every entry each time
 * took a third of a replica's time at 1,000 clusters.
 */
import type { ObjectRef } from './objects.js';
import type { ReadTarget } from './resource/actuator.js';
import type { ResyncGrid } from './runtime/resync-grid.js';

/** The object a verified resource belongs to. */
export interface VerifiedOwner {
  uid: string;
  namespace: string;
  /** Its kind and name, to wake it with when another pass finds the resource gone (vanished). */
  object?: ObjectRef;
}

interface Entry {
  id: string;
  /** Of the object whose owner tag the resource carries, for a read by tag. */
  tagOwnerUid: string;
  generation: number;
  expiresAt: number;
  resource: unknown;
  group: string | undefined;
  /** Seen only in its parent's create answer, never verified ready (seenCreated). */
  unverified: boolean;
  /** The owner's kind and name, when known. */
  owner: ObjectRef | undefined;
}

export class VerifiedResources {
  private readonly entries = new Map<string, Entry>();
  /** Entries with a group, by group, then by `expiresAt`, by key. */
  private readonly byGroup = new Map<string, Map<number, Map<string, Entry>>>();
  /** The roles of each owner's entries. */
  private readonly rolesByOwner = new Map<string, Set<string>>();
  /** Entry keys by the resource's ID: a resource is one owner's, but a pass of another may find it gone. */
  private readonly keysById = new Map<string, Set<string>>();

  constructor(
    private readonly grid: ResyncGrid,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get<Resource>(ownerUid: string, role: string, id: string | undefined, generation: number): Resource | undefined {
    if (id === undefined) return undefined;
    const seen = this.lastSeen<Resource>(ownerUid, role, id, generation);
    if (seen && !seen.expired) return seen.resource;
    // Another ID or generation, or run out: it vouches for nothing any more.
    this.remove(ownerUid, role);
    return undefined;
  }

  /**
   * The resource as last verified at this generation, whether or not its
   * verification has run out (`expired`): for a cheaper check at resync
   * that vouches for it again (a load balancer's status tree). Undefined
   * when it was never verified here, or under another ID or generation.
   * `aheadMs` counts as run out what runs out that soon (at most a quarter
   * period, so what is vouched for again lasts to the next resync): a pass
   * starting just before its resync is due would otherwise find nothing run
   * out here and then, a moment later, read each resource on its own.
   */
  lastSeen<Resource>(
    ownerUid: string,
    role: string,
    id: string,
    generation: number,
    aheadMs = 0,
  ): { resource: Resource; expired: boolean; unverified: boolean } | undefined {
    const entry = this.entries.get(`${ownerUid}/${role}`);
    if (!entry || entry.id !== id || entry.generation !== generation) return undefined;
    return {
      resource: entry.resource as Resource,
      expired: entry.expiresAt <= this.now() + Math.min(aheadMs, this.grid.periodMs / 4),
      unverified: entry.unverified,
    };
  }

  /** `readAlong`: the group one list call can read this resource in (ReadTogether), and the owner it is tagged for. */
  set(owner: VerifiedOwner, role: string, id: string, generation: number, resource: unknown, readAlong?: { group: string; tagOwnerUid: string }): void {
    const expiresAt = this.grid.next(owner.namespace, this.now());
    this.put(owner.uid, role, {
      id,
      generation,
      expiresAt,
      resource,
      group: readAlong?.group,
      tagOwnerUid: readAlong?.tagOwnerUid ?? owner.uid,
      unverified: false,
      owner: owner.object,
    });
  }

  /**
   * A resource its parent's create made (an Octavia tree's listener or pool), as that answer
   * showed it: known at this generation but never verified ready, so it is run out from the
   * start and its own read judges it as always. What it adds is the copy lastSeen gives, by
   * which the parent's status tree may vouch for it once the parent is built.
   */
  seenCreated(owner: VerifiedOwner, role: string, id: string, generation: number, resource: unknown): void {
    this.put(owner.uid, role, {
      id,
      generation,
      expiresAt: -Infinity,
      resource,
      group: undefined,
      tagOwnerUid: owner.uid,
      unverified: true,
      owner: owner.object,
    });
  }

  /**
   * Up to `limit` resources of `group` other than `exceptId` whose
   * verification runs out within `withinMs`, the earliest first: the resyncs
   * due about now will read them.
   */
  companions(group: string, exceptId: string, withinMs: number, limit: number): ReadTarget[] {
    const until = this.now() + withinMs;
    const due = [...(this.byGroup.get(group) ?? [])].filter(([expiresAt]) => expiresAt <= until).sort(([a], [b]) => a - b);
    const found: ReadTarget[] = [];
    for (const [, entries] of due) {
      for (const entry of entries.values()) {
        if (found.length === limit) return found;
        if (entry.id !== exceptId) found.push({ id: entry.id, ownerUid: entry.tagOwnerUid });
      }
    }
    return found;
  }

  /** The object's generation moved from `from` to `to` by a change that alters nothing already verified (the reconciler's own spec write). */
  carryOver(ownerUid: string, from: number, to: number): void {
    for (const role of this.rolesByOwner.get(ownerUid) ?? []) {
      const entry = this.entries.get(`${ownerUid}/${role}`)!;
      if (entry.generation === from) entry.generation = to;
    }
  }

  invalidate(ownerUid: string, role: string): void {
    this.remove(ownerUid, role);
  }

  /**
   * OpenStack answered that the resource `id` does not exist (drift: deleted behind our back):
   * whatever vouched for it is dropped at once, whoever verified it, and those owners are
   * returned (once each) so they can be woken to heal rather than wait for their resync.
   */
  vanished(id: string): ObjectRef[] {
    const owners = new Map<string, ObjectRef>();
    for (const key of [...(this.keysById.get(id) ?? [])]) {
      const entry = this.entries.get(key)!;
      const slash = key.indexOf('/');
      const ownerUid = key.slice(0, slash);
      if (entry.owner !== undefined) owners.set(ownerUid, entry.owner);
      this.remove(ownerUid, key.slice(slash + 1));
    }
    return [...owners.values()];
  }

  /** Drops everything of an object, e.g. once it is deleted. */
  forget(ownerUid: string): void {
    for (const role of [...(this.rolesByOwner.get(ownerUid) ?? [])]) this.remove(ownerUid, role);
  }

  private put(ownerUid: string, role: string, entry: Entry): void {
    this.remove(ownerUid, role);
    const key = `${ownerUid}/${role}`;
    this.entries.set(key, entry);
    const roles = this.rolesByOwner.get(ownerUid) ?? new Set<string>();
    this.rolesByOwner.set(ownerUid, roles.add(role));
    const keys = this.keysById.get(entry.id) ?? new Set<string>();
    this.keysById.set(entry.id, keys.add(key));
    if (entry.group === undefined) return;
    const byExpiry = this.byGroup.get(entry.group) ?? new Map<number, Map<string, Entry>>();
    this.byGroup.set(entry.group, byExpiry);
    const entries = byExpiry.get(entry.expiresAt) ?? new Map<string, Entry>();
    byExpiry.set(entry.expiresAt, entries.set(key, entry));
  }

  private remove(ownerUid: string, role: string): void {
    const key = `${ownerUid}/${role}`;
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    const roles = this.rolesByOwner.get(ownerUid);
    roles?.delete(role);
    if (roles?.size === 0) this.rolesByOwner.delete(ownerUid);
    const keys = this.keysById.get(entry.id);
    keys?.delete(key);
    if (keys?.size === 0) this.keysById.delete(entry.id);
    if (entry.group === undefined) return;
    const byExpiry = this.byGroup.get(entry.group);
    const entries = byExpiry?.get(entry.expiresAt);
    entries?.delete(key);
    if (entries?.size === 0) byExpiry!.delete(entry.expiresAt);
    if (byExpiry?.size === 0) this.byGroup.delete(entry.group);
  }
}

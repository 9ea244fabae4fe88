/**
 * Resources this process has seen ready recently, so a reconcile pass does
 * not read again what the previous pass (seconds ago) just read: while a
 * cluster's load balancer builds, every pass would otherwise re-read the
 * network, subnet, router and security groups. An entry lasts until the
 * object's resync period, which keeps the promise of one GET per owned
 * resource per resync, and is bound to the object's generation so a spec
 * change re-reads and re-applies everything. A restart starts empty, so
 * crash recovery always reads the cloud.
 */
export class VerifiedResources {
  private readonly entries = new Map<string, { id: string; generation: number; expiresAt: number; resource: unknown }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get<Resource>(ownerUid: string, role: string, id: string | undefined, generation: number): Resource | undefined {
    if (id === undefined) return undefined;
    const key = `${ownerUid}/${role}`;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.id !== id || entry.generation !== generation || entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.resource as Resource;
  }

  set(ownerUid: string, role: string, id: string, generation: number, resource: unknown): void {
    this.entries.set(`${ownerUid}/${role}`, { id, generation, expiresAt: this.now() + this.ttlMs, resource });
  }

  /** The object's generation moved from `from` to `to` by a change that alters nothing already verified (the reconciler's own spec write). */
  carryOver(ownerUid: string, from: number, to: number): void {
    const prefix = `${ownerUid}/`;
    for (const [key, entry] of this.entries) if (key.startsWith(prefix) && entry.generation === from) entry.generation = to;
  }

  invalidate(ownerUid: string, role: string): void {
    this.entries.delete(`${ownerUid}/${role}`);
  }

  /** Drops everything of an object, e.g. once it is deleted. */
  forget(ownerUid: string): void {
    const prefix = `${ownerUid}/`;
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}

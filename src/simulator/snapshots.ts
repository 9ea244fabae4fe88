/**
 * What every simulated service's snapshot and restore share (ServiceState): validating a snapshot
 * read back from a state file, and refilling a store's maps from it.
 */
import { z } from 'zod';

/** `snapshot` as `schema` reads it; otherwise an error naming the service and the first thing wrong, on one line. */
export function parseSnapshot<T>(service: string, schema: z.ZodType<T>, snapshot: unknown): T {
  const parsed = schema.safeParse(snapshot);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join('.') : 'snapshot';
  throw new Error(`${service} ${where}: ${issue?.message ?? 'invalid'}`);
}

/** Empties `map` (what the factory seeded) and fills it with `items` by id, in their order, which is the order lists show. */
export function refill<T extends { id: string }>(map: Map<string, T>, items: readonly T[]): void {
  map.clear();
  for (const item of items) map.set(item.id, item);
}

/** A record of strings, as metadata, properties and extra specs are. */
export const stringRecord = z.record(z.string(), z.string());

/** Epoch milliseconds, as the stores keep their times. */
export const epochMs = z.number().int().nonnegative();

/** Empties `map` and fills it with `entries`, for maps keyed by something other than an id. */
export function refillEntries<V>(map: Map<string, V>, entries: readonly (readonly [string, V])[]): void {
  map.clear();
  for (const [key, value] of entries) map.set(key, value);
}

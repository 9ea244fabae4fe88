/**
 * This installation's id. Two management planes may reconcile into one OpenStack project (staging
 * and production, or a second team's); each tags what it creates with its own id, so that one's
 * leak audit never offers the other's resources, whose owners it cannot see, for deletion.
 *
 * The id is kept in storage beside the objects (every replica on one etcd reads the same), made by
 * whichever process starts first; a lost race reads the winner's.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { KeyExistsError, type Storage } from '../storage/interface.js';

const installationKey = '/installation';

const stored = z.object({ id: z.string().regex(/^[0-9a-f]{16}$/) });

export async function installationId(storage: Storage): Promise<string> {
  const read = async () => {
    const entry = await storage.get(installationKey);
    return entry && stored.parse(entry.value).id;
  };
  const existing = await read();
  if (existing) return existing;
  const id = randomBytes(8).toString('hex');
  try {
    await storage.create(installationKey, { id });
    return id;
  } catch (error) {
    const winner = error instanceof KeyExistsError ? await read() : undefined;
    if (!winner) throw error;
    return winner;
  }
}

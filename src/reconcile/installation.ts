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
  const existing = await storage.get(installationKey);
  if (existing) return stored.parse(existing.value).id;
  try {
    return stored.parse((await storage.create(installationKey, { id: randomBytes(8).toString('hex') })).value).id;
  } catch (error) {
    if (!(error instanceof KeyExistsError)) throw error;
    const created = await storage.get(installationKey);
    if (!created) throw error;
    return stored.parse(created.value).id;
  }
}

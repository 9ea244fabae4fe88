/**
 * The installation id every created resource is tagged with: made once per storage, the same for
 * every replica that asks (a race included), and different for another installation.
 */
import { describe, expect, it } from 'vitest';
import { installationId } from '../../src/reconcile/installation.js';
import { SqliteStorage } from '../../src/storage/sqlite.js';

describe('installationId', () => {
  it('is made once per storage, and replicas starting together read the one that won', async () => {
    const storage = await SqliteStorage.open(':memory:');
    try {
      const ids = await Promise.all([installationId(storage), installationId(storage), installationId(storage)]);
      expect(ids[0]).toMatch(/^[0-9a-f]{16}$/);
      expect(new Set(ids).size).toBe(1);
      expect(await installationId(storage)).toBe(ids[0]);
    } finally {
      await storage.close();
    }
  });

  it('differs between two installations', async () => {
    const [first, second] = await Promise.all([SqliteStorage.open(':memory:'), SqliteStorage.open(':memory:')]);
    try {
      expect(await installationId(first)).not.toBe(await installationId(second));
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});

/** settleAll: no failure ends a pass while a sibling create is still in flight. */
import { describe, expect, it } from 'vitest';
import { settleAll } from '../../src/reconcile/reconcile-pass.js';

describe('settleAll', () => {
  it('waits for every step before throwing the first failure', async () => {
    let slowFinished = false;
    const slow = new Promise<string>((resolve) =>
      setTimeout(() => {
        slowFinished = true;
        resolve('created');
      }, 50),
    );
    await expect(settleAll<unknown>([Promise.reject(new Error('network create failed')), slow])).rejects.toThrow('network create failed');
    expect(slowFinished).toBe(true);
  });

  it('returns every value in order', async () => {
    expect(await settleAll([Promise.resolve(1), 2, Promise.resolve(3)])).toEqual([1, 2, 3]);
  });
});

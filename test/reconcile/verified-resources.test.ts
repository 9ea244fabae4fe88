/** What a pass may take from memory: same ID, same generation, within the resync period. */
import { describe, expect, it } from 'vitest';
import { VerifiedResources } from '../../src/reconcile/verified-resources.js';

describe('VerifiedResources', () => {
  it('answers only for the same ID and generation before the period ends', () => {
    let now = 0;
    const verified = new VerifiedResources(60_000, () => now);
    verified.set('uid', 'network', 'n1', 3, { id: 'n1' });
    expect(verified.get('uid', 'network', 'n1', 3)).toEqual({ id: 'n1' });
    expect(verified.get('uid', 'network', undefined, 3)).toBeUndefined();
    expect(verified.get('uid', 'network', 'n2', 3)).toBeUndefined();
    verified.set('uid', 'network', 'n1', 3, { id: 'n1' });
    expect(verified.get('uid', 'network', 'n1', 4)).toBeUndefined();
    verified.set('uid', 'network', 'n1', 3, { id: 'n1' });
    now += 60_000;
    expect(verified.get('uid', 'network', 'n1', 3)).toBeUndefined();
  });

  it('carries an object\'s entries of one generation over to the next', () => {
    const verified = new VerifiedResources(60_000);
    verified.set('a', 'network', 'n1', 1, { id: 'n1' });
    verified.set('a', 'subnet', 's1', 2, { id: 's1' });
    verified.set('b', 'network', 'n2', 1, { id: 'n2' });
    verified.carryOver('a', 1, 2);
    expect(verified.get('a', 'network', 'n1', 2)).toEqual({ id: 'n1' });
    expect(verified.get('a', 'subnet', 's1', 2)).toEqual({ id: 's1' });
    expect(verified.get('b', 'network', 'n2', 2)).toBeUndefined();
  });

  it('forgets one role, or everything of an object', () => {
    const verified = new VerifiedResources(60_000);
    verified.set('a', 'network', 'n1', 1, {});
    verified.set('a', 'subnet', 's1', 1, {});
    verified.set('b', 'network', 'n2', 1, {});
    verified.invalidate('a', 'network');
    expect(verified.get('a', 'network', 'n1', 1)).toBeUndefined();
    expect(verified.get('a', 'subnet', 's1', 1)).toBeDefined();
    verified.forget('a');
    expect(verified.get('a', 'subnet', 's1', 1)).toBeUndefined();
    expect(verified.get('b', 'network', 'n2', 1)).toBeDefined();
  });
});

import { describe, expect, it } from 'vitest';
import { applyCtx, config, ctx, newManager, specOf, T0, T1, widget } from './fixtures.js';

/**
 * Item order after merging an applied set into a live one. Expected orders
 * are structured-merge-diff's documented results: live-only items keep their
 * place, applied items follow the applied order, and applied-only items go
 * right before the next shared item.
 */
const setCases: [live: string[], applied: string[], merged: string[]][] = [
  [
    ['a', 'b', 'c'],
    ['a', 'b'],
    ['a', 'b', 'c'],
  ],
  [
    ['a', 'b'],
    ['a', 'b', 'c'],
    ['a', 'b', 'c'],
  ],
  [['a', 'b', 'c'], [], ['a', 'b', 'c']],
  [
    ['a', 'b'],
    ['b', 'a'],
    ['b', 'a'],
  ],
  [
    ['a', 'b', 'c'],
    ['d', 'e', 'f'],
    ['a', 'b', 'c', 'd', 'e', 'f'],
  ],
  [
    ['a', 'b', 'c', 'g', 'f'],
    ['c', 'd', 'e', 'f'],
    ['a', 'b', 'c', 'g', 'd', 'e', 'f'],
  ],
  [
    ['c', 'd', 'e', 'f'],
    ['a', 'c', 'e'],
    ['a', 'c', 'd', 'e', 'f'],
  ],
  [
    ['a', 'b', 'c', 'x', 'y', 'z'],
    ['d', 'e', 'f', 'x', 'y', 'z'],
    ['a', 'b', 'c', 'd', 'e', 'f', 'x', 'y', 'z'],
  ],
  [
    ['a', 'b', 'c', 'd'],
    ['d', 'e', 'f', 'a'],
    ['b', 'c', 'd', 'e', 'f', 'a'],
  ],
  [
    ['c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'],
    ['2', 'h', '3', 'e', '4', 'k', 'l'],
    ['c', 'd', 'f', 'g', '2', 'h', 'i', 'j', '3', 'e', '4', 'k', 'l'],
  ],
  [
    ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'],
    ['1', 'b', '2', 'h', '3', 'e', '4', 'k', 'l'],
    ['a', '1', 'b', 'c', 'd', 'f', 'g', '2', 'h', 'i', 'j', '3', 'e', '4', 'k', 'l'],
  ],
  // Duplicates in the live list survive unless the applied list names them
  // (collapsing them changes the creator's item, hence force below).
  [['a', 'b', 'b'], ['c'], ['a', 'b', 'b', 'c']],
  [['a', 'b', 'b'], ['b'], ['a', 'b']],
  [
    ['a', 'b', 'c', 'd', 'e', 'c'],
    ['1', 'b', '2', 'c', 'e', 'd'],
    ['a', '1', 'b', '2', 'c', 'e', 'd'],
  ],
  [
    ['c', 'a', 'g', 'f', 'c', 'a'],
    ['c', 'f', 'a', 'g'],
    ['c', 'f', 'a', 'g'],
  ],
];

describe('set merge order', () => {
  it.each(setCases)('%j + %j', (live, applied, merged) => {
    const fm = newManager();
    const obj = fm.update(undefined, widget({ tags: live }), ctx('creator', T0));
    const out = fm.apply(obj, config({ tags: applied }), applyCtx('applier', T1, true));
    expect(specOf(out).tags).toEqual(merged);
  });
});

describe('map-list merge order', () => {
  const port = (name: string) => ({ name, port: 1 });
  it.each([
    [['b'], ['a', 'b', 'c'], ['a', 'b', 'c']],
    [
      ['a', 'b', 'c'],
      ['c', 'b'],
      ['a', 'c', 'b'],
    ],
    [
      ['a', 'b', 'c'],
      ['c', 'a'],
      ['b', 'c', 'a'],
    ],
  ])('%j + %j', (live, applied, merged) => {
    const fm = newManager();
    const obj = fm.update(undefined, widget({ ports: live.map(port) }), ctx('creator', T0));
    const out = fm.apply(obj, config({ ports: applied.map(port) }), applyCtx('applier', T1));
    expect(specOf(out).ports).toEqual(merged.map(port));
  });
});

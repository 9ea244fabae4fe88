/**
 * Strategic merge patch on a built-in-like object: maps merge, metadata
 * finalizers merge as a set with kubectl's directives, ownerReferences
 * (merged by uid in kube) are refused, other lists are replaced. Expected
 * orders are the ones kube-apiserver produces for the same patches.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/apiserver/errors.js';
import { applyStrategicMergePatch } from '../../../src/apiserver/patch/strategic.js';
import type { StructuralSchema } from '../../../src/apiserver/schema/structural-schema.js';
import { objectMetaSchema } from '../../../src/apiserver/schema/objectmeta.js';

const schema: StructuralSchema = {
  type: 'object',
  properties: {
    metadata: objectMetaSchema,
    data: { type: 'object', additionalProperties: { type: 'string' } },
    ports: { type: 'array', items: { type: 'integer' } },
    source: { type: 'object', 'x-kubernetes-patch-strategy': 'retainKeys', properties: { a: { type: 'string' }, b: { type: 'string' } } },
  },
};

function finalizers(current: string[] | undefined, patch: Record<string, unknown>): unknown {
  const document = current ? { metadata: { name: 'x', finalizers: current } } : { metadata: { name: 'x' } };
  const patched = applyStrategicMergePatch(document, { metadata: patch }, schema);
  return (patched.metadata as Record<string, unknown>).finalizers;
}

function failure(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('the patch was accepted');
}

describe('maps and scalars', () => {
  it('merges maps, deletes keys set to null and replaces scalars', () => {
    const document = { metadata: { name: 'x', labels: { a: '1', b: '2' } }, data: { k: 'dg==' } };
    const patched = applyStrategicMergePatch(document, { metadata: { labels: { b: null, c: '3' } }, data: { k: 'dzI=' } }, schema);
    expect(patched).toEqual({ metadata: { name: 'x', labels: { a: '1', c: '3' } }, data: { k: 'dzI=' } });
  });

  it('leaves its arguments alone', () => {
    const document = { data: { k: 'dg==' } };
    const patch = { data: { k: null, $patch: 'replace' } };
    applyStrategicMergePatch(document, patch, schema);
    expect(document).toEqual({ data: { k: 'dg==' } });
    expect(patch).toEqual({ data: { k: null, $patch: 'replace' } });
  });

  it('replaces a map with $patch: replace and empties it with $patch: delete', () => {
    const document = { data: { a: 'YQ==', b: 'Yg==' } };
    expect(applyStrategicMergePatch(document, { data: { $patch: 'replace', c: 'Yw==' } }, schema)).toEqual({ data: { c: 'Yw==' } });
    expect(applyStrategicMergePatch(document, { data: { $patch: 'delete' } }, schema)).toEqual({ data: {} });
  });

  it('refuses an unknown $patch without quoting the map', () => {
    const error = failure(() => applyStrategicMergePatch({}, { data: { $patch: 'merge', key: 'c2VjcmV0' } }, schema));
    expect(error.code).toBe(400);
    expect(error.message).toBe('unknown patch type "merge" in the map at data');
  });

  it('clears keys $retainKeys does not list, and refuses to set an unlisted key', () => {
    const document = { source: { a: 'x', b: 'y' } };
    expect(applyStrategicMergePatch(document, { source: { $retainKeys: ['b'], b: 'z' } }, schema)).toEqual({ source: { b: 'z' } });
    const unlisted = failure(() => applyStrategicMergePatch(document, { source: { $retainKeys: ['b'], a: 'z' } }, schema));
    expect(unlisted.code).toBe(422);
    expect(unlisted.toStatus().details?.causes).toEqual([expect.objectContaining({ field: 'source.a' })]);
    expect(failure(() => applyStrategicMergePatch(document, { source: { $retainKeys: 'b' } }, schema)).code).toBe(400);
  });

  it('needs a JSON object', () => {
    expect(failure(() => applyStrategicMergePatch({}, ['x'], schema)).code).toBe(400);
  });
});

describe('lists', () => {
  it('replaces lists without a merge strategy', () => {
    expect(applyStrategicMergePatch({ ports: [1, 2] }, { ports: [3] }, schema)).toEqual({ ports: [3] });
  });

  it('adds finalizers, placing new ones before the current ones as kube does', () => {
    expect(finalizers(['a', 'b'], { finalizers: ['c'] })).toEqual(['c', 'a', 'b']);
    expect(finalizers(['a', 'b'], { finalizers: ['b', 'c'] })).toEqual(['a', 'b', 'c']);
    expect(finalizers(undefined, { finalizers: ['a', 'a'] })).toEqual(['a']);
  });

  it('removes with $deleteFromPrimitiveList and orders with $setElementOrder, as kubectl edit sends them', () => {
    const patch = { '$deleteFromPrimitiveList/finalizers': ['b', 'c'], '$setElementOrder/finalizers': ['a', 'd'], finalizers: ['d'] };
    expect(finalizers(['a', 'b', 'c'], patch)).toEqual(['a', 'd']);
  });

  it('keeps items only the server knows in their place among the ordered ones', () => {
    expect(finalizers(['a', 'd'], { '$setElementOrder/finalizers': ['a', 'e'], finalizers: ['e'] })).toEqual(['a', 'e', 'd']);
    expect(finalizers(['x', 'a', 'b'], { '$setElementOrder/finalizers': ['b', 'a'] })).toEqual(['x', 'b', 'a']);
  });

  it('does not create a list for directives alone, and deletes one set to null', () => {
    expect(finalizers(undefined, { '$deleteFromPrimitiveList/finalizers': ['a'] })).toBeUndefined();
    expect(finalizers(['a'], { finalizers: null, '$setElementOrder/finalizers': ['a'] })).toBeUndefined();
  });

  it('refuses lists merged by key, naming the field', () => {
    const ownerReferences = [{ apiVersion: 'v1', kind: 'Secret', name: 'o', uid: '1' }];
    const error = failure(() => applyStrategicMergePatch({ metadata: {} }, { metadata: { ownerReferences } }, schema));
    expect(error.code).toBe(422);
    expect(error.message).toContain('metadata.ownerReferences');
    expect(error.message).toContain('--type=merge');
    const ordered = failure(() => applyStrategicMergePatch({}, { metadata: { '$setElementOrder/ownerReferences': [{ uid: '1' }] } }, schema));
    expect(ordered.code).toBe(422);
    expect(applyStrategicMergePatch({ metadata: { ownerReferences } }, { metadata: { ownerReferences: null } }, schema)).toEqual({ metadata: {} });
  });

  it('refuses list directives on lists that are replaced, and maps in a merged list of scalars', () => {
    expect(failure(() => applyStrategicMergePatch({ ports: [1] }, { '$deleteFromPrimitiveList/ports': [1] }, schema)).code).toBe(422);
    expect(failure(() => finalizers(['a'], { finalizers: [{ name: 'b' }] })).code).toBe(422);
    expect(failure(() => finalizers(['a'], { '$setElementOrder/finalizers': 'a' })).code).toBe(400);
  });
});

/**
 * Schema-guided operations on JSON objects, with structured-merge-diff's
 * semantics: the field set of an object, the comparison of two objects, the
 * merge of an applied configuration, and the removal of fields.
 *
 * `undefined` means "absent" throughout; `null` is a value.
 */
import { FieldSet } from './fieldset.js';
import { pathToString, serializePathElement, type Path, type PathElement } from './path.js';
import { fieldType, handlerFor, listItemElement, sameAtom, SchemaMismatch, shapeOf, type Atom, type ListType, type MapType } from './schema.js';
import { clone, isEmptyMap } from './value.js';
import { isJsonObject, jsonEqual } from '../../storage/json.js';
import type { JsonObject } from '../../storage/interface.js';

/**
 * The fields an object sets. Struct fields only appear through their leaves
 * (or as a leaf when null or {}), while map entries, list items and atomic
 * values are members themselves.
 */
export function toFieldSet(value: unknown, atom: Atom): FieldSet {
  const set = new FieldSet();
  collect(value, atom, [], set);
  return set;
}

function collect(value: unknown, atom: Atom, path: Path, set: FieldSet): void {
  switch (handlerFor(atom, shapeOf(atom, value))) {
    case 'scalar':
      set.insert(path);
      return;
    case 'map': {
      const type = atom.map!;
      if (type.atomic) set.insert(path);
      else if (isJsonObject(value)) {
        for (const [key, child] of present(value)) {
          const childPath = [...path, { field: key }];
          collect(child, fieldType(type, key), childPath, set);
          if (child === null || isEmptyMap(child) || !type.fields.has(key)) set.insert(childPath);
        }
      }
      return;
    }
    case 'list': {
      const type = atom.list!;
      if (type.relationship === 'atomic') set.insert(path);
      else if (Array.isArray(value)) {
        const items = groupItems(type, value, path);
        for (const group of items.values()) {
          const itemPath = [...path, group.pe];
          // Duplicated items are tracked as a whole, never field by field.
          if (group.items.length === 1) collect(group.items[0], type.element, itemPath, set);
          set.insert(itemPath);
        }
      }
      return;
    }
  }
}

interface ItemGroup {
  pe: PathElement;
  items: unknown[];
}

/** List items grouped by identity, in order of first appearance. */
function groupItems(type: ListType, list: readonly unknown[], path: Path): Map<string, ItemGroup> {
  const groups = new Map<string, ItemGroup>();
  list.forEach((item, i) => {
    const pe = listItemElement(type, item, path, i);
    const key = serializePathElement(pe);
    const group = groups.get(key);
    if (group) group.items.push(item);
    else groups.set(key, { pe, items: [item] });
  });
  return groups;
}

function* present(map: JsonObject): Generator<[string, unknown]> {
  for (const [key, value] of Object.entries(map)) if (value !== undefined) yield [key, value];
}

/**
 * Throws SchemaMismatch where kube cannot type an object: list items without
 * identity, and duplicate items unless allowed (kube tolerates them in stored
 * objects, not in applied configurations).
 */
export function validate(value: unknown, atom: Atom, allowDuplicates: boolean, path: Path = []): void {
  const shape = handlerFor(atom, shapeOf(atom, value));
  if (shape === 'map' && !atom.map!.atomic && isJsonObject(value)) {
    for (const [key, child] of present(value)) validate(child, fieldType(atom.map!, key), allowDuplicates, [...path, { field: key }]);
  } else if (shape === 'list' && atom.list!.relationship !== 'atomic' && Array.isArray(value)) {
    const groups = groupItems(atom.list!, value, path);
    for (const group of groups.values()) {
      if (group.items.length > 1 && !allowDuplicates) {
        throw new SchemaMismatch(`${pathToString(path)}: duplicate entries for key ${pathToString([group.pe])}`);
      }
      for (const item of group.items) validate(item, atom.list!.element, allowDuplicates, [...path, group.pe]);
    }
  }
}

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/** What changed from `before` to `after`: containers that appear or vanish count too. */
export function compare(before: unknown, after: unknown, atom: Atom): Comparison {
  const result = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  compareNode(before, after, atom, [], result);
  return result;
}

function compareNode(l: unknown, r: unknown, atom: Atom, path: Path, out: Comparison): void {
  // Equal subtrees change nothing: a one-label patch walks 7,700 equal tags once, not item by item.
  if (jsonEqual(l, r)) return;
  const ls = shapeOf(atom, l);
  const rs = shapeOf(atom, r);
  const leaf = { reached: false };
  if (r === undefined) compareAs(handlerFor(atom, ls), atom, l, r, path, out, leaf);
  else if (l === undefined || sameAtom(atom, ls, rs)) compareAs(handlerFor(atom, rs), atom, l, r, path, out, leaf);
  else {
    compareAs(handlerFor(atom, ls), atom, l, r, path, out, { reached: false });
    compareAs(handlerFor(atom, rs), atom, l, r, path, out, leaf);
  }
  if (!leaf.reached) {
    if (l === undefined) out.added.insert(path);
    else if (r === undefined) out.removed.insert(path);
  }
}

function compareAs(shape: 'map' | 'scalar' | 'list', atom: Atom, l: unknown, r: unknown, path: Path, out: Comparison, leaf: { reached: boolean }): void {
  const compareLeaf = (): void => {
    if (leaf.reached) return;
    leaf.reached = true;
    if (l === undefined) out.added.insert(path);
    else if (r === undefined) out.removed.insert(path);
    else if (!jsonEqual(l, r)) out.modified.insert(path);
  };
  if (shape === 'scalar') return compareLeaf();
  if (shape === 'map') {
    const type = atom.map!;
    const lm = isJsonObject(l) ? l : undefined;
    const rm = isJsonObject(r) ? r : undefined;
    if (type.atomic || (isEmpty(lm) && isEmpty(rm))) return compareLeaf();
    for (const key of unionKeys(lm, rm)) compareNode(lm?.[key], rm?.[key], fieldType(type, key), [...path, { field: key }], out);
    return;
  }
  const type = atom.list!;
  const ll = Array.isArray(l) ? l : undefined;
  const rl = Array.isArray(r) ? r : undefined;
  if (type.relationship === 'atomic' || ((ll?.length ?? 0) === 0 && (rl?.length ?? 0) === 0)) return compareLeaf();
  const before = groupItems(type, ll ?? [], path);
  const after = groupItems(type, rl ?? [], path);
  for (const key of new Set([...before.keys(), ...after.keys()])) {
    const pe = (before.get(key) ?? after.get(key))!.pe;
    const lItems = before.get(key)?.items ?? [];
    const rItems = after.get(key)?.items ?? [];
    const itemPath = [...path, pe];
    if (lItems.length <= 1 && rItems.length <= 1) compareNode(lItems[0], rItems[0], type.element, itemPath, out);
    else if (lItems.length >= 2 && rItems.length >= 2) {
      if (!jsonEqual(lItems, rItems)) out.modified.insert(itemPath);
    } else if (lItems.length >= 2) {
      if (rItems.length > 0) compareNode(undefined, rItems[0], type.element, itemPath, out);
      out.removed.insert(itemPath);
    } else {
      if (lItems.length > 0) compareNode(lItems[0], undefined, type.element, itemPath, out);
      out.added.insert(itemPath);
    }
  }
}

function isEmpty(map: JsonObject | undefined): boolean {
  return map === undefined || Object.keys(map).length === 0;
}

function unionKeys(a: JsonObject | undefined, b: JsonObject | undefined): string[] {
  const keys = new Set<string>();
  for (const map of [a, b]) if (map) for (const [key] of present(map)) keys.add(key);
  return [...keys];
}

/**
 * Merges an applied configuration into the live object: struct fields and
 * granular maps per key, set and map lists per item, everything else
 * (scalars, atomic lists and maps) replaced by the applied value.
 */
export function merge(live: unknown, applied: unknown, atom: Atom): unknown {
  // When the two sides have different shapes the applied one wins.
  const shape = shapeOf(atom, applied === undefined ? live : applied);
  return mergeAs(handlerFor(atom, shape), atom, live, applied);
}

function mergeAs(shape: 'map' | 'scalar' | 'list', atom: Atom, l: unknown, r: unknown): unknown {
  const leaf = (): unknown => clone(r !== undefined ? r : l);
  if (shape === 'scalar') return leaf();
  if (shape === 'map') {
    const type: MapType = atom.map!;
    const lm = isJsonObject(l) ? l : undefined;
    const rm = isJsonObject(r) ? r : undefined;
    if (type.atomic || (isEmpty(lm) && isEmpty(rm))) return leaf();
    const out: JsonObject = {};
    for (const key of unionKeys(lm, rm)) {
      const value = merge(lm?.[key], rm?.[key], fieldType(type, key));
      if (value !== undefined) out[key] = value;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  const type = atom.list!;
  const ll = Array.isArray(l) ? l : undefined;
  const rl = Array.isArray(r) ? r : undefined;
  if (type.relationship === 'atomic' || ((ll?.length ?? 0) === 0 && (rl?.length ?? 0) === 0)) return leaf();
  const out = mergeItems(type, ll ?? [], rl ?? []).filter((item) => item !== undefined);
  return out.length > 0 ? out : undefined;
}

/**
 * Item order of a merged list: items only in the live list keep their place,
 * items of the applied list come in the applied order, and each item only in
 * the applied list is placed right before the next item both lists share.
 */
function mergeItems(type: ListType, live: readonly unknown[], applied: readonly unknown[]): unknown[] {
  const lKeys = live.map((item, i) => serializePathElement(listItemElement(type, item, [], i)));
  const rKeys = applied.map((item, i) => serializePathElement(listItemElement(type, item, [], i)));
  // A duplicated live item has no single value to merge with; the applied item replaces it.
  const liveByKey = new Map<string, unknown>();
  lKeys.forEach((key, i) => {
    liveByKey.set(key, liveByKey.has(key) ? null : live[i]);
  });
  const appliedByKey = new Map<string, unknown>();
  rKeys.forEach((key, i) => {
    appliedByKey.set(key, applied[i]);
  });

  const shared = rKeys.filter((key) => liveByKey.has(key));
  let nextShared = 0;
  const emitted = new Set<string>();
  const out: unknown[] = [];
  const emitApplied = (key: string): void => {
    emitted.add(key);
    out.push(merge(liveByKey.get(key), appliedByKey.get(key), type.element));
    if (shared[nextShared] === key) nextShared++;
  };

  let i = 0;
  let j = 0;
  while (i < lKeys.length || j < rKeys.length) {
    if (i < lKeys.length && j < rKeys.length) {
      if (lKeys[i] === rKeys[j]) {
        emitApplied(rKeys[j]!);
        i++;
        j++;
        continue;
      }
      // A shared item waits for its turn in the applied order.
      if (appliedByKey.has(lKeys[i]!) && nextShared < shared.length && shared[nextShared] !== lKeys[i]) {
        i++;
        continue;
      }
    }
    if (i < lKeys.length) {
      if (!appliedByKey.has(lKeys[i]!)) {
        out.push(merge(live[i], undefined, type.element));
        i++;
        continue;
      }
      if (emitted.has(lKeys[i]!)) i++;
    }
    if (j < rKeys.length) {
      emitApplied(rKeys[j]!);
      j++;
    }
  }
  return out;
}

/**
 * Removes the members of `set` (with everything below them) from a value.
 * A container emptied this way is dropped.
 */
export function removeItems(value: unknown, set: FieldSet, atom: Atom): unknown {
  switch (handlerFor(atom, shapeOf(atom, value))) {
    case 'scalar':
      return value;
    case 'map': {
      if (!isJsonObject(value)) return value;
      if (Object.keys(value).length === 0 || atom.map!.atomic) return undefined;
      const out: JsonObject = {};
      for (const [key, child] of present(value)) {
        const pe = { field: key };
        if (set.hasMember(pe)) continue;
        const below = set.withPrefix(pe);
        const kept = below.isEmpty() ? child : removeItems(child, below, fieldType(atom.map!, key));
        if (kept !== undefined) out[key] = kept;
      }
      return Object.keys(out).length > 0 ? out : undefined;
    }
    case 'list': {
      if (!Array.isArray(value)) return value;
      if (value.length === 0 || atom.list!.relationship === 'atomic') return undefined;
      const out: unknown[] = [];
      value.forEach((item, i) => {
        const pe = listItemElement(atom.list!, item, [], i);
        if (set.hasMember(pe)) return;
        const below = set.withPrefix(pe);
        const kept = below.isEmpty() ? item : removeItems(item, below, atom.list!.element);
        if (kept !== undefined) out.push(kept);
      });
      return out.length > 0 ? out : undefined;
    }
  }
}

/**
 * Adds declared struct fields that have members below them as members
 * themselves, so that removing such a field removes it whole.
 */
export function ensureNamedFieldsAreMembers(set: FieldSet, atom: Atom): FieldSet {
  return set.rebuild<Atom | undefined>(atom, (pe, member, context) => {
    if ('field' in pe && context?.map) {
      const declared = context.map.fields.get(pe.field);
      return { member: member || declared !== undefined, context: declared?.type ?? context.map.element };
    }
    if ('key' in pe && context?.list) return { member, context: context.list.element };
    return { member, context: undefined };
  });
}

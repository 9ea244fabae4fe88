/**
 * A set of field paths, stored as a trie keyed by path element. A node can be
 * a member (the path itself is in the set) and have children at once; that
 * is what FieldsV1 encodes with the "." key.
 *
 * Set operations share subtrees with their operands, so a set is only
 * inserted into while it is being built. Its FieldsV1 encoding is kept with
 * it and shared (frozen) by every encoding of a set holding it: a one-label
 * write to an object of 60,000 keys encodes the label's subtree, not the keys.
 */
import { comparePathElements, parsePathElement, PathElementSyntaxError, serializePathElement, type Path, type PathElement } from './path.js';
import { isJsonObject } from '../../storage/json.js';

const encodings = new WeakMap<FieldSet, Record<string, unknown>>();

interface SetNode {
  readonly pe: PathElement;
  member: boolean;
  children: FieldSet;
}

export class FieldSet {
  private readonly nodes = new Map<string, SetNode>();

  static of(...paths: Path[]): FieldSet {
    const set = new FieldSet();
    for (const path of paths) set.insert(path);
    return set;
  }

  insert(path: Path): void {
    if (path.length === 0) return;
    const node = this.node(path[0]!);
    if (path.length === 1) node.member = true;
    else node.children.insert(path.slice(1));
  }

  /** Whether `pe` itself (a one-element path) is a member. */
  hasMember(pe: PathElement): boolean {
    return this.nodes.get(serializePathElement(pe))?.member ?? false;
  }

  has(path: Path): boolean {
    if (path.length === 0) return false;
    const node = this.nodes.get(serializePathElement(path[0]!));
    if (!node) return false;
    return path.length === 1 ? node.member : node.children.has(path.slice(1));
  }

  /** The subset below `pe`, with `pe` stripped from the paths. */
  withPrefix(pe: PathElement): FieldSet {
    return this.nodes.get(serializePathElement(pe))?.children ?? new FieldSet();
  }

  isEmpty(): boolean {
    return this.nodes.size === 0;
  }

  union(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [key, n] of this.nodes) {
      const o = other.nodes.get(key);
      out.put(key, n.pe, n.member || (o?.member ?? false), o ? n.children.union(o.children) : n.children);
    }
    for (const [key, o] of other.nodes) if (!this.nodes.has(key)) out.put(key, o.pe, o.member, o.children);
    return out;
  }

  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [key, n] of this.nodes) {
      const o = other.nodes.get(key);
      if (o) out.put(key, n.pe, n.member && o.member, n.children.intersection(o.children));
    }
    return out;
  }

  /** Removes other's members; a member of other does not remove this set's paths below it. */
  difference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [key, n] of this.nodes) {
      const o = other.nodes.get(key);
      if (!o) out.put(key, n.pe, n.member, n.children);
      else out.put(key, n.pe, n.member && !o.member, n.children.difference(o.children));
    }
    return out;
  }

  /** Like difference, but a member of other also removes everything below it. */
  recursiveDifference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [key, n] of this.nodes) {
      const o = other.nodes.get(key);
      if (!o) out.put(key, n.pe, n.member, n.children);
      else if (!o.member) out.put(key, n.pe, n.member, n.children.recursiveDifference(o.children));
    }
    return out;
  }

  /**
   * Rebuilds the set node by node: `visit` gets each element and decides its
   * membership and the type context for its children.
   */
  rebuild<C>(context: C, visit: (pe: PathElement, member: boolean, context: C) => { member: boolean; context: C }): FieldSet {
    const out = new FieldSet();
    for (const [key, n] of this.nodes) {
      const next = visit(n.pe, n.member, context);
      out.put(key, n.pe, next.member, n.children.rebuild(next.context, visit));
    }
    return out;
  }

  /** Kube's iteration order: this level's members first, then each child subtree, all sorted. */
  paths(prefix: Path = []): Path[] {
    const sorted = this.sorted();
    const out: Path[] = sorted.filter((n) => n.member).map((n) => [...prefix, n.pe]);
    for (const n of sorted) out.push(...n.children.paths([...prefix, n.pe]));
    return out;
  }

  toFieldsV1(): Record<string, unknown> {
    const known = encodings.get(this);
    if (known) return known;
    const out: Record<string, unknown> = {};
    for (const n of this.sorted()) {
      const key = serializePathElement(n.pe);
      if (n.children.isEmpty()) out[key] = Object.freeze({});
      else out[key] = n.member ? Object.freeze({ '.': Object.freeze({}), ...n.children.toFieldsV1() }) : n.children.toFieldsV1();
    }
    encodings.set(this, Object.freeze(out));
    return out;
  }

  /** Throws PathElementSyntaxError on a malformed document. */
  static fromFieldsV1(fields: unknown): FieldSet {
    const set = new FieldSet();
    if (!isJsonObject(fields)) throw new PathElementSyntaxError('fieldsV1 must be an object');
    for (const [key, value] of Object.entries(fields)) {
      if (key === '.') continue;
      const pe = parsePathElement(key);
      if (!pe) continue;
      const children = FieldSet.fromFieldsV1(value);
      // A node without (known) children is a member, whether or not it says ".".
      const member = children.isEmpty() || (isJsonObject(value) && '.' in value);
      const canonical = serializePathElement(pe);
      const existing = set.nodes.get(canonical);
      set.put(canonical, pe, member || (existing?.member ?? false), existing ? existing.children.union(children) : children);
    }
    return set;
  }

  private node(pe: PathElement): SetNode {
    const key = serializePathElement(pe);
    let node = this.nodes.get(key);
    if (!node) {
      node = { pe, member: false, children: new FieldSet() };
      this.nodes.set(key, node);
    }
    return node;
  }

  /** Adds a node unless it would be empty: empty nodes would encode as members. */
  private put(key: string, pe: PathElement, member: boolean, children: FieldSet): void {
    if (member || !children.isEmpty()) this.nodes.set(key, { pe, member, children });
  }

  private sorted(): SetNode[] {
    return [...this.nodes.values()].sort((a, b) => comparePathElements(a.pe, b.pe));
  }
}

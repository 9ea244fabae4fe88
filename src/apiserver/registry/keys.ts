/**
 * Where an object lives in storage: kube's etcd layout, `/registry/<group>/<plural>/<namespace>/<name>`,
 * without the group segment for core kinds (kube keeps Secrets under `/registry/secrets/`) and
 * without the namespace for cluster-scoped kinds. This module is the one place that spells it: the
 * store, the reconcilers' clients, the computed kinds and the dashboard's change stream ask it.
 */
import type { ObjectName } from '../../storage/interface.js';

/** What of a kind its keys depend on (a KindDefinition is one). */
export interface KeyedKind {
  readonly group: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

export class KindKeys {
  /** The prefix of every object of the kind, ending in '/'. */
  readonly root: string;

  constructor(private readonly kind: KeyedKind) {
    this.root = kind.group === '' ? `/registry/${kind.plural}/` : `/registry/${kind.group}/${kind.plural}/`;
  }

  /** The prefix of one namespace's objects, or of every object of the kind (no namespace, or a cluster-scoped kind). */
  prefix(namespace?: string): string {
    return this.kind.namespaced && namespace ? `${this.root}${namespace}/` : this.root;
  }

  key(namespace: string | undefined, name: string): string {
    return `${this.prefix(namespace)}${name}`;
  }

  /** The namespace and name behind a key of this kind; undefined for a key of another kind. */
  parse(key: string): ObjectName | undefined {
    if (!key.startsWith(this.root)) return undefined;
    const rest = key.slice(this.root.length);
    if (!this.kind.namespaced) return rest === '' ? undefined : { namespace: '', name: rest };
    const slash = rest.indexOf('/');
    return slash <= 0 || slash === rest.length - 1 ? undefined : { namespace: rest.slice(0, slash), name: rest.slice(slash + 1) };
  }

  /** As `parse`, throwing for a key of another kind. */
  nameOf(key: string): ObjectName {
    const name = this.parse(key);
    if (!name) throw new Error(`${key} is not a key of ${this.kind.plural}`);
    return name;
  }
}

export function keysOf(kind: KeyedKind): KindKeys {
  return new KindKeys(kind);
}

/** The namespace of a key under `root` (a kind's prefix); '' for a cluster-scoped object. */
export function namespaceOfKey(root: string, key: string): string {
  const rest = key.slice(root.length);
  const slash = rest.lastIndexOf('/');
  return slash < 0 ? '' : rest.slice(0, slash);
}

/**
 * The set of kinds this server serves, indexed the ways requests look them up.
 * Definitions are checked once at startup so a bad kind fails fast, not per request.
 */
import { compareStrings } from '../fieldmanager/value.js';
import { structuralSchemaOf } from '../schema/structural.js';
import type { KindDefinition, KindVersion, Verb } from './kind.js';

export const allVerbs: readonly Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
export const statusVerbs: readonly Verb[] = ['get', 'patch', 'update'];

/** A kind as served in one group-version. */
export interface ServedResource {
  definition: KindDefinition;
  version: KindVersion;
  groupVersion: string;
}

export interface GroupInfo {
  name: string;
  /** Served versions, preferred first. */
  versions: string[];
}

export class Registry {
  readonly kinds: readonly KindDefinition[];
  private readonly byResource = new Map<string, ServedResource>();

  constructor(kinds: KindDefinition[]) {
    for (const kind of kinds) checkDefinition(kind);
    this.kinds = kinds;
    for (const definition of kinds) {
      for (const version of definition.versions.filter((v) => v.served)) {
        const key = resourceKey(definition.group, version.name, definition.plural);
        if (this.byResource.has(key)) throw new Error(`duplicate resource ${key}`);
        this.byResource.set(key, { definition, version, groupVersion: groupVersionOf(definition.group, version.name) });
      }
    }
  }

  lookup(group: string, version: string, plural: string): ServedResource | undefined {
    return this.byResource.get(resourceKey(group, version, plural));
  }

  /** Resources served in one group-version, in registration order. */
  resourcesIn(group: string, version: string): ServedResource[] {
    return [...this.byResource.values()].filter((r) => r.definition.group === group && r.version.name === version);
  }

  /**
   * Groups in registration order, the legacy core group ("") included. Versions are ordered by Kubernetes version
   * priority (GA > beta > alpha, then by number), which is how clients pick
   * the preferred one.
   */
  groups(): GroupInfo[] {
    const versionsByGroup = new Map<string, Set<string>>();
    for (const { definition, version } of this.byResource.values()) {
      const set = versionsByGroup.get(definition.group) ?? new Set<string>();
      set.add(version.name);
      versionsByGroup.set(definition.group, set);
    }
    return [...versionsByGroup].map(([name, versions]) => ({ name, versions: [...versions].sort(compareKubeVersions) }));
  }
}

/** The apiVersion of objects of a group-version: just the version in the legacy core group ("v1"). */
export function groupVersionOf(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

export function verbsOf(definition: KindDefinition): Verb[] {
  return [...(definition.verbs ?? allVerbs)].sort();
}

export function listKindOf(definition: KindDefinition): string {
  return definition.listKind ?? `${definition.kind}List`;
}

export function storageVersionOf(definition: KindDefinition): KindVersion {
  const version = definition.versions.find((v) => v.storage);
  if (!version) throw new Error(`${definition.kind}: no storage version`);
  return version;
}

function resourceKey(group: string, version: string, plural: string): string {
  return `${group}/${version}/${plural}`;
}

function checkDefinition(kind: KindDefinition): void {
  const storage = kind.versions.filter((v) => v.storage);
  if (storage.length !== 1) throw new Error(`${kind.kind}: exactly one storage version required, found ${storage.length}`);
  if (!kind.versions.some((v) => v.served)) throw new Error(`${kind.kind}: no served version`);
  if (kind.versions.filter((v) => v.served).length > 1 && !kind.converter) {
    throw new Error(`${kind.kind}: several served versions need a converter`);
  }
  // Non-structural schemas throw here, at startup, rather than on the first request.
  for (const version of kind.versions) structuralSchemaOf(version);
  if (!/^[a-z][a-z0-9]*$/.test(kind.plural) || !/^[a-z][a-z0-9]*$/.test(kind.singular)) {
    throw new Error(`${kind.kind}: plural and singular must be lowercase alphanumeric`);
  }
  if (kind.computed) checkComputed(kind);
}

const readVerbs: readonly Verb[] = ['get', 'list', 'watch'];

function checkComputed(kind: KindDefinition): void {
  const writes = verbsOf(kind).filter((verb) => !readVerbs.includes(verb));
  if (writes.length > 0) throw new Error(`${kind.kind}: a computed kind is read-only, but it declares ${writes.join(', ')}`);
  if (kind.subresources.status) throw new Error(`${kind.kind}: a computed kind has no status subresource`);
  if (!kind.namespaced || kind.computed!.inputs.some((input) => !input.namespaced)) {
    throw new Error(`${kind.kind}: a computed kind and its inputs must be namespaced`);
  }
}

const versionPattern = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/**
 * Kubernetes version priority: v1 > v1beta2 > v1beta1 > v1alpha1; non-matching names sort last, in
 * Go's byte order (not localeCompare, which would also fault in 2 MB of ICU's collation data).
 */
export function compareKubeVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] | undefined => {
    const m = versionPattern.exec(v);
    if (!m) return undefined;
    const stability = m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1;
    return [stability, Number(m[1]), Number(m[3] ?? 0)];
  };
  const ra = rank(a);
  const rb = rank(b);
  if (!ra || !rb) return ra ? -1 : rb ? 1 : compareStrings(a, b);
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return rb[i] - ra[i];
  return 0;
}

/**
 * Lossless conversion between a spoke version and the hub (storage) version,
 * the way Cluster API providers do it: what the target version cannot
 * express travels in the `cluster.x-k8s.io/conversion-data` annotation and
 * is put back when the object is converted to its original version again.
 *
 * Cluster API's MarshalData stores the whole source object (minus metadata)
 * on every conversion. Here only the lossy parts are stored, in the same
 * shape: a partial object of the source version holding `apiVersion`, `kind`
 * and the values of the fields that did not survive, `null` marking a field
 * that was absent. When nothing was lost there is no annotation at all.
 *
 * Fields are grouped into units: a set of spoke fields and a set of hub
 * fields that map only to each other (say `status.ready` and
 * `status.conditions` on one side, `status.conditions` on the other). A unit
 * is lossy when the naive round trip does not give its fields back. A stored
 * unit is restored only while the object still agrees with it: the restored
 * values must convert to what the object holds now. So a unit the other
 * version has changed since (a condition that flipped, a flavor replaced)
 * follows the change instead of coming back stale. A unit with no
 * counterpart (failureReason, a template's metadata) is always restored,
 * as Cluster API does.
 */
import type { Converter } from '../../../apiserver/registry/kind.js';
import type { JsonObject } from '../../../storage/interface.js';
import { canonicalJson, getPath, setPath, type Path } from './json.js';
import { isJsonObject, jsonEqual } from '../../../storage/json.js';

export const conversionDataAnnotation = 'cluster.x-k8s.io/conversion-data';

export const group = 'infrastructure.cluster.x-k8s.io';

export interface Unit {
  spoke: Path[];
  hub: Path[];
}

/**
 * The naive conversions must be pure (inputs may be frozen) and leave
 * `apiVersion` alone. Each unit's fields must convert independently of the
 * other units' fields.
 */
export interface VersionPair {
  kind: string;
  hub: string;
  spoke: string;
  toHub(object: JsonObject): JsonObject;
  toSpoke(object: JsonObject): JsonObject;
  units: Unit[];
}

/** A kind's naive conversions written as edits in place, and its units. */
export interface Edits {
  toHub(object: JsonObject): void;
  toSpoke(object: JsonObject): void;
  units: Unit[];
}

/**
 * Every CAPO kind converts between v1beta1 and the v1beta2 hub. The edits
 * run on a copy, which keeps the conversions pure.
 */
export function capoVersionPair(kind: string, { toHub, toSpoke, units }: Edits): VersionPair {
  const onCopy = (edit: (object: JsonObject) => void) => (object: JsonObject) => {
    const out = structuredClone(object);
    edit(out);
    return out;
  };
  return { kind, hub: 'v1beta2', spoke: 'v1beta1', toHub: onCopy(toHub), toSpoke: onCopy(toSpoke), units };
}

type Side = 'hub' | 'spoke';

export function losslessConverter(pair: VersionPair): Converter {
  const groupVersion = (side: Side) => `${group}/${pair[side]}`;
  return {
    toStorage(object) {
      if (object.apiVersion === groupVersion('hub')) return object;
      if (object.apiVersion !== groupVersion('spoke')) {
        throw new Error(`${pair.kind}: cannot convert ${String(object.apiVersion)} to ${groupVersion('hub')}`);
      }
      return convert(pair, object, 'hub');
    },
    fromStorage(object, version) {
      if (version === pair.hub) return object;
      if (version !== pair.spoke) throw new Error(`${pair.kind}: version ${version} is not served`);
      return convert(pair, object, 'spoke');
    },
  };
}

function convert(pair: VersionPair, source: JsonObject, to: Side): JsonObject {
  const from: Side = to === 'hub' ? 'spoke' : 'hub';
  const forward = to === 'hub' ? pair.toHub : pair.toSpoke;
  const backward = to === 'hub' ? pair.toSpoke : pair.toHub;
  const { input, stash } = takeStash(source);

  let output = forward(input);
  output.apiVersion = `${group}/${pair[to]}`;
  if (stash && stash.apiVersion === output.apiVersion && stash.kind === pair.kind) {
    for (const unit of pair.units) {
      const paths = unit[to];
      if (!paths.some((path) => getPath(stash, path) !== undefined)) continue;
      const candidate = restored(output, paths, stash);
      if (candidate && samePaths(forward(backward(candidate)), output, paths)) output = candidate;
    }
  }

  const back = backward(output);
  const lost = pair.units.filter((unit) => !samePaths(back, input, unit[from]));
  if (lost.length > 0) {
    const data: JsonObject = { apiVersion: `${group}/${pair[from]}`, kind: pair.kind };
    for (const path of lost.flatMap((unit) => unit[from])) setPath(data, path, getPath(input, path) ?? null);
    if (!isJsonObject(output.metadata)) output.metadata = {};
    const metadata = output.metadata as JsonObject;
    metadata.annotations = { ...(isJsonObject(metadata.annotations) ? metadata.annotations : {}), [conversionDataAnnotation]: canonicalJson(data) };
  }
  return output;
}

/**
 * The source without the conversion-data annotation (an empty annotations
 * map goes too: Kubernetes does not tell it from none), and the parsed
 * annotation. Nested values stay shared with the source; conversions copy
 * before they write.
 */
function takeStash(source: JsonObject): { input: JsonObject; stash?: JsonObject } {
  const metadata = source.metadata;
  if (!isJsonObject(metadata) || !isJsonObject(metadata.annotations) || !Object.hasOwn(metadata.annotations, conversionDataAnnotation)) {
    return { input: source };
  }
  const { [conversionDataAnnotation]: data, ...annotations } = metadata.annotations;
  const { annotations: _, ...rest } = metadata;
  const input = { ...source, metadata: Object.keys(annotations).length > 0 ? { ...rest, annotations } : rest };
  return { input, stash: parseStash(data) };
}

/** Data that is not ours to read (a hand-edited annotation) restores nothing. */
function parseStash(data: unknown): JsonObject | undefined {
  if (typeof data !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(data);
    return isJsonObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A copy of `object` with the unit's stored values put back, or undefined
 * when a value's parent is gone: then the other version removed the
 * enclosing object, and bringing the value back would resurrect it.
 */
function restored(object: JsonObject, paths: Path[], stash: JsonObject): JsonObject | undefined {
  const candidate = structuredClone(object);
  for (const path of paths) {
    const value = getPath(stash, path);
    if (value === undefined) continue;
    const parent = getPath(candidate, path.slice(0, -1));
    const key = path[path.length - 1];
    if (!isJsonObject(parent)) {
      if (value === null) continue;
      return undefined;
    }
    if (value === null) delete parent[key];
    else parent[key] = value;
  }
  return candidate;
}

function samePaths(a: JsonObject, b: JsonObject, paths: Path[]): boolean {
  return paths.every((path) => jsonEqual(getPath(a, path), getPath(b, path)));
}

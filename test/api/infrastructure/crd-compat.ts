/**
 * Compares the structural schema we serve for a kind version with the
 * openAPIV3Schema of the same version in CAPO's CRD, node by node, so that a
 * field, type, bound, default, list semantic or CEL rule we got wrong shows
 * up as one readable line. Also the tests every served version shares, for
 * the compatibility suites of each version.
 */
import { isDeepStrictEqual } from 'node:util';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { clusterSpecExtensions, clusterStatusExtensions, machineSpecExtensions, machineStatusExtensions } from '../../../src/api/infrastructure/extensions.js';
import type { KindVersion } from '../../../src/apiserver/registry/kind.js';
import type { StructuralSchema } from '../../../src/apiserver/schema/structural-schema.js';
import { structuralSchemaOf } from '../../../src/apiserver/schema/structural.js';
import { capoCrdVersion, capoCrdVersionIn, capoReleases, type CapoRelease } from '../../reference/capo.js';
import { listedDifferences } from './crd-differences.js';

type Node = Record<string, unknown>;

/**
 * The differences between the CRD's schema of `version` and ours, one line
 * each: `<path>: missing` (the CRD has it, we do not), `<path>: not in the
 * CRD`, or `<path>: <keyword> <ours> != <CRD's>`. Paths spell list items as
 * `[]` and map values as `[*]`. Descriptions are not compared. The object's
 * `metadata` is compared without its fields, which we model in full where
 * CRDs say only `object`; `extensions` directly under a spec or status is
 * ours and expected to be missing from the CRD. Nodes whose path matches one
 * of `ignorePaths` are skipped with everything below them. The CRD is the
 * newest release's unless `release` names another; `resolve` turns a node of
 * ours that refers to a definition (an OpenAPI document's `$ref`) into it.
 */
export function crdMismatches(
  plural: string,
  version: string,
  ours: StructuralSchema | Node,
  options: { ignorePaths?: RegExp[]; release?: CapoRelease; resolve?: (node: Node) => Node } = {},
): string[] {
  const crd = options.release ? capoCrdVersionIn(options.release, plural, version) : capoCrdVersion(plural, version);
  if (!crd) throw new Error(`CAPO ${options.release} has no ${plural} ${version}`);
  const walk = new Walk(options.ignorePaths ?? [], options.resolve ?? ((node) => node));
  walk.node(crd.openAPIV3Schema, ours as Node, '');
  return walk.mismatches;
}

/** Kind versions by the plural of their CRD, e.g. `['openstackclusters', openStackClusterV1beta2]`. */
export type Kinds = [plural: string, version: KindVersion][];

/**
 * What every served version of a CAPO kind must pass: the CRD's schema in each kept release that
 * serves the version, but for the differences crd-differences.ts lists, and the newest release's
 * printer columns.
 */
export function itMatchesTheCrds(kinds: Kinds): void {
  it.each(kinds)('%s matches the CRDs', (plural, version) => {
    const unlisted = (Object.keys(capoReleases) as CapoRelease[])
      .filter((release) => capoCrdVersionIn(release, plural, version.name) !== undefined)
      .flatMap((release) => {
        const listed = listedDifferences
          .filter((entry) => entry.release === release && entry.plural === plural && entry.version === version.name)
          .flatMap((entry) => entry.differences);
        return crdMismatches(plural, version.name, structuralSchemaOf(version), { release })
          .filter((difference) => !listed.includes(difference))
          .map((difference) => `${release}: ${difference}`);
      });
    expect(unlisted).toEqual([]);
  });

  it.each(kinds)('%s has the printer columns of the CRD', (plural, version) => {
    expect(version.printerColumns).toEqual(capoCrdVersion(plural, version.name).additionalPrinterColumns);
  });
}

/** Extension fields are the same in every served version of the kinds that carry them. */
export function itCarriesTheExtensions(kinds: Kinds): void {
  const of = (plural: string): KindVersion => {
    const found = kinds.find(([candidate]) => candidate === plural);
    if (!found) throw new Error(`no ${plural} among the kinds`);
    return found[1];
  };
  it.each([
    ['OpenStackCluster spec', of('openstackclusters'), 'spec.extensions', clusterSpecExtensions],
    ['OpenStackCluster status', of('openstackclusters'), 'status.extensions', clusterStatusExtensions],
    ['OpenStackMachine spec', of('openstackmachines'), 'spec.extensions', machineSpecExtensions],
    ['OpenStackMachine status', of('openstackmachines'), 'status.extensions', machineStatusExtensions],
    ['OpenStackClusterTemplate', of('openstackclustertemplates'), 'spec.template.spec.extensions', clusterSpecExtensions],
    ['OpenStackMachineTemplate', of('openstackmachinetemplates'), 'spec.template.spec.extensions', machineSpecExtensions],
  ] as const)('%s carries its extensions', (_, version, path, extensions) => {
    expect(nodeAt(version, path)).toEqual(structuralOf(extensions));
  });
}

function nodeAt(version: KindVersion, path: string): StructuralSchema | undefined {
  let node: StructuralSchema | undefined = structuralSchemaOf(version);
  for (const name of path.split('.')) node = node?.properties?.[name];
  return node;
}

/** The structural schema a field of this zod type gets. */
function structuralOf(schema: z.ZodType): StructuralSchema | undefined {
  const holder: KindVersion = { name: 'v1', served: true, storage: true, schema: z.object({ field: schema }), printerColumns: [] };
  return structuralSchemaOf(holder).properties?.field;
}

/** Keywords whose values must be equal. */
const SCALARS = [
  'type',
  'format',
  'pattern',
  'default',
  'minimum',
  'maximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
] as const;

/** Keywords where absent means false. */
const FLAGS = [
  'nullable',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
] as const;

/** Keywords whose values are unordered lists. */
const SETS = ['enum', 'required', 'x-kubernetes-validations'] as const;

/** Our additions, which CAPO's CRDs do not have. */
const OURS_ONLY = /(^|\.)(spec|status)\.extensions$/;

class Walk {
  readonly mismatches: string[] = [];

  constructor(
    private readonly ignored: RegExp[],
    private readonly resolve: (node: Node) => Node,
  ) {}

  node(crd: Node, unresolved: Node, path: string): void {
    if (this.ignored.some((pattern) => pattern.test(path))) return;
    const ours = this.resolve(unresolved);
    const at = path || '(root)';
    for (const key of SCALARS) {
      if (!isDeepStrictEqual(ours[key], crd[key])) this.differ(at, key, ours[key], crd[key]);
    }
    for (const key of FLAGS) {
      if ((ours[key] === true) !== (crd[key] === true)) this.differ(at, key, ours[key], crd[key]);
    }
    for (const key of SETS) {
      if (!sameSet(ours[key], crd[key])) this.differ(at, key, ours[key], crd[key]);
    }
    if (path === 'metadata') return;
    this.children(asNodes(crd.properties), asNodes(ours.properties), (name) => (path ? `${path}.${name}` : name));
    this.child(crd.items, ours.items, `${path}[]`);
    this.child(crd.additionalProperties, ours.additionalProperties, `${path}[*]`);
  }

  private children(crd: Record<string, Node>, ours: Record<string, Node>, pathOf: (name: string) => string): void {
    for (const name of new Set([...Object.keys(crd), ...Object.keys(ours)])) this.child(crd[name], ours[name], pathOf(name));
  }

  private child(crd: unknown, ours: unknown, path: string): void {
    if (isNode(crd) && isNode(ours)) this.node(crd, ours, path);
    else if (isNode(crd)) this.mismatches.push(`${path}: missing`);
    else if (isNode(ours) && !OURS_ONLY.test(path)) this.mismatches.push(`${path}: not in the CRD`);
  }

  private differ(path: string, key: string, ours: unknown, crd: unknown): void {
    this.mismatches.push(`${path}: ${key} ${show(ours)} != ${show(crd)}`);
  }
}

function sameSet(a: unknown, b: unknown): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (!Array.isArray(a) || !Array.isArray(b)) return false;
  const within = (items: unknown[], others: unknown[]) => items.every((item) => others.some((other) => isDeepStrictEqual(item, other)));
  return within(a, b) && within(b, a);
}

function show(value: unknown): string {
  return value === undefined ? '(none)' : JSON.stringify(value);
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asNodes(value: unknown): Record<string, Node> {
  return isNode(value) ? (value as Record<string, Node>) : {};
}

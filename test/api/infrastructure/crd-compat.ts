/**
 * Compares the structural schema we serve for a kind version with the
 * openAPIV3Schema of the same version in CAPO's CRD, node by node, so that a
 * field, type, bound, default, list semantic or CEL rule we got wrong shows
 * up as one readable line.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'yaml';
import type { PrinterColumn, StructuralSchema } from '../../../src/apiserver/registry/kind.js';

type Node = Record<string, unknown>;

/** CAPO's CRD for a resource, e.g. `capoCrdFile('openstackclusters')`. */
export function capoCrdFile(plural: string): string {
  const url = new URL(`../../../../shared/reference/capo-crds/infrastructure.cluster.x-k8s.io_${plural}.yaml`, import.meta.url);
  return fileURLToPath(url);
}

/**
 * The differences between the CRD's schema of `version` and ours, one line
 * each: `<path>: missing` (the CRD has it, we do not), `<path>: not in the
 * CRD`, or `<path>: <keyword> <ours> != <CRD's>`. Paths spell list items as
 * `[]` and map values as `[*]`. Descriptions are not compared. The object's
 * `metadata` is compared without its fields, which we model in full where
 * CRDs say only `object`; `extensions` directly under a spec or status is
 * ours and expected to be missing from the CRD. Nodes whose path matches one
 * of `ignorePaths` are skipped with everything below them.
 */
export function crdMismatches(
  crdFile: string,
  version: string,
  ours: StructuralSchema,
  options: { ignorePaths?: RegExp[] } = {},
): string[] {
  const walk = new Walk(options.ignorePaths ?? []);
  walk.node(crdVersion(crdFile, version).schema.openAPIV3Schema, ours as Node, '');
  return walk.mismatches;
}

/** The additionalPrinterColumns of a CRD version, shaped like our PrinterColumns. */
export function crdPrinterColumns(crdFile: string, version: string): PrinterColumn[] {
  return crdVersion(crdFile, version).additionalPrinterColumns ?? [];
}

interface CrdVersion {
  name: string;
  schema: { openAPIV3Schema: Node };
  additionalPrinterColumns?: PrinterColumn[];
}

function crdVersion(crdFile: string, version: string): CrdVersion {
  const crd = parse(readFileSync(crdFile, 'utf8')) as { spec: { versions: CrdVersion[] } };
  const found = crd.spec.versions.find((candidate) => candidate.name === version);
  if (!found) throw new Error(`${crdFile} has no version ${version}`);
  return found;
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

  constructor(private readonly ignored: RegExp[]) {}

  node(crd: Node, ours: Node, path: string): void {
    if (this.ignored.some((pattern) => pattern.test(path))) return;
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
  const within = (items: unknown[], others: unknown[]) =>
    items.every((item) => others.some((other) => isDeepStrictEqual(item, other)));
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

/**
 * The schemas a server publishes in /openapi/v3 for CAPO's kinds, against CAPO's CRDs of every
 * kept release that serves the same version (test/reference/capo.ts), through crdMismatches. What
 * differs is either listed in crd-differences.ts with the reason, or a failure.
 */
import { infrastructureKinds } from '../../../src/api/infrastructure/kinds.js';
import { capoCrd, capoReleases, type CapoRelease } from '../../reference/capo.js';
import { crdMismatches } from './crd-compat.js';

type Node = Record<string, unknown>;

/** An OpenAPI v3 document as /openapi/v3/apis/<group>/<version> serves it. */
export interface OpenApiDocument {
  components: { schemas: Record<string, Node> };
}

/** One difference between a served schema and a release's CRD. */
export interface SchemaDifference {
  release: CapoRelease;
  plural: string;
  version: string;
  difference: string;
}

/** Every difference, for each kind version served in `documents` (by version) and each release that has it. */
export function servedSchemaDifferences(documents: Map<string, OpenApiDocument>): SchemaDifference[] {
  const differences: SchemaDifference[] = [];
  for (const kind of infrastructureKinds) {
    for (const version of kind.versions.filter((candidate) => candidate.served)) {
      const document = documents.get(version.name);
      if (!document) throw new Error(`no OpenAPI document for ${kind.group}/${version.name}`);
      const name = `${kind.group.split('.').reverse().join('.')}.${version.name}.${kind.kind}`;
      const served = document.components.schemas[name];
      if (!served) throw new Error(`the OpenAPI document of ${version.name} has no ${name}`);
      for (const release of Object.keys(capoReleases) as CapoRelease[]) {
        if (!capoCrd(kind.plural, release).versions.some((candidate) => candidate.name === version.name)) continue;
        for (const difference of crdMismatches(kind.plural, version.name, served, { release, resolve: (node) => resolved(document, node) })) {
          differences.push({ release, plural: kind.plural, version: version.name, difference });
        }
      }
    }
  }
  return differences;
}

/** A node that refers to a definition (`$ref`, or `allOf` of one `$ref` beside a description) as that definition. */
function resolved(document: OpenApiDocument, node: Node): Node {
  const allOf = Array.isArray(node.allOf) && node.allOf.length === 1 ? (node.allOf[0] as Node) : undefined;
  const ref = typeof node.$ref === 'string' ? node.$ref : typeof allOf?.$ref === 'string' ? allOf.$ref : undefined;
  if (ref === undefined) return node;
  const definition = document.components.schemas[ref.replace('#/components/schemas/', '')];
  if (!definition) throw new Error(`unresolved reference ${ref}`);
  return definition;
}

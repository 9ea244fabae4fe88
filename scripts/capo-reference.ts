/**
 * Regenerates the CAPO fact files under test/reference/capo from CAPO's released CRDs and cluster
 * templates (`npm run reference:capo -- [source [target]]`, source defaulting to ../shared/reference,
 * target to test/reference/capo; test/reference/capo-v0.14.2 holds v0.14.2's CRDs, from its
 * config/crd/bases put in a source's capo-crds/), so
 * the compatibility tests run from a bare clone. A CRD becomes JSON holding what a wire-compatible
 * server must match: per version its served/storage flags, subresources, printer columns and the
 * openAPIV3Schema with every schema `description` left out (field names, types, enums, bounds,
 * defaults, list semantics and CEL rules stay). A template becomes its documents re-emitted as
 * YAML, clusterctl's `${VAR}` placeholders untouched.
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { z } from 'zod';

/** Where the fact files live, relative to the repository root. */
export const capoReferenceDir = 'test/reference/capo';

const crdFile = z.object({
  spec: z.object({
    group: z.string(),
    names: z.object({ kind: z.string(), plural: z.string() }).loose(),
    scope: z.string(),
    versions: z.array(
      z
        .object({
          name: z.string(),
          served: z.boolean(),
          storage: z.boolean(),
          deprecated: z.boolean().optional(),
          subresources: z.record(z.string(), z.unknown()).optional(),
          additionalPrinterColumns: z.array(z.record(z.string(), z.unknown())).optional(),
          schema: z.object({ openAPIV3Schema: z.record(z.string(), z.unknown()) }),
        })
        .loose(),
    ),
  }),
});

/** Every fact file, by its path under capoReferenceDir, generated from `source` (holding capo-crds/ and capo-templates/). */
export async function capoReferenceFacts(source: string): Promise<Map<string, string>> {
  const facts = new Map<string, string>();
  for (const file of await yamlFiles(path.join(source, 'capo-crds'))) {
    const { spec } = crdFile.parse(parse(await readFile(path.join(source, 'capo-crds', file), 'utf8')));
    const fact = {
      group: spec.group,
      kind: spec.names.kind,
      plural: spec.names.plural,
      scope: spec.scope,
      versions: spec.versions.map((version) => ({
        name: version.name,
        served: version.served,
        storage: version.storage,
        ...(version.deprecated !== undefined && { deprecated: version.deprecated }),
        subresources: version.subresources ?? {},
        additionalPrinterColumns: version.additionalPrinterColumns ?? [],
        openAPIV3Schema: withoutDescriptions(version.schema.openAPIV3Schema),
      })),
    };
    facts.set(`crds/${spec.names.plural}.json`, `${JSON.stringify(fact, null, 2)}\n`);
  }
  for (const file of await yamlFiles(path.join(source, 'capo-templates'))) {
    const documents = parseAllDocuments(await readFile(path.join(source, 'capo-templates', file), 'utf8'));
    const text = documents.map((document) => stringify(document.toJS(), { lineWidth: 0 })).join('---\n');
    facts.set(`templates/${file}`, text);
  }
  return facts;
}

/** The YAML files of `dir`; none where it does not exist (a source with CRDs only). */
async function yamlFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  return names.filter((name) => name.endsWith('.yaml')).sort();
}

type SchemaNode = Record<string, unknown>;

/** Schema keywords holding one schema, a map of schemas, or a list of schemas. */
const oneSchema = new Set(['items', 'additionalProperties', 'not']);
const schemaMaps = new Set(['properties', 'patternProperties']);
const schemaLists = new Set(['allOf', 'anyOf', 'oneOf']);

/** The schema without its `description` keywords; a property that happens to be named description stays. */
function withoutDescriptions(node: SchemaNode): SchemaNode {
  const out: SchemaNode = {};
  for (const [keyword, value] of Object.entries(node)) {
    if (keyword === 'description') continue;
    if (oneSchema.has(keyword) && isSchema(value)) out[keyword] = withoutDescriptions(value);
    else if (schemaMaps.has(keyword) && isSchema(value)) {
      out[keyword] = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, isSchema(child) ? withoutDescriptions(child) : child]));
    } else if (schemaLists.has(keyword) && Array.isArray(value)) {
      out[keyword] = value.map((child: unknown) => (isSchema(child) ? withoutDescriptions(child) : child));
    } else out[keyword] = value;
  }
  return out;
}

function isSchema(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function main(): Promise<void> {
  const source = path.resolve(process.argv[2] ?? '../shared/reference');
  const targetDir = process.argv[3] ?? capoReferenceDir;
  const facts = await capoReferenceFacts(source);
  await rm(targetDir, { recursive: true, force: true });
  for (const [file, text] of facts) {
    const target = path.join(targetDir, file);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, text);
  }
  console.log(`wrote ${facts.size} fact files to ${targetDir} from ${source}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  await main();
}

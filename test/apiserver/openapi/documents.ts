/** Helpers that read OpenAPI documents the way their clients do. */

type Node = Record<string, unknown>;

/** Every `$ref` in the document that does not point at a schema the document has. */
export function unresolvedRefs(document: Node, prefix: '#/components/schemas/' | '#/definitions/'): string[] {
  const schemas = (prefix === '#/definitions/' ? document.definitions : (document.components as Node).schemas) as Node;
  const missing: string[] = [];
  const seen: string[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        if (key === '$ref') {
          seen.push(String(child));
          if (!String(child).startsWith(prefix) || !(String(child).slice(prefix.length) in schemas)) {
            missing.push(String(child));
          }
        } else walk(child);
      }
    }
  };
  walk(document);
  if (seen.length === 0) throw new Error('no $ref at all');
  return missing;
}

function resolve(document: Node, node: Node): Node {
  const ref = node.$ref;
  if (typeof ref !== 'string') return node;
  const schemas = (document.components as Node).schemas as Node;
  return schemas[ref.slice('#/components/schemas/'.length)] as Node;
}

/**
 * What `kubectl explain <resource>.<fieldPath>` would describe, found as
 * kubectl's explain template finds it in a v3 document: the GVK from the
 * resource's path operations, the schema by its GVK list, then fields through
 * $ref, properties, items, additionalProperties and allOf.
 */
export function explain(document: Node, group: string, version: string, resource: string, fieldPath: string[]): Node | undefined {
  const paths = document.paths as Record<string, Node>;
  const prefix = `/apis/${group}/${version}`;
  const candidates = [
    `${prefix}/${resource}`,
    `${prefix}/${resource}/{name}`,
    `${prefix}/namespaces/{namespace}/${resource}`,
    `${prefix}/namespaces/{namespace}/${resource}/{name}`,
  ];
  let gvk: unknown;
  for (const path of candidates) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      gvk ??= (paths[path]?.[method] as Node | undefined)?.['x-kubernetes-group-version-kind'];
    }
  }
  if (!gvk) return undefined;
  const schemas = Object.values((document.components as Node).schemas as Node) as Node[];
  const schema = schemas.find((s) =>
    ((s['x-kubernetes-group-version-kind'] as unknown[] | undefined) ?? []).some((entry) => JSON.stringify(sortKeys(entry)) === JSON.stringify(sortKeys(gvk))),
  );
  return schema && follow(document, schema, fieldPath);
}

function follow(document: Node, node: Node, fieldPath: string[]): Node | undefined {
  if (fieldPath.length === 0) return node;
  const resolved = resolve(document, node);
  const properties = resolved.properties as Record<string, Node> | undefined;
  if (properties?.[fieldPath[0]]) return follow(document, properties[fieldPath[0]], fieldPath.slice(1));
  if (resolved.items) return follow(document, resolved.items as Node, fieldPath);
  if (typeof resolved.additionalProperties === 'object') return follow(document, resolved.additionalProperties as Node, fieldPath);
  for (const part of (resolved.allOf as Node[] | undefined) ?? []) {
    const found = follow(document, part, fieldPath);
    if (found) return found;
  }
  return undefined;
}

/** The field paths `kubectl explain --recursive` would list below a schema. */
export function fieldsBelow(document: Node, node: Node, prefix = '', history: string[] = []): string[] {
  const ref = typeof node.$ref === 'string' ? node.$ref : '';
  if (ref && history.includes(ref)) return [];
  const resolved = resolve(document, node);
  const next = ref ? [...history, ref] : history;
  const out: string[] = [];
  for (const [name, child] of Object.entries((resolved.properties as Record<string, Node> | undefined) ?? {})) {
    out.push(prefix + name, ...fieldsBelow(document, child, `${prefix}${name}.`, next));
  }
  for (const part of (resolved.allOf as Node[] | undefined) ?? []) out.push(...fieldsBelow(document, part, prefix, next));
  if (resolved.items) out.push(...fieldsBelow(document, resolved.items as Node, prefix, next));
  if (typeof resolved.additionalProperties === 'object') {
    out.push(...fieldsBelow(document, resolved.additionalProperties as Node, prefix, next));
  }
  return out;
}

function sortKeys(value: unknown): unknown {
  return Object.fromEntries(Object.entries(value as Node).sort(([a], [b]) => (a < b ? -1 : 1)));
}

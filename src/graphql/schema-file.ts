/** schema.graphql sits at the repository root, above both src/graphql (tests) and dist/src/graphql (npm start). */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const schemaFileName = 'schema.graphql';

export function readSchemaFile(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, schemaFileName);
    if (existsSync(candidate)) return readFileSync(candidate, 'utf8');
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`${schemaFileName} not found in any folder above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

/**
 * The CAPO fact files are what scripts/capo-reference.ts makes of CAPO's released CRDs and
 * templates: regenerated in memory from ../shared/reference and compared file by file, so a
 * hand edit or a newer CAPO release shows up here.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { capoReferenceFacts } from '../../scripts/capo-reference.js';

const source = fileURLToPath(new URL('../../../shared/reference', import.meta.url));
const factsDir = new URL('capo/', import.meta.url);

const released = existsSync(source);

describe.skipIf(!released)(released ? 'CAPO fact files' : `CAPO fact files (skipped: no CAPO release at ${source} to compare with)`, () => {
  it('are exactly what npm run reference:capo generates', async () => {
    const expected = await capoReferenceFacts(source);
    const present = readdirSync(factsDir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(fileURLToPath(factsDir), path.join(entry.parentPath, entry.name)));
    expect(present.sort()).toEqual([...expected.keys()].sort());
    for (const [file, text] of expected) {
      expect(readFileSync(new URL(file, factsDir), 'utf8'), file).toBe(text);
    }
  });
});

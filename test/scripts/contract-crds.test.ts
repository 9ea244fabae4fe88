/** deploy/api/contract-crds.yaml is what `npm run contract-crds` makes of the served kinds, so it cannot drift from them. */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { contractCrds } from '../../scripts/contract-crds.js';

it('deploy/api/contract-crds.yaml is generated from the served kinds', () => {
  expect(readFileSync(new URL('../../deploy/api/contract-crds.yaml', import.meta.url), 'utf8')).toBe(contractCrds());
});

/**
 * The manifests of examples/, pointed at a running simulated cloud: what a
 * user applies after `npm start`, with the cloud's actual address.
 */
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export const examplesDir = path.resolve(import.meta.dirname, '../../../examples');

/** Copies examples/ to a temporary directory with the simulator's URL in the identity Secret. */
export async function renderExamples(cloudUrl: string): Promise<string> {
  const target = await mkdtemp(path.join(os.tmpdir(), 'capo-examples-'));
  for (const file of await readdir(examplesDir)) {
    if (!file.endsWith('.yaml')) continue;
    const text = await readFile(path.join(examplesDir, file), 'utf8');
    await writeFile(path.join(target, file), text.replaceAll('http://127.0.0.1:6445', cloudUrl));
  }
  return target;
}

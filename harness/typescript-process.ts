/**
 * The node arguments that run one of this repository's TypeScript entry points from its sources
 * (through tsx), so a test that starts the server, the preflight command or a fixture as its own
 * process runs the code it was given, never a build that may be stale.
 */
import path from 'node:path';

const repository = path.resolve(import.meta.dirname, '..');
// Resolved here, so the child finds tsx whatever its working directory.
const tsxLoader = import.meta.resolve('tsx');

/** e.g. `spawn(process.execPath, [...sourceEntry('src/main.ts'), '--help'])`. */
export function sourceEntry(file: string): string[] {
  return ['--import', tsxLoader, path.join(repository, file)];
}

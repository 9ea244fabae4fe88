/**
 * The node flags `npm start` gives the server (package.json's start script): a test or a
 * benchmark that starts the server as its own process starts it with these, so what it exercises
 * is the process a user runs (the same heap settings, the same compiler tiers), not node's defaults.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The repository's package.json, found from here whether this file runs from harness/ or dist/harness/. */
function manifestPath(): string {
  for (let directory = import.meta.dirname; ; directory = path.dirname(directory)) {
    const candidate = path.join(directory, 'package.json');
    if (existsSync(candidate)) return candidate;
    if (path.dirname(directory) === directory) throw new Error(`no package.json above ${import.meta.dirname}`);
  }
}

/** e.g. `['--max-semi-space-size=16', '--heap-growing-percent=50', '--no-maglev']`. */
export function startScriptFlags(): string[] {
  const manifest = JSON.parse(readFileSync(manifestPath(), 'utf8')) as { scripts: { start: string } };
  const [command, ...words] = manifest.scripts.start.split(/\s+/);
  if (command !== 'node') throw new Error(`npm start runs "${command}", not node: cannot tell its node flags`);
  const firstArgument = words.findIndex((word) => !word.startsWith('--'));
  return firstArgument === -1 ? words : words.slice(0, firstArgument);
}

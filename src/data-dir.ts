/**
 * The data directory holds Secrets (in the database and its WAL), private keys and tokens, so
 * only its owner may read anything in it: the directory 0700, every file 0600. Checked at every
 * start, so a directory made by hand, restored from a backup or left by an older version is
 * tightened before the server serves from it; what was changed is reported, and a mode that
 * cannot be changed stops the start with the file's name.
 */
import { chmod, lstat, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';

const directoryMode = 0o700;
const fileMode = 0o600;

/** Creates `dir` if needed and tightens it and everything below it; answers one line per change. */
export async function secureDataDir(dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true, mode: directoryMode });
  const changes: string[] = [];
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop()!;
    const stats = await lstat(current);
    // A link is followed by nobody here; what it points to is not ours to change.
    if (stats.isSymbolicLink()) continue;
    const wanted = stats.isDirectory() ? directoryMode : fileMode;
    if ((stats.mode & 0o777 & ~wanted) !== 0) {
      try {
        await chmod(current, wanted);
      } catch (error) {
        throw new Error(`${current} is mode ${octal(stats.mode)} and could not be made ${octal(wanted)}: ${(error as Error).message}`);
      }
      changes.push(`${current}: mode ${octal(stats.mode)} -> ${octal(wanted)} (the data directory is readable by its owner only)`);
    }
    if (stats.isDirectory()) for (const entry of await readdir(current)) pending.push(path.join(current, entry));
  }
  return changes;
}

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8)}`;
}

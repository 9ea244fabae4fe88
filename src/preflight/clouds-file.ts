/**
 * Where `npm run preflight` finds clouds.yaml: the places the OpenStack
 * command-line tools look, then the file `npm start` writes for its
 * simulated cloud.
 */
import { access } from 'node:fs/promises';
import path from 'node:path';

export interface CloudsFileLookup {
  /** --clouds-yaml: when given, it must exist. */
  explicit?: string;
  /** $OS_CLIENT_CONFIG_FILE: when set, it must exist. */
  configFileVariable?: string;
  cwd: string;
  home: string;
}

/** Resolves to the first file that exists; throws an Error naming every place looked in when none does. */
export async function findCloudsYaml(lookup: CloudsFileLookup): Promise<string> {
  if (lookup.explicit !== undefined) return existing(path.resolve(lookup.cwd, lookup.explicit), '--clouds-yaml');
  if (lookup.configFileVariable !== undefined && lookup.configFileVariable !== '') {
    return existing(path.resolve(lookup.cwd, lookup.configFileVariable), 'OS_CLIENT_CONFIG_FILE');
  }
  const candidates = [
    path.join(lookup.cwd, 'clouds.yaml'),
    path.join(lookup.home, '.config', 'openstack', 'clouds.yaml'),
    '/etc/openstack/clouds.yaml',
    path.join(lookup.cwd, 'data', 'clouds.yaml'),
  ];
  for (const candidate of candidates) if (await exists(candidate)) return candidate;
  throw new Error(`no clouds.yaml found; looked for ${candidates.join(', ')}. Name one with --clouds-yaml or OS_CLIENT_CONFIG_FILE`);
}

async function existing(file: string, origin: string): Promise<string> {
  if (await exists(file)) return file;
  throw new Error(`${origin} names ${file}, which does not exist`);
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

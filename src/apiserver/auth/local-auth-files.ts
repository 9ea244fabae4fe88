/**
 * The embedded default's authentication files in the data directory: a token
 * file with an admin token, that token on its own (for curl, the Ansible
 * inventory and `kubectl --token`), and a policy file for everyone else.
 * Existing files are never rewritten, so edits and rotated tokens survive restarts.
 */
import { randomBytes } from 'node:crypto';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseCsv } from './csv.js';

export interface LocalAuthFiles {
  /** kube-apiserver --token-auth-file CSV (`token,user,uid,"groups"`), read by StaticTokenFile. */
  tokenFile: string;
  /** The admin's bare token (user admin, group system:masters), mode 0600. */
  adminTokenFile: string;
  /** ABAC policy lines (AbacAuthorizer) granting users other than system:masters; comments only at first. */
  policyFile: string;
}

const adminUser = 'admin';
const adminGroup = 'system:masters';

const policyFileHeader = `# Authorization policies, one JSON object per line, in kube-apiserver's ABAC format; re-read when saved.
# Members of system:masters need no line here. For example, to let user alice use namespace team-a:
# {"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "alice", "namespace": "team-a", "resource": "*", "apiGroup": "*"}}
`;

export async function ensureLocalAuthFiles(dataDir: string): Promise<LocalAuthFiles> {
  const files: LocalAuthFiles = {
    tokenFile: path.join(dataDir, 'tokens.csv'),
    adminTokenFile: path.join(dataDir, 'token'),
    policyFile: path.join(dataDir, 'policy.jsonl'),
  };
  await mkdir(dataDir, { recursive: true });
  const savedToken = (await readIfPresent(files.adminTokenFile))?.trim();
  if (savedToken === '') throw new Error(`${files.adminTokenFile} is empty; delete it to have a new admin token created`);
  const tokenTable = await readIfPresent(files.tokenFile);

  let adminToken = savedToken;
  if (tokenTable === undefined) {
    adminToken ??= newToken();
    await createFile(files.tokenFile, adminRecord(adminToken), 0o600);
  } else if (adminToken === undefined) {
    adminToken = adminTokenIn(tokenTable, files.tokenFile);
    if (adminToken === undefined) {
      adminToken = newToken();
      await appendFile(files.tokenFile, `${tokenTable === '' || tokenTable.endsWith('\n') ? '' : '\n'}${adminRecord(adminToken)}`);
    }
  }
  if (savedToken === undefined) await createFile(files.adminTokenFile, adminToken, 0o600);
  if ((await readIfPresent(files.policyFile)) === undefined) await createFile(files.policyFile, policyFileHeader, 0o600);
  return files;
}

function newToken(): string {
  return randomBytes(32).toString('base64url');
}

function adminRecord(token: string): string {
  return `${token},${adminUser},${adminUser},${adminGroup}\n`;
}

/** The token of the first record for user admin in system:masters, when the token file has one. */
function adminTokenIn(tokenTable: string, filePath: string): string | undefined {
  let records: ReturnType<typeof parseCsv>;
  try {
    records = parseCsv(tokenTable);
  } catch (error) {
    throw new Error(`${filePath}: ${(error as Error).message}`);
  }
  const admin = records.find(({ fields }) => fields[1] === adminUser && (fields[3] ?? '').split(',').some((group) => group.trim() === adminGroup));
  return admin?.fields[0] || undefined;
}

async function readIfPresent(filePath: string): Promise<string | undefined> {
  try {
    return await readFile(filePath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** `wx`: a file another process created meanwhile is kept, not overwritten. */
async function createFile(filePath: string, text: string, mode: number): Promise<void> {
  try {
    await writeFile(filePath, text, { mode, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/**
 * Static bearer tokens in kube-apiserver's --token-auth-file format: one CSV
 * record per token, `token,user,uid[,"group1,group2"]`. The file is re-read
 * when it changes, so tokens can be added and revoked while serving.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import { parseCsv } from './csv.js';
import type { TokenAuthenticator } from './authenticator.js';
import { authenticated, type UserInfo } from './user.js';
import { WatchedFile, type WatchedFileOptions } from './watched-file.js';

/** Users keyed by the SHA-256 of their token, so lookups do not compare secrets byte by byte. */
type TokenTable = Map<string, { digest: Buffer; user: UserInfo }>;

export class StaticTokenFile implements TokenAuthenticator {
  private constructor(private readonly file: WatchedFile<TokenTable>) {}

  static async open(filePath: string, options: WatchedFileOptions = {}): Promise<StaticTokenFile> {
    return new StaticTokenFile(await WatchedFile.open(filePath, parseTokenFile, options));
  }

  get path(): string {
    return this.file.path;
  }

  async authenticateToken(token: string): Promise<UserInfo | undefined> {
    const digest = sha256(token);
    const entry = this.file.current.get(digest.toString('hex'));
    return entry && timingSafeEqual(entry.digest, digest) ? entry.user : undefined;
  }

  userOfTokenDigest(digest: string): UserInfo | undefined {
    return this.file.current.get(digest)?.user;
  }

  /** Re-reads the file now instead of waiting for the change notification. */
  reload(): Promise<void> {
    return this.file.reload();
  }

  close(): void {
    this.file.close();
  }
}

/** One user per token; a malformed record rejects the whole file, naming its line. */
export function parseTokenFile(text: string): TokenTable {
  const table: TokenTable = new Map();
  const firstLine = new Map<string, number>();
  for (const { line, fields } of parseCsv(text)) {
    if (fields.length < 3) throw new Error(`line ${line}: needs at least 3 columns (token, user name, user uid), found ${fields.length}`);
    const [token, name, uid, groupList] = fields;
    if (token === '') throw new Error(`line ${line}: the token is empty`);
    if (name === '') throw new Error(`line ${line}: the user name is empty`);
    const key = sha256(token).toString('hex');
    const earlier = firstLine.get(key);
    if (earlier !== undefined) throw new Error(`line ${line}: the token is already used on line ${earlier}`);
    firstLine.set(key, line);
    const groups = (groupList ?? '')
      .split(',')
      .map((group) => group.trim())
      .filter((group) => group !== '');
    table.set(key, { digest: sha256(token), user: authenticated(name, groups, uid) });
  }
  return table;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

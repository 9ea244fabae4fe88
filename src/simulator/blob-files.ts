/**
 * Where the simulated cloud keeps bulk data (Glance's image files): on disk, one file per content named
 * by its SHA-256, never in memory. Glance's own file store does the same; held in memory, an upload of a
 * gigabyte cost the process a gigabyte that the allocator did not give back (issue 47, M5), and in the
 * embedded mode that process is the API server.
 *
 * Two lives: a cloud kept across restarts keeps its files beside its state file, and only the state file
 * may remove one (once no state it wrote names it: a file a crash could still need stays); a cloud
 * without one keeps them in a temporary folder, removed with the cloud, and drops a file as soon as no
 * image holds it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface StoredBlob {
  key: string;
  size: number;
  /** Glance's `checksum` and `os_hash_value` (sha512), computed as the bytes arrive. */
  md5: string;
  sha512: string;
}

/** An upload past the cap, refused as it arrived (nothing of it is kept). */
export class BlobTooLargeError extends Error {}

const keyPattern = /^[0-9a-f]{64}$/;

export class BlobFiles {
  /** Keys on disk, each with the count of receipts when it was last received (see `remove`). */
  readonly #keys = new Map<string, number>();
  #receipts = 0;

  private constructor(
    readonly dir: string,
    /** True when a state file decides when a file goes (`release` then keeps it). */
    private readonly kept: boolean,
  ) {
    for (const name of existsSync(dir) ? readdirSync(dir) : []) {
      if (keyPattern.test(name)) this.#keys.set(name, 0);
    }
  }

  /** The files of a cloud kept across restarts, in `dir` (made when the first file is written). */
  static kept(dir: string): BlobFiles {
    return new BlobFiles(dir, true);
  }

  /** The files of a cloud that ends with its process, in a new temporary folder. */
  static temporary(): BlobFiles {
    return new BlobFiles(mkdtempSync(path.join(os.tmpdir(), 'capo-simulated-images-')), false);
  }

  has(key: string): boolean {
    return keyPattern.test(key) && this.#keys.has(key);
  }

  /** Writes data already in memory (the small seed image). */
  put(data: Buffer): string {
    const key = createHash('sha256').update(data).digest('hex');
    if (!this.#keys.has(key)) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      writeFileSync(this.#file(key), data, { mode: 0o600 });
    }
    this.#keys.set(key, ++this.#receipts);
    return key;
  }

  /** Streams `source` to a file, hashing it on the way; more than `limit` bytes is a BlobTooLargeError. */
  async receive(source: Readable, limit: number): Promise<StoredBlob> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const partial = path.join(this.dir, `.receiving-${randomBytes(8).toString('hex')}`);
    const hashes = { sha256: createHash('sha256'), md5: createHash('md5'), sha512: createHash('sha512') };
    let size = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        if (size > limit) return done(new BlobTooLargeError(`the data is larger than the ${limit} bytes allowed`));
        for (const hash of Object.values(hashes)) hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(source, counted, createWriteStream(partial, { mode: 0o600 }));
      const key = hashes.sha256.digest('hex');
      await rename(partial, this.#file(key));
      this.#keys.set(key, ++this.#receipts);
      return { key, size, md5: hashes.md5.digest('hex'), sha512: hashes.sha512.digest('hex') };
    } finally {
      await rm(partial, { force: true });
    }
  }

  open(key: string): Readable {
    return createReadStream(this.#file(key));
  }

  /** No image holds `key` any more: a temporary cloud drops its file, a kept one leaves that to its state file. */
  release(key: string): void {
    if (this.kept || !this.#keys.delete(key)) return;
    void rm(this.#file(key), { force: true });
  }

  /** Every key on disk, with the receipt it was last received at (for `remove`). */
  stored(): Map<string, number> {
    return new Map(this.#keys);
  }

  /** Removes `key` unless it was received again after `receipt` (an image uploaded anew with the same content). */
  async remove(key: string, receipt: number): Promise<void> {
    if (this.#keys.get(key) !== receipt) return;
    this.#keys.delete(key);
    await rm(this.#file(key), { force: true });
  }

  /** A temporary cloud's folder goes with it. */
  async close(): Promise<void> {
    if (!this.kept) await rm(this.dir, { recursive: true, force: true });
  }

  #file(key: string): string {
    return path.join(this.dir, key);
  }
}

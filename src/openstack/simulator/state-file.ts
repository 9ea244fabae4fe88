/**
 * A simulated cloud kept across restarts (SimulatorOptions.stateFile): every service's snapshot
 * (ServiceState) and the quotas in one JSON file, written atomically (a temporary file renamed over
 * it, mode 0600) at most every SAVE_DELAY_MS after a change, and on close. Image data lives beside
 * it, one file per content named by its SHA-256 in `<name>-images/`, written before the state that
 * names it and removed once no written state does.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { BlobSink, BlobSource } from './framework.js';

/** How long after a change the state is written: changes within it are written together. */
const SAVE_DELAY_MS = 250;
const VERSION = 1;

const stateFileSchema = z.object({
  version: z.literal(VERSION),
  /** [`${projectId}/${resource}`, limit], null for unlimited (JSON has no Infinity). */
  quotas: z.array(z.tuple([z.string(), z.number().nullable()])),
  /** Each service's snapshot by service type. */
  services: z.record(z.string(), z.unknown()),
});

export interface CloudState {
  quotas: Map<string, number>;
  services: Record<string, unknown>;
}

/** One line, whatever the error said. */
const oneLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');

export class StateFile {
  readonly #blobDir: string;
  /** Blob keys known to be on disk. */
  readonly #stored = new Set<string>();
  /** Each image's data is hashed once: the buffer is replaced, never changed, when an image's data is. */
  readonly #keys = new WeakMap<Buffer, string>();
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> | undefined;
  #dirty = false;
  #closed = false;

  constructor(
    readonly file: string,
    private readonly capture: (blobs: BlobSink) => CloudState,
  ) {
    const { dir, name } = path.parse(file);
    this.#blobDir = path.join(dir, `${name}-images`);
  }

  /** The error that fails a start from this file. */
  failure(error: unknown): Error {
    return new Error(`simulated cloud: cannot restore state from ${this.file}: ${oneLine(error)}`);
  }

  /**
   * The saved state and its blobs, or undefined when nothing was saved yet (or `fresh`: what was
   * saved is written over, its image data removed); a file that cannot be read or parsed throws
   * (see `failure`).
   */
  async load(fresh = false): Promise<{ state: CloudState; blobs: BlobSource } | undefined> {
    for (const name of await readdir(this.#blobDir).catch(() => [])) this.#stored.add(name);
    if (fresh) return undefined;
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if (z.object({ code: z.literal('ENOENT') }).safeParse(error).success) return undefined;
      throw this.failure(error);
    }
    try {
      const parsed = stateFileSchema.safeParse(JSON.parse(text));
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new Error(`${issue?.path.join('.') || 'file'}: ${issue?.message ?? 'invalid'}`);
      }
      const blobs: BlobSource = {
        get: (key) => {
          if (!/^[0-9a-f]{64}$/.test(key) || !this.#stored.has(key)) throw new Error(`image data ${path.join(this.#blobDir, key)} is missing`);
          const data = readFileSync(path.join(this.#blobDir, key));
          this.#keys.set(data, key);
          return data;
        },
      };
      const quotas = new Map(parsed.data.quotas.map(([key, limit]) => [key, limit ?? Infinity]));
      return { state: { quotas, services: parsed.data.services }, blobs };
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** Something changed: the state is written within SAVE_DELAY_MS (after the write under way, if one is). */
  changed(): void {
    this.#dirty = true;
    if (this.#closed || this.#timer || this.#writing) return;
    this.#timer = setTimeout(() => this.#flush(), SAVE_DELAY_MS);
    this.#timer.unref();
  }

  /** Writes the state one last time, once any write under way is done. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#writing;
    await this.#write().catch((error: unknown) => this.#report(error));
  }

  /** A failed write is said, not thrown: the cloud goes on serving, and the next change tries again. */
  #report(error: unknown): void {
    process.stderr.write(`simulated cloud: saving its state to ${this.file} failed: ${oneLine(error)}\n`);
  }

  #flush(): void {
    this.#timer = undefined;
    this.#writing = this.#write()
      .catch((error: unknown) => this.#report(error))
      .finally(() => {
        this.#writing = undefined;
        if (this.#dirty) this.changed();
      });
  }

  async #write(): Promise<void> {
    this.#dirty = false;
    const blobs = new Map<string, Buffer>();
    const state = this.capture({
      put: (data) => {
        let key = this.#keys.get(data);
        if (!key) {
          key = createHash('sha256').update(data).digest('hex');
          this.#keys.set(data, key);
        }
        blobs.set(key, data);
        return key;
      },
    });
    // Taken at once, before anything can change: the files are written from this text.
    const text = JSON.stringify({ version: VERSION, quotas: [...state.quotas].map(([key, limit]) => [key, Number.isFinite(limit) ? limit : null]), services: state.services });
    const missing = [...blobs].filter(([key]) => !this.#stored.has(key));
    if (missing.length > 0) await mkdir(this.#blobDir, { recursive: true, mode: 0o700 });
    for (const [key, data] of missing) {
      await atomicWrite(path.join(this.#blobDir, key), data);
      this.#stored.add(key);
    }
    await mkdir(path.dirname(this.file), { recursive: true });
    await atomicWrite(this.file, text);
    for (const key of [...this.#stored].filter((stored) => !blobs.has(stored))) {
      this.#stored.delete(key);
      await rm(path.join(this.#blobDir, key), { force: true });
    }
  }
}

async function atomicWrite(file: string, data: string | Buffer): Promise<void> {
  const temporary = `${file}.tmp`;
  await writeFile(temporary, data, { mode: 0o600 });
  await rename(temporary, file);
}

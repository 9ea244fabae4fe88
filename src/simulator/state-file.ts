/**
 * A simulated cloud kept across restarts (SimulatorOptions.stateFile): every service's snapshot
 * (ServiceState) and the quotas in one JSON file, written atomically (a temporary file renamed over
 * it, mode 0600) at most every SAVE_DELAY_MS after a change, and on close. Image data lives beside
 * it (`blobDirOf`), one file per content named by its SHA-256, written by the cloud as it arrives
 * (BlobFiles) and removed here once no written state names it.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { BlobFiles } from './blob-files.js';
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

/** Where the image data of the cloud kept in `file` lives. */
export function blobDirOf(file: string): string {
  const { dir, name } = path.parse(file);
  return path.join(dir, `${name}-images`);
}

export class StateFile {
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> | undefined;
  #dirty = false;
  #closed = false;

  constructor(
    readonly file: string,
    private readonly blobs: BlobFiles,
    private readonly capture: (blobs: BlobSink) => CloudState,
  ) {}

  /** The error that fails a start from this file. */
  failure(error: unknown): Error {
    return new Error(`simulated cloud: cannot restore state from ${this.file}: ${oneLine(error)}`);
  }

  /**
   * The saved state and its blobs, or undefined when nothing was saved yet (or `fresh`: what was
   * saved is written over, its image data removed with the first write); a file that cannot be read
   * or parsed throws (see `failure`).
   */
  async load(fresh = false): Promise<{ state: CloudState; blobs: BlobSource } | undefined> {
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
        existing: (key) => {
          if (!this.blobs.has(key)) throw new Error(`image data ${path.join(this.blobs.dir, key)} is missing`);
          return key;
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
    // Taken before the state: a file received after it is not this write's to remove.
    const stored = this.blobs.stored();
    const named = new Set<string>();
    const state = this.capture({
      keep: (key) => {
        named.add(key);
        return key;
      },
    });
    // Taken at once, before anything can change: the files are written from this text.
    const text = JSON.stringify({
      version: VERSION,
      quotas: [...state.quotas].map(([key, limit]) => [key, Number.isFinite(limit) ? limit : null]),
      services: state.services,
    });
    await mkdir(path.dirname(this.file), { recursive: true });
    await atomicWrite(this.file, text);
    for (const [key, receipt] of stored) {
      if (!named.has(key)) await this.blobs.remove(key, receipt);
    }
  }
}

async function atomicWrite(file: string, data: string): Promise<void> {
  const temporary = `${file}.tmp`;
  await writeFile(temporary, data, { mode: 0o600 });
  await rename(temporary, file);
}

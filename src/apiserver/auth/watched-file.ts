/**
 * A configuration file parsed at start and parsed again whenever it changes,
 * so tokens and policies can be rotated without a restart. A change that does
 * not parse leaves the previous contents in force: a half-saved file must not
 * lock everyone out.
 */
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { fallbackLogger } from '../../observability/log.js';

export interface WatchedFileOptions {
  /** Receives reload failures, which no request can be told about. Default: logged as an error. */
  onError?: (error: Error) => void;
}

/** Editors and `cp` truncate before they write; waiting this long after the last event reads the finished file. */
const settleMs = 100;

export class WatchedFile<T> {
  /** The last text read, valid or not, so one bad save is reported once. */
  private lastRead: string;
  private value: T;
  private readonly watcher: FSWatcher;
  private readonly onError: (error: Error) => void;
  private settleTimer: NodeJS.Timeout | undefined;
  private reloading: Promise<void> = Promise.resolve();

  /** Reads and parses the file; a missing or invalid file is an error here, unlike on reload. */
  static async open<T>(filePath: string, parse: (text: string) => T, options: WatchedFileOptions = {}): Promise<WatchedFile<T>> {
    const text = await readText(filePath);
    return new WatchedFile(filePath, parse, text, parseOrExplain(filePath, parse, text), options);
  }

  private constructor(
    readonly path: string,
    private readonly parse: (text: string) => T,
    text: string,
    value: T,
    options: WatchedFileOptions,
  ) {
    this.lastRead = text;
    this.value = value;
    this.onError = options.onError ?? ((error) => fallbackLogger.error({ component: 'auth', err: error }, 'reloading a watched file failed'));
    // The directory, not the file: a file replaced by rename (editors, Secret
    // volume symlink swaps) would leave a watch on the old inode silent. The
    // directory may also hold a busy database, so other names are ignored.
    const name = basename(path);
    this.watcher = watch(dirname(path), { persistent: false }, (_event, changed) => {
      if (changed === null || changed === name || changed.startsWith('..')) this.scheduleReload();
    });
    this.watcher.on('error', (error) => this.onError(new Error(`${path}: watching for changes failed: ${error.message}`)));
  }

  get current(): T {
    return this.value;
  }

  /** Reads the file now; resolves once the new contents are in force (or were rejected). */
  reload(): Promise<void> {
    this.reloading = this.reloading.then(() => this.readAndSwap());
    return this.reloading;
  }

  close(): void {
    clearTimeout(this.settleTimer);
    this.watcher.close();
  }

  private scheduleReload(): void {
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => void this.reload(), settleMs);
    this.settleTimer.unref();
  }

  private async readAndSwap(): Promise<void> {
    try {
      const text = await readText(this.path);
      if (text === this.lastRead) return;
      this.lastRead = text;
      this.value = parseOrExplain(this.path, this.parse, text);
    } catch (error) {
      this.onError(new Error(`${(error as Error).message}; keeping the previous contents`));
    }
  }
}

async function readText(filePath: string): Promise<string> {
  try {
    return await readFile(filePath, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(code === 'ENOENT' ? `${filePath}: no such file` : `${filePath}: cannot read: ${(error as Error).message}`);
  }
}

function parseOrExplain<T>(filePath: string, parse: (text: string) => T, text: string): T {
  try {
    return parse(text);
  } catch (error) {
    throw new Error(`${filePath}: ${(error as Error).message}`);
  }
}

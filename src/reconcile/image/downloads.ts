/**
 * The bounds on ORC Image downloads an operator sets (`npm start` flags
 * --image-download-*), and the download slots that keep one namespace's
 * downloads from holding every Image worker.
 *
 * A download runs inside an Image worker's pass, for as long as it takes
 * (at most its deadline). The slots bound how many run at once in this
 * process, and how many of those one namespace may hold: a namespace whose
 * sources are slow waits for its own slots, while another namespace's Image
 * finds a free slot and a free worker (there are fewer slots than workers,
 * so passes that download nothing always have a worker too).
 */
import { DestinationRule, guardedAgents, parseAllowance, type DownloadAgents } from './destinations.js';
import type { ObjectName } from '../../storage/interface.js';

export interface ImageDownloadOptions {
  /** Destinations allowed although their addresses are refused by default (destinations.ts): `10.0.0.0/8`, `127.0.0.1:6445`. */
  allow?: readonly string[];
  /** The largest download, and the largest image after decompression, in bytes. */
  maxBytes?: number;
  /** The most bytes a decompressor may make of one downloaded byte, once past the first 64 MiB. */
  maxRatio?: number;
  /** One attempt's deadline, from the request to the end of the upload. */
  timeoutMs?: number;
  /** Downloads at once in this process. */
  concurrency?: number;
  /** Downloads at once of one namespace's Images. */
  perNamespace?: number;
}

const gib = 1024 ** 3;
/**
 * The defaults, and why. 16 GiB: Cluster API node images (image-builder's qcow2) are 2-8 GB, a raw
 * one rarely past 10; the cap stops a URL from filling the cloud's image store. 100 to 1: images
 * compress 2-10 to 1, a raw one with empty space 30 to 1; a bomb (zeros) 1,000 to 1 and more.
 * 30 minutes: 16 GiB at 10 MB/s; a source slower than that is better fixed than waited for.
 * 6 downloads at once, 3 per namespace: the Image controller has 10 workers, so 4 are always free
 * for passes that download nothing, and one namespace leaves half the slots to the others.
 */
export const imageDownloadDefaults = { maxBytes: 16 * gib, maxRatio: 100, timeoutMs: 30 * 60_000, concurrency: 6, perNamespace: 3 } as const;
/** The decompressed bytes a ratio is not judged on: the first part of a disk image (partition tables, an empty boot partition) compresses far better than the rest. */
export const ratioFloorBytes = 64 * 1024 ** 2;

/** Checks the allowances (a usage error names the bad one); throws Error. */
export function checkAllowances(allow: readonly string[]): void {
  for (const text of allow) parseAllowance(text);
}

export interface DownloadLimits {
  agents: DownloadAgents;
  maxBytes: number;
  maxRatio: number;
  timeoutMs: number;
}

/** A slot taken; release it when the download has ended, however it ended. */
interface DownloadSlot {
  release(): void;
}

/**
 * Slots by namespace. A pass that finds none free says why and is woken when
 * one is released (the wake asks for a pass of each waiting Image; whichever
 * comes first takes the slot, the others wait again).
 */
export class DownloadSlots {
  private readonly running = new Map<string, number>();
  private total = 0;
  /** The Images waiting for a slot, by `namespace/name`. */
  private readonly waiting = new Map<string, ObjectName>();
  private wake: (image: ObjectName) => void = () => undefined;

  constructor(
    readonly limit: number,
    readonly perNamespace: number,
  ) {}

  wakeWith(wake: (image: ObjectName) => void): void {
    this.wake = wake;
  }

  /** A slot for the Image, held under its namespace, or what it waits for. */
  take(image: ObjectName): DownloadSlot | string {
    const { namespace } = image;
    const waiter = `${namespace}/${image.name}`;
    const mine = this.running.get(namespace) ?? 0;
    if (mine >= this.perNamespace || this.total >= this.limit) {
      this.waiting.set(waiter, image);
      return mine >= this.perNamespace
        ? `a download slot: namespace ${namespace} has ${mine} downloads running, its share of the ${this.limit}`
        : `a download slot: all ${this.limit} are taken`;
    }
    this.waiting.delete(waiter);
    this.running.set(namespace, mine + 1);
    this.total++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        const left = (this.running.get(namespace) ?? 1) - 1;
        if (left === 0) this.running.delete(namespace);
        else this.running.set(namespace, left);
        const woken = [...this.waiting.values()];
        this.waiting.clear();
        for (const waiter of woken) this.wake(waiter);
      },
    };
  }
}

export interface ImageDownloads {
  limits: DownloadLimits;
  slots: DownloadSlots;
}

/** The downloads of one reconciler; `workers` is the Image controller's, which the slots stay below. */
export function imageDownloads(options: ImageDownloadOptions = {}, workers = 10): ImageDownloads {
  const rule = new DestinationRule((options.allow ?? []).map(parseAllowance));
  const limit = Math.max(1, Math.min(options.concurrency ?? imageDownloadDefaults.concurrency, workers - 1));
  const perNamespace = Math.max(1, Math.min(options.perNamespace ?? imageDownloadDefaults.perNamespace, limit));
  return {
    limits: {
      agents: guardedAgents(rule),
      maxBytes: options.maxBytes ?? imageDownloadDefaults.maxBytes,
      maxRatio: options.maxRatio ?? imageDownloadDefaults.maxRatio,
      timeoutMs: options.timeoutMs ?? imageDownloadDefaults.timeoutMs,
    },
    slots: new DownloadSlots(limit, perNamespace),
  };
}

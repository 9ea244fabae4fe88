/**
 * The HTTP side of one watch: events encoded as newline-delimited JSON on a
 * chunked response, buffered until the headers go out (the initial state of
 * a watch-list arrives before that), periodic bookmarks, the watch's time
 * limit, and an end that happens once whichever of client, server, storage
 * or a slow reader ends it first. A client that reads too slowly to keep the
 * response buffer under its bound is cut off rather than let it grow.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiError } from '../errors.js';
import type { ActiveWatch, ApiEvent } from '../store/watch.js';
import type { JsonObject } from '../../storage/interface.js';

export interface WatchStreamOptions {
  /** One event as a line of the response (Table rows, PartialObjectMetadata or the object); bytes when shared between watchers. */
  encode(event: ApiEvent): string | Buffer;
  /** The bookmark object at a revision; undefined when the client did not ask for bookmarks. */
  bookmark?: (revision: number) => JsonObject;
  bookmarkIntervalMs: number;
  /** When the server ends the watch (a bookmark goes first when asked for). */
  durationMs: number;
  /** The most a slow reader may leave unread. */
  maxBufferBytes: number;
  /** Called once, when the stream ends. */
  onEnd(): void;
}

export class WatchStream {
  private open = true;
  private streaming = false;
  private readonly pending: (string | Buffer)[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private active: ActiveWatch | undefined;

  constructor(
    private readonly request: IncomingMessage,
    private readonly response: ServerResponse,
    private readonly options: WatchStreamOptions,
  ) {}

  /** An event from the store's watch. */
  emit(event: ApiEvent): void {
    this.write(this.options.encode(event));
  }

  /** The store ended the watch (compaction, for one): the client gets the Status and must relist. */
  fail(error: ApiError): void {
    this.write(`${JSON.stringify({ type: 'ERROR', object: error.toStatus() })}\n`);
    this.end();
  }

  /** Sends the headers and what was buffered, then streams until the first end. */
  start(active: ActiveWatch, contentType: string): void {
    this.active = active;
    this.response.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    this.response.flushHeaders();
    this.streaming = true;
    if (this.pending.length > 0) this.response.write(Buffer.concat(this.pending.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk))));
    if (!this.open) {
      // The watch failed while its initial state was being read: what was buffered is all there is.
      this.finish();
      return;
    }
    this.request.on('close', () => this.end());
    this.response.on('close', () => this.end());
    // A client gone while the initial state was read has closed already: no event will tell.
    if (this.response.destroyed) {
      this.end();
      return;
    }
    this.timers.push(
      setTimeout(async () => {
        if (this.options.bookmark) await this.sendBookmark();
        this.end();
      }, this.options.durationMs),
    );
    if (this.options.bookmark) this.timers.push(setInterval(() => void this.sendBookmark(), this.options.bookmarkIntervalMs));
  }

  private write(chunk: string | Buffer): void {
    if (!this.open) return;
    if (!this.streaming) {
      this.pending.push(chunk);
      return;
    }
    this.response.write(chunk);
    if (this.response.writableLength > this.options.maxBufferBytes) this.end();
  }

  private async sendBookmark(): Promise<void> {
    if (!this.open || !this.active || !this.options.bookmark) return;
    const revision = await this.active.currentRevision();
    this.write(`${JSON.stringify({ type: 'BOOKMARK', object: this.options.bookmark(revision) })}\n`);
  }

  private end(): void {
    if (!this.open) return;
    this.open = false;
    if (this.streaming) this.finish();
  }

  private finish(): void {
    this.active?.stop();
    for (const timer of this.timers) clearTimeout(timer);
    this.options.onEnd();
    this.response.end();
  }
}

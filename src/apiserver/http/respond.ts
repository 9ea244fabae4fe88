/** Writing responses: JSON objects, Status errors and Warning headers. */
import type { ServerResponse } from 'node:http';
import { setImmediate as setImmediatePromise } from 'node:timers/promises';
import { ApiError, errors } from '../errors.js';

export function sendJson(response: ServerResponse, code: number, body: unknown, contentType = 'application/json', warnings: string[] = []): void {
  const text = JSON.stringify(body);
  setWarnings(response, warnings);
  response.writeHead(code, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}

const comma = ','.charCodeAt(0);

/**
 * Items in a written piece of a streamed list, at most: about 50 KB of JSON for a typical CAPO object.
 * A piece over V8's large-object size (128 KB) is a string on pages of its own, and its bytes a block
 * malloc maps afresh: in pieces of 100, encoding 10,000 objects faulted in 5,300 new pages (21 MB) and
 * took three times as long (BENCHMARKS.md, apiserver).
 */
const maxPieceItems = 25;

/**
 * What each later piece is sized to, from the bytes an item took in the piece before: objects of a
 * megabyte go out one a piece, so encoding a piece holds the thread for about one such object, not 25.
 */
const pieceBytes = 48 * 1024;

/**
 * A list written as it is encoded, as kube-apiserver streams large lists: the list's head, then its
 * `arrayKey` array (items, or a Table's rows) a piece at a time, each element passed through `present`
 * (a Table row made from an object, say) as its piece is encoded. No single string or buffer then
 * holds the whole list (19 MB for 10,000 OpenStackClusters), and other requests, watch deliveries
 * among them, run between pieces instead of waiting for the whole encoding. A list that fits in one
 * piece goes out whole, with a Content-Length.
 */
export async function sendJsonList<T>(
  response: ServerResponse,
  code: number,
  body: Record<string, unknown>,
  arrayKey: string,
  contentType = 'application/json',
  present: (element: T) => unknown = (element) => element,
): Promise<void> {
  const { [arrayKey]: array, ...head } = body;
  if (!Array.isArray(array)) return sendJson(response, code, body, contentType);
  if (array.length <= maxPieceItems) return sendJson(response, code, { ...head, [arrayKey]: array.map(present) }, contentType);
  // The array goes last, so the head's text ends with its opening bracket (then the closing braces).
  const headText = JSON.stringify({ ...head, [arrayKey]: [] });
  response.writeHead(code, { 'Content-Type': contentType });
  let writable = response.write(headText.slice(0, -2));
  let start = 0;
  let items = maxPieceItems;
  while (start < array.length) {
    await (writable ? setImmediatePromise() : drainedOrClosed(response));
    if (response.destroyed) return;
    // Encoded to bytes here, once: a string written to a chunked response is measured first, and the
    // separator joined to the piece as text made a copy of the whole piece to measure. The piece's
    // brackets are one byte each: the opening one becomes the separator from the previous piece.
    const piece = Buffer.from(JSON.stringify(array.slice(start, start + items).map(present)));
    if (start > 0) piece[0] = comma;
    writable = response.write(piece.subarray(start === 0 ? 1 : 0, -1));
    start += items;
    items = Math.min(maxPieceItems, Math.max(1, Math.round((items * pieceBytes) / piece.length)));
  }
  response.end(headText.slice(-2));
}

/** Resolves when the response can take more, or will never take more. */
function drainedOrClosed(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

/** kube's Warning header format: `299 - "<text>"`, one header per warning. */
export function setWarnings(response: ServerResponse, warnings: string[]): void {
  const unique = [...new Set(warnings)];
  if (unique.length > 0)
    response.setHeader(
      'Warning',
      unique.map((w) => `299 - ${JSON.stringify(w)}`),
    );
}

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return errors.internal(error instanceof Error ? error.message : String(error));
}

export function sendError(response: ServerResponse, error: unknown): void {
  const apiError = toApiError(error);
  if (response.headersSent) {
    response.destroy();
    return;
  }
  for (const [name, value] of Object.entries(apiError.headers)) response.setHeader(name, value);
  sendJson(response, apiError.code, apiError.toStatus());
}

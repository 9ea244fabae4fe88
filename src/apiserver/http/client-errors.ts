/**
 * Answers requests Node's HTTP parser refuses before any handler runs (a
 * request line or headers over 16 KiB, malformed syntax) with the status
 * Node's own handler picks (431, 413, 408 or 400), and lets the client read
 * it: what the client is still sending is drained until it closes or a few
 * seconds pass. Node 24's default handler destroys the socket at once, and a
 * TLS connection closed with unread bytes is reset, so the client saw
 * ECONNRESET instead of the status.
 */
import type { Socket } from 'node:net';
import type { Server } from 'node:tls';

/** How long a refused client may keep sending before the connection is cut. */
const drainMs = 5_000;

const statusOfParserError: Readonly<Record<string, [number, string]>> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'Payload Too Large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout'],
};

export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, text] = statusOfParserError[error.code ?? ''] ?? [400, 'Bad Request'];
    socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    socket.resume();
    setTimeout(() => socket.destroy(), drainMs).unref();
  });
}

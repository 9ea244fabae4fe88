/**
 * A TCP proxy in front of a server, which can go silent the way a broken network path does:
 * `stall()` leaves every connection open but forwards nothing on it ever again, nor on the
 * connections opened until `heal()`; only a client's own deadlines get it out. Connections opened
 * after `heal()` are forwarded again. TLS passes through untouched.
 */
import net from 'node:net';

export class StallingProxy {
  private readonly sockets = new Set<net.Socket>();
  private stalled = false;

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<StallingProxy> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new StallingProxy(server, (server.address() as net.AddressInfo).port);
    server.on('connection', (client) => proxy.accept(client, target));
    return proxy;
  }

  /** From now on nothing more is forwarded on the open connections, nor on the new ones until heal(). */
  stall(): void {
    this.stalled = true;
    for (const socket of this.sockets) {
      socket.unpipe();
      socket.pause();
    }
  }

  /** New connections are forwarded again; the stalled ones stay silent. */
  heal(): void {
    this.stalled = false;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket, target: { host: string; port: number }): void {
    this.track(client);
    // Never read: what the client sends stays in the kernel's buffers.
    if (this.stalled) return;
    const upstream = net.connect(target.port, target.host);
    this.track(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) socket.on('error', close).on('end', close);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    // A connection the other side resets while stalled must not fail the test process.
    socket.on('error', () => undefined);
    socket.on('close', () => this.sockets.delete(socket));
  }
}

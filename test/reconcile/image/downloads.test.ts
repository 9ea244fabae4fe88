/**
 * ORC Image downloads are bounded (issue 47: H3, M4, M5 and the URL part
 * of "Low"), through kubectl on the embedded default with the operator's
 * options as `npm start` takes them (--image-download-allow,
 * --image-download-max-bytes, --image-download-timeout):
 *
 * - a destination on loopback is refused, by address, by a name that
 *   resolves to it, and through a redirect from an allowed mirror, and
 *   nothing reaches it;
 * - a source over the cap, and a small gzip that inflates past it, are
 *   refused with a terminal condition, and Glance never activates them;
 * - slow sources are stopped by the deadline, and while they run one
 *   namespace's downloads hold only their share of the Image workers, so
 *   another namespace's Image becomes Available promptly;
 * - a URL's user, password and query appear neither in conditions, nor in
 *   Events, nor in the log.
 *
 * This test's mirror is on loopback too, so it is allowed explicitly: its
 * address and port only, which also shows the allowance at work. Its
 * content is made from a seeded generator.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createLogger } from '../../../src/observability/log.js';
import { loadCloud, OpenStackSession, createServiceClients, type ServiceClients } from '../../../src/openstack/index.js';
import { waitForObject } from '../../../harness/cluster-flow.js';
import type { TestServer } from '../../../harness/test-server.js';
import { startExampleServer, type ExampleServer } from '../flows/examples.js';

const mib = 1024 * 1024;
const maxBytes = 4 * mib;
/** Long enough that a prompt Image is far inside it, short enough to see a slow download stopped. */
const deadlineSeconds = 30;
/** How soon another namespace's Image must be Available while the slow ones run: well inside the deadline, so without the slots it could not be. */
const promptSeconds = 15;

const condition = z.looseObject({ type: z.string(), status: z.string(), reason: z.string(), message: z.string().optional() });
const imageView = z.looseObject({
  status: z.looseObject({ id: z.string().optional(), downloadAttempts: z.number().optional(), conditions: z.array(condition).optional() }).default({}),
});
type ImageView = z.infer<typeof imageView>;

/** xorshift32 from a fixed seed: the same bytes on every run. */
function seededBytes(length: number, seed = 0x2f6b_1a47): Buffer {
  const bytes = Buffer.alloc(length);
  let state = seed;
  for (let index = 0; index < length; index++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    bytes[index] = state & 255;
  }
  return bytes;
}

let example: ExampleServer;
let server: TestServer;
let session: OpenStackSession;
let cloud: ServiceClients;
const logLines: string[] = [];

/** A server of ours on loopback that is not allowed: whatever reaches it is a leak. */
let inside: Server;
let insideBase: string;
let insideRequests = 0;

/** The allowed mirror. */
let mirror: Server;
let mirrorBase: string;
const small = seededBytes(64 * 1024);
const large = seededBytes(maxBytes + mib, 7);
/** 64 MiB of zeros: about 64 KiB as gzip. */
const bomb = gzipSync(Buffer.alloc(64 * mib));
/** Slow downloads under way, and who waits for a number of them. */
const slowResponses = new Set<ServerResponse>();
let slowWaiter: { count: number; resolve: () => void } | undefined;

function startMirror(): Server {
  return createServer((request, response) => {
    const url = request.url ?? '';
    if (url === '/small.raw') return void response.writeHead(200, { 'content-length': small.length }).end(small);
    if (url === '/to-inside') return void response.writeHead(302, { location: `${insideBase}/secret` }).end();
    if (url === '/bomb.raw.gz') return void response.writeHead(200, { 'content-length': bomb.length }).end(bomb);
    if (url === '/large-declared.raw') return void response.writeHead(200, { 'content-length': large.length }).end(large);
    if (url === '/large.raw') {
      // No length said up front: the cap is met while counting.
      response.writeHead(200);
      for (let offset = 0; offset < large.length; offset += 64 * 1024) response.write(large.subarray(offset, offset + 64 * 1024));
      return void response.end();
    }
    if (url.startsWith('/slow/')) {
      // A byte every 500 ms, never the end: no idle timeout ever fires.
      response.writeHead(200);
      slowResponses.add(response);
      const timer = setInterval(() => response.write(Buffer.of(0)), 500);
      response.on('close', () => {
        clearInterval(timer);
        slowResponses.delete(response);
      });
      if (slowWaiter && slowResponses.size >= slowWaiter.count) slowWaiter.resolve();
      return;
    }
    response.writeHead(404).end();
  });
}

async function listen(target: Server): Promise<string> {
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  return `127.0.0.1:${(target.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  inside = createServer((_request, response) => {
    insideRequests++;
    response.end('what only this host should read');
  });
  const insideAddress = await listen(inside);
  insideBase = `http://${insideAddress}`;
  mirror = startMirror();
  const mirrorAddress = await listen(mirror);
  mirrorBase = `http://${mirrorAddress}`;
  const logger = createLogger({ level: 'trace', destination: { write: (line: string) => void logLines.push(line) } });
  example = await startExampleServer({}, {}, undefined, {
    imageDownloads: { allow: [mirrorAddress], maxBytes, timeoutMs: deadlineSeconds * 1000 },
    logger,
  });
  server = example.server;
  const credentials = await readFile(path.join(example.manifests, '00-cloud-credentials.yaml'), 'utf8');
  for (const namespace of ['default', 'tenant-b']) {
    const applied = await server.kubectl(['apply', '-f', '-'], { input: credentials.replaceAll('namespace: default', `namespace: ${namespace}`) });
    if (applied.code !== 0) throw new Error(applied.stderr);
  }
  session = await OpenStackSession.create(loadCloud({ cloudsYaml: server.cloud!.cloudsYaml('sim'), cloudName: 'sim' }));
  cloud = createServiceClients(session);
}, 60_000);

afterAll(async () => {
  session?.close();
  await example?.stop();
  for (const response of slowResponses) response.destroy();
  mirror?.closeAllConnections();
  mirror?.close();
  inside?.close();
});

function managedImage(name: string, download: Record<string, unknown>, namespace = 'default'): string {
  return JSON.stringify({
    apiVersion: 'openstack.k-orc.cloud/v1alpha1',
    kind: 'Image',
    metadata: { name, namespace },
    spec: { cloudCredentialsRef: { secretName: 'demo-cloud-config', cloudName: 'openstack' }, resource: { content: { diskFormat: 'raw', download } } },
  });
}

async function apply(manifest: string): Promise<void> {
  const applied = await server.kubectl(['apply', '-f', '-'], { input: manifest });
  expect(applied.code, applied.stderr).toBe(0);
}

const conditionOf = (view: ImageView, type: string) => view.status.conditions?.find((candidate) => candidate.type === type);

/** kubectl in `namespace`. */
function kubectlIn(namespace: string): TestServer['kubectl'] {
  return (args, options) => server.kubectl([...args, '-n', namespace], options);
}

async function untilImage(name: string, what: string, reached: (view: ImageView) => boolean, seconds = 60, namespace = 'default'): Promise<ImageView> {
  return imageView.parse(
    await waitForObject(kubectlIn(namespace), `image.openstack.k-orc.cloud/${name}`, what, (object) => reached(imageView.parse(object)), seconds),
  );
}

/** Waits for the terminal condition a refusal gives, and returns it. */
async function refused(name: string): Promise<ImageView> {
  const view = await untilImage(name, 'a terminal condition', (candidate) => conditionOf(candidate, 'Progressing')?.reason === 'InvalidConfiguration');
  expect(conditionOf(view, 'Progressing')?.status).toBe('False');
  expect(conditionOf(view, 'Available')?.status).toBe('False');
  return view;
}

describe('ORC Image downloads', () => {
  it('refuses a destination on loopback, named by its address or by a name resolving to it, and nothing reaches it', async () => {
    const port = new URL(insideBase).port;
    await apply(managedImage('inside-by-address', { url: `http://127.0.0.1:${port}/secret` }));
    await apply(managedImage('inside-by-name', { url: `http://localhost:${port}/secret` }));
    const byAddress = await refused('inside-by-address');
    expect(conditionOf(byAddress, 'Progressing')?.message).toBe(
      `refused to download from 127.0.0.1:${port}, a loopback address; an operator may allow it with --image-download-allow`,
    );
    const byName = await refused('inside-by-name');
    expect(conditionOf(byName, 'Progressing')?.message).toMatch(
      new RegExp(`^refused to download from localhost:${port}: it resolves to .*\\(a loopback address\\)`),
    );
    // Refused before a connection: the Glance image waits for content, and the server inside was never asked.
    expect((await cloud.glance.getImage(byAddress.status.id!)).status).toBe('queued');
    expect(insideRequests).toBe(0);
  });

  it('refuses a redirect from the allowed mirror to loopback', async () => {
    await apply(managedImage('redirected-inside', { url: `${mirrorBase}/to-inside` }));
    const view = await refused('redirected-inside');
    expect(conditionOf(view, 'Progressing')?.message).toBe(
      `refused to download from 127.0.0.1:${new URL(insideBase).port}, a loopback address; an operator may allow it with --image-download-allow`,
    );
    expect(insideRequests).toBe(0);
  });

  it('refuses a source over the size cap, whether it says its length or not', async () => {
    await apply(managedImage('large', { url: `${mirrorBase}/large.raw` }));
    await apply(managedImage('large-declared', { url: `${mirrorBase}/large-declared.raw` }));
    const counted = await refused('large');
    expect(conditionOf(counted, 'Progressing')?.message).toBe(`${mirrorBase}/large.raw is larger than the 4 MiB allowed (--image-download-max-bytes)`);
    const declared = await refused('large-declared');
    expect(conditionOf(declared, 'Progressing')?.message).toBe(
      `${mirrorBase}/large-declared.raw (5 MiB) is larger than the 4 MiB allowed (--image-download-max-bytes)`,
    );
    for (const view of [counted, declared]) {
      expect(view.status.downloadAttempts).toBe(1);
      expect((await cloud.glance.getImage(view.status.id!)).status).toBe('queued');
    }
  });

  it('refuses a decompression bomb: a small gzip inflating past the cap', async () => {
    expect(bomb.length).toBeLessThan(maxBytes / 16);
    await apply(managedImage('bomb', { url: `${mirrorBase}/bomb.raw.gz`, decompress: 'gz' }));
    const view = await refused('bomb');
    expect(conditionOf(view, 'Progressing')?.message).toBe(
      `the image decompressed from ${mirrorBase}/bomb.raw.gz is larger than the 4 MiB allowed (--image-download-max-bytes)`,
    );
    expect((await cloud.glance.getImage(view.status.id!)).status).toBe('queued');
  });

  it(
    "stops slow downloads at their deadline, and meanwhile another namespace's Image becomes Available promptly",
    async () => {
      const slow = Array.from({ length: 10 }, (_, index) => `slow-${index}`);
      // At least the per-namespace share of downloads under way before the other namespace's Image comes.
      const started = new Promise<void>((resolve) => {
        slowWaiter = { count: 3, resolve };
      });
      for (const name of slow) await apply(managedImage(name, { url: `${mirrorBase}/slow/${name}` }));
      try {
        await started;
        const applied = Date.now();
        await apply(managedImage('prompt', { url: `${mirrorBase}/small.raw` }, 'tenant-b'));
        const available = await untilImage('prompt', 'Available', (view) => conditionOf(view, 'Available')?.status === 'True', promptSeconds, 'tenant-b').catch(
          (error: unknown) => error,
        );
        const seconds = (Date.now() - applied) / 1000;
        expect(available, `tenant-b/prompt was not Available within ${promptSeconds}s`).not.toBeInstanceOf(Error);
        expect(seconds).toBeLessThan(promptSeconds);
        console.info(`tenant-b/prompt Available ${seconds.toFixed(1)} s after it was applied, beside 10 slow downloads in default`);
        // Those of the slow namespace past its share wait for a slot, said so, with no attempt counted.
        const waiting = await untilImage('slow-9', 'read', () => true);
        if (waiting.status.downloadAttempts === undefined)
          expect(conditionOf(waiting, 'Progressing')?.message).toMatch(/^waiting for a download slot: namespace default has 3 downloads running/);
        // The deadline ends each slow attempt, a failure as any other (counted, retried with backoff). Read from the log, which keeps
        // it: the conditions move on at once, to the next attempt or to waiting for a slot again.
        const deadlineMissed = new RegExp(
          `^downloading ${mirrorBase}/slow/slow-\\d did not finish within its deadline of ${deadlineSeconds}s \\(--image-download-timeout\\); \\d+ bytes had arrived$`,
        );
        const missed = () =>
          logLines
            .map((line) => JSON.parse(line) as { controller?: string; err?: { type?: string; message?: string } })
            .find((line) => line.controller === 'image' && deadlineMissed.test(line.err?.message ?? ''));
        await vi.waitFor(() => expect(missed()).toBeDefined(), { timeout: (deadlineSeconds + 30) * 1000, interval: 250 });
        expect(missed()?.err?.type).toBe('DownloadError');
        const attempts = await untilImage('slow-0', 'read', () => true);
        expect(attempts.status.downloadAttempts).toBeGreaterThanOrEqual(1);
      } finally {
        const deleted = await server.kubectl(['delete', 'images.openstack.k-orc.cloud', ...slow, '--wait=false']);
        expect(deleted.code, deleted.stderr).toBe(0);
      }
    },
    (deadlineSeconds + 90) * 1000,
  );

  it("leaves a URL's user, password and query out of conditions, Events and the log", async () => {
    const secrets = ['s3cret-user', 's3cret-password', 's3cret-signature'];
    const url = `http://s3cret-user:s3cret-password@${new URL(mirrorBase).host}/missing.raw?X-Amz-Signature=s3cret-signature`;
    // In tenant-b: default's slots may still be held by the slow downloads being deleted, until their deadline.
    await apply(managedImage('signed', { url }, 'tenant-b'));
    const failed = await untilImage('signed', 'a failed attempt', (view) => conditionOf(view, 'Progressing')?.reason === 'TransientError', 60, 'tenant-b');
    expect(conditionOf(failed, 'Progressing')?.message).toBe(`downloading ${mirrorBase}/missing.raw: the server answered 404 Not Found`);
    const events = await server.kubectl(['get', 'events', '-A', '-o', 'json']);
    const shown = [JSON.stringify(failed.status), events.stdout, logLines.join('')];
    // The failures were logged, with the URL as it may be shown.
    expect(logLines.some((line) => line.includes(`${mirrorBase}/missing.raw`))).toBe(true);
    for (const text of shown) for (const secret of secrets) expect(text).not.toContain(secret);
  }, 90_000);
});

/**
 * ORC Images through kubectl on the embedded default: a managed Image is
 * created in Glance with our owner tag, its gzip-compressed content
 * downloaded from the simulated cloud's mirror, checked against the
 * published hash, decompressed (gzip, xz and bzip2) and uploaded, then deleted with the object; a
 * wrong hash is retried five times, as ORC does, then stops with a terminal
 * condition; an imported Image finds an existing image and leaves it in
 * Glance when deleted; ORC's CRD rules are enforced. The xz and bzip2
 * fixtures come from a mirror of this test's on loopback, which the server
 * refuses unless allowed: it is allowed, that address and port only, as an
 * operator would with --image-download-allow.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadCloud, OpenStackSession, createServiceClients, type ServiceClients } from '../../../src/openstack/index.js';
import { getObject, waitForObject } from '../../../harness/cluster-flow.js';
import type { TestServer } from '../../../harness/test-server.js';
import { startExampleServer, type ExampleServer } from '../flows/examples.js';

const condition = z.looseObject({ type: z.string(), status: z.string(), reason: z.string(), message: z.string().optional() });
const imageView = z.looseObject({
  metadata: z.looseObject({ uid: z.string(), finalizers: z.array(z.string()).optional() }),
  status: z
    .looseObject({
      id: z.string().optional(),
      downloadAttempts: z.number().optional(),
      resource: z
        .looseObject({
          status: z.string().optional(),
          sizeB: z.number().optional(),
          hash: z.looseObject({ algorithm: z.string(), value: z.string() }).optional(),
          tags: z.array(z.string()).optional(),
        })
        .optional(),
      conditions: z.array(condition).optional(),
    })
    .default({}),
});
type ImageView = z.infer<typeof imageView>;

let example: ExampleServer;
let server: TestServer;
let session: OpenStackSession;
let cloud: ServiceClients;
let mirror: string;
let sums: Map<string, string>;
/** This test's mirror of the xz and bzip2 fixtures, and what it serves. */
let fixtureMirror: Server;
let fixtureBase: string;
const fixtureFiles = new Map<string, Buffer>();

beforeAll(async () => {
  const fixtures = path.join(import.meta.dirname, 'fixtures');
  for (const file of ['node.raw.xz', 'node.raw.bz2']) fixtureFiles.set(file, await readFile(path.join(fixtures, file)));
  fixtureMirror = createServer((request, response) => {
    const data = fixtureFiles.get(request.url?.slice(1) ?? '');
    if (!data) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-length': data.length }).end(data);
  });
  await new Promise<void>((resolve) => fixtureMirror.listen(0, '127.0.0.1', resolve));
  const mirrorAddress = `127.0.0.1:${(fixtureMirror.address() as AddressInfo).port}`;
  fixtureBase = `http://${mirrorAddress}`;
  example = await startExampleServer({}, {}, undefined, { imageDownloads: { allow: [mirrorAddress] } });
  server = example.server;
  const apply = await server.kubectl(['apply', '-f', `${example.manifests}/00-cloud-credentials.yaml`]);
  if (apply.code !== 0) throw new Error(apply.stderr);
  session = await OpenStackSession.create(loadCloud({ cloudsYaml: server.cloud!.cloudsYaml('sim'), cloudName: 'sim' }));
  cloud = createServiceClients(session);
  mirror = `${server.cloud!.url}/downloads`;
  const listing = await (await fetch(`${mirror}/SHA256SUMS`)).text();
  sums = new Map(
    listing
      .trim()
      .split('\n')
      .map((line) => line.split(/\s+/).reverse() as [string, string]),
  );
}, 60_000);

afterAll(async () => {
  session?.close();
  await example?.stop();
  fixtureMirror?.close();
});

const condition_ = (view: ImageView, type: string) => view.status.conditions?.find((candidate) => candidate.type === type);

function managedImage(name: string, download: Record<string, unknown>, resource: Record<string, unknown> = {}): string {
  return JSON.stringify({
    apiVersion: 'openstack.k-orc.cloud/v1alpha1',
    kind: 'Image',
    metadata: { name, namespace: 'default' },
    spec: {
      cloudCredentialsRef: { secretName: 'demo-cloud-config', cloudName: 'openstack' },
      resource: { content: { diskFormat: 'qcow2', download }, ...resource },
    },
  });
}

async function kubectl(args: string[], input?: string) {
  return server.kubectl(args, input === undefined ? {} : { input });
}

async function untilImage(name: string, what: string, reached: (view: ImageView) => boolean, seconds = 60): Promise<ImageView> {
  return imageView.parse(
    await waitForObject(server.kubectl, `image.openstack.k-orc.cloud/${name}`, what, (object) => reached(imageView.parse(object)), seconds),
  );
}

describe('ORC Images', () => {
  it('creates a managed image, uploads its verified and decompressed content, and reports it Available', async () => {
    const applied = await kubectl(
      ['apply', '-f', '-'],
      managedImage(
        'node',
        { url: `${mirror}/node.qcow2.gz`, decompress: 'gz', hash: { algorithm: 'sha256', value: sums.get('node.qcow2.gz') } },
        {
          name: 'capo-node',
          tags: ['kubernetes'],
          properties: { architecture: 'x86_64', operatingSystem: { distro: 'ubuntu', version: '24.04' }, hardware: { diskBus: 'virtio' } },
        },
      ),
    );
    expect(applied.code, applied.stderr).toBe(0);
    const available = await untilImage('node', 'Available', (view) => condition_(view, 'Available')?.status === 'True');
    expect(condition_(available, 'Progressing')).toMatchObject({ status: 'False', reason: 'Success' });
    expect(available.status.downloadAttempts).toBe(1);
    const stored = gunzipSync(await (await fetch(`${mirror}/node.qcow2.gz`)).arrayBuffer().then((bytes) => Buffer.from(bytes)));
    expect(available.status.resource).toMatchObject({
      status: 'active',
      sizeB: stored.length,
      hash: { algorithm: 'sha512', value: createHash('sha512').update(stored).digest('hex') },
    });
    expect(available.status.resource?.tags).toEqual(expect.arrayContaining(['kubernetes', `capo-apiserver:owner=${available.metadata.uid}`]));
    const glance = await cloud.glance.getImage(available.status.id!);
    expect(glance).toMatchObject({
      name: 'capo-node',
      status: 'active',
      disk_format: 'qcow2',
      container_format: 'bare',
      os_distro: 'ubuntu',
      os_version: '24.04',
      architecture: 'x86_64',
      hw_disk_bus: 'virtio',
    });
    const printed = await kubectl(['get', 'images.openstack.k-orc.cloud', 'node']);
    expect(printed.stdout).toMatch(/^NAME\s+ID\s+AVAILABLE\s+MESSAGE\n/);
    expect(printed.stdout).toContain(available.status.id!);
  });

  it('follows changes of the name, tags and visibility in Glance, keeping its owner tag', async () => {
    const patch = { spec: { resource: { name: 'capo-node-v2', tags: ['kubernetes', 'v2'], visibility: 'shared' } } };
    const patched = await kubectl(['patch', 'images.openstack.k-orc.cloud', 'node', '--type=merge', '-p', JSON.stringify(patch)]);
    expect(patched.code, patched.stderr).toBe(0);
    const renamed = await untilImage(
      'node',
      'the new name in Glance',
      (view) => (view.status.resource as { name?: string } | undefined)?.name === 'capo-node-v2',
    );
    const glance = await cloud.glance.getImage(renamed.status.id!);
    expect(glance).toMatchObject({ name: 'capo-node-v2', visibility: 'shared', status: 'active' });
    expect([...glance.tags].sort()).toEqual(['kubernetes', 'v2', ...glance.tags.filter((tag) => tag.startsWith('capo-apiserver:'))].sort());
    expect(glance.tags).toContain(`capo-apiserver:owner=${renamed.metadata.uid}`);
  });

  it('decompresses xz and bzip2 content too, as ORC does', async () => {
    // The stored image: what each compressed fixture unpacks to (made once with xz -c and bzip2 -c, so no tool is needed here).
    const stored = Buffer.alloc(200 * 1024, 9);
    stored.write('capo-apiserver', 4096);
    for (const [name, decompress] of [
      ['node-xz', 'xz'],
      ['node-bz2', 'bz2'],
    ] as const) {
      const file = `node.raw.${decompress}`;
      const hash = { algorithm: 'sha256', value: createHash('sha256').update(fixtureFiles.get(file)!).digest('hex') };
      const applied = await kubectl(['apply', '-f', '-'], managedImage(name, { url: `${fixtureBase}/${file}`, decompress, hash }));
      expect(applied.code, applied.stderr).toBe(0);
    }
    for (const name of ['node-xz', 'node-bz2']) {
      const available = await untilImage(name, 'Available', (view) => condition_(view, 'Available')?.status === 'True');
      expect(available.status.resource).toMatchObject({
        sizeB: stored.length,
        hash: { algorithm: 'sha512', value: createHash('sha512').update(stored).digest('hex') },
      });
    }
    const deleted = await kubectl(['delete', 'images.openstack.k-orc.cloud', 'node-xz', 'node-bz2', '--timeout=60s']);
    expect(deleted.code, deleted.stderr).toBe(0);
  });

  it("refuses changes to the content and properties, as ORC's CRD does", async () => {
    const patched = await kubectl([
      'patch',
      'images.openstack.k-orc.cloud',
      'node',
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { resource: { content: { diskFormat: 'raw' } } } }),
    ]);
    expect(patched.code).not.toBe(0);
    expect(patched.stderr).toContain('content is immutable');
    const unmanagedWithResource = JSON.parse(managedImage('both', { url: `${mirror}/node.qcow2` }));
    unmanagedWithResource.spec.managementPolicy = 'unmanaged';
    const refused = await kubectl(['apply', '-f', '-'], JSON.stringify(unmanagedWithResource));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('resource may not be specified when policy is unmanaged');
  });

  it('tries a download whose hash does not match five times, then stops with a terminal condition', async () => {
    const wrong = 'f'.repeat(64);
    const applied = await kubectl(['apply', '-f', '-'], managedImage('tampered', { url: `${mirror}/node.qcow2`, hash: { algorithm: 'sha256', value: wrong } }));
    expect(applied.code, applied.stderr).toBe(0);
    const stopped = await untilImage('tampered', 'a terminal condition', (view) => condition_(view, 'Progressing')?.reason === 'InvalidConfiguration', 120);
    expect(stopped.status.downloadAttempts).toBe(5);
    expect(condition_(stopped, 'Progressing')).toMatchObject({ status: 'False', message: 'Unable to download content after 5 attempts' });
    expect(condition_(stopped, 'Available')?.status).toBe('False');
    // Glance never activated the data: the image is still waiting for content.
    expect((await cloud.glance.getImage(stopped.status.id!)).status).toBe('queued');
  });

  it('imports an existing image by filter, and leaves it in Glance when the Image is deleted', async () => {
    const imported = {
      apiVersion: 'openstack.k-orc.cloud/v1alpha1',
      kind: 'Image',
      metadata: { name: 'ubuntu', namespace: 'default' },
      spec: {
        cloudCredentialsRef: { secretName: 'demo-cloud-config', cloudName: 'openstack' },
        managementPolicy: 'unmanaged',
        import: { filter: { name: 'ubuntu-22.04' } },
      },
    };
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify(imported))).code).toBe(0);
    const available = await untilImage('ubuntu', 'Available', (view) => condition_(view, 'Available')?.status === 'True');
    const [seeded] = await cloud.glance.findImages({ name: 'ubuntu-22.04' });
    expect(available.status.id).toBe(seeded.id);
    expect((await kubectl(['delete', 'images.openstack.k-orc.cloud', 'ubuntu', '--timeout=60s'])).code).toBe(0);
    expect((await cloud.glance.getImage(seeded.id)).status).toBe('active');
  });

  it('says an imported image deleted behind its back is gone for good, as ORC does (it was never ours to make again)', async () => {
    const glanceImage = await cloud.glance.createImage({ name: 'to-vanish', disk_format: 'qcow2', container_format: 'bare' });
    const imported = {
      apiVersion: 'openstack.k-orc.cloud/v1alpha1',
      kind: 'Image',
      metadata: { name: 'to-vanish', namespace: 'default' },
      spec: {
        cloudCredentialsRef: { secretName: 'demo-cloud-config', cloudName: 'openstack' },
        managementPolicy: 'unmanaged',
        import: { filter: { name: 'to-vanish' } },
      },
    };
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify(imported))).code).toBe(0);
    await untilImage('to-vanish', 'imported', (view) => view.status.id === glanceImage.id);
    await cloud.glance.deleteImage(glanceImage.id);
    // Its next pass (a change of the object brings it at once, the resync at the latest) finds it gone.
    expect((await kubectl(['annotate', 'images.openstack.k-orc.cloud', 'to-vanish', 'drift=now'])).code).toBe(0);
    const gone = await untilImage('to-vanish', 'UnrecoverableError', (view) => condition_(view, 'Progressing')?.reason === 'UnrecoverableError');
    expect(condition_(gone, 'Progressing')).toMatchObject({ status: 'False', message: 'resource has been deleted from OpenStack' });
    expect(condition_(gone, 'Available')?.status).toBe('False');
    expect((await kubectl(['delete', 'images.openstack.k-orc.cloud', 'to-vanish', '--timeout=60s'])).code).toBe(0);
  });

  it('deletes the Glance images of managed Images with them', async () => {
    const ids = await Promise.all(
      ['node', 'tampered'].map(async (name) => imageView.parse(await getObject(server.kubectl, `images.openstack.k-orc.cloud/${name}`)).status.id!),
    );
    const deleted = await kubectl(['delete', 'images.openstack.k-orc.cloud', 'node', 'tampered', '--timeout=60s']);
    expect(deleted.code, deleted.stderr).toBe(0);
    for (const id of ids) await expect(cloud.glance.getImage(id)).rejects.toMatchObject({ kind: 'NotFound' });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/host.js';
import { call, endpoint, login, start, type Session } from './helpers.js';

let sim: Simulator;
let demo: Session;
let admin: Session;
let images: string;
/** Glance's image_size_cap here: small, so going past it costs the test nothing. */
const capBytes = 64 * 1024;
beforeAll(async () => {
  sim = await start({ imageSizeCap: capBytes });
  demo = await login(sim);
  admin = await login(sim, 'admin');
  images = `${endpoint(demo, 'image')}/v2/images`;
});
afterAll(async () => {
  await sim.close();
});

const names = (body: { images: { name: string }[] }) => body.images.map((i) => i.name);

describe('glance', () => {
  it('serves the seeded public ubuntu-22.04 image', async () => {
    const res = await call(demo, 'GET', `${images}?name=ubuntu-22.04`);
    expect(res.status).toBe(200);
    expect(res.body.images).toHaveLength(1);
    expect(res.body.images[0]).toMatchObject({
      name: 'ubuntu-22.04',
      status: 'active',
      visibility: 'public',
      disk_format: 'qcow2',
      container_format: 'bare',
      os_distro: 'ubuntu',
      os_version: '22.04',
      size: 1048576,
    });
    expect(res.body.first).toBe('/v2/images');
    const one = await call(demo, 'GET', `${images}/${res.body.images[0].id}`);
    expect(one.body.id).toBe(res.body.images[0].id);
  });

  it('creates, tags, filters, pages and deletes images', async () => {
    const created: string[] = [];
    for (const [name, tags] of [
      ['g-a', ['x', 'y']],
      ['g-b', ['x']],
      ['g-c', []],
    ] as const) {
      const res = await call(demo, 'POST', images, { name, disk_format: 'raw', container_format: 'bare', tags, os_distro: 'cirros' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name, status: 'queued', visibility: 'shared', owner: demo.projectId, size: null, os_distro: 'cirros' });
      created.push(res.body.id);
    }
    expect(names((await call(demo, 'GET', `${images}?tag=x`)).body).sort()).toEqual(['g-a', 'g-b']);
    expect(names((await call(demo, 'GET', `${images}?tag=x&tag=y`)).body)).toEqual(['g-a']);
    expect(names((await call(demo, 'GET', `${images}?status=queued&sort=name:asc`)).body)).toEqual(['g-a', 'g-b', 'g-c']);
    expect(names((await call(demo, 'GET', `${images}?visibility=public`)).body)).toEqual(['ubuntu-22.04']);
    expect(names((await call(demo, 'GET', `${images}?owner=${demo.projectId}&sort_key=name&sort_dir=desc`)).body)).toEqual(['g-c', 'g-b', 'g-a']);
    expect(names((await call(demo, 'GET', `${images}?name=in:"g-a","g-c"&sort=name:asc`)).body)).toEqual(['g-a', 'g-c']);
    expect(names((await call(demo, 'GET', `${images}?os_distro=ubuntu`)).body)).toEqual(['ubuntu-22.04']);
    expect((await call(demo, 'GET', `${images}?visibility=bogus`)).status).toBe(400);

    const page1 = await call(demo, 'GET', `${images}?limit=2&sort=name:asc`);
    expect(names(page1.body)).toEqual(['g-a', 'g-b']);
    expect(page1.body.next).toMatch(/marker=/);
    const page2 = await call(demo, 'GET', `${endpoint(demo, 'image')}${page1.body.next}`);
    expect(names(page2.body)).toEqual(['g-c', 'ubuntu-22.04']);

    const [a, b, c] = created as [string, string, string];
    expect((await call(demo, 'PUT', `${images}/${c}/tags/z`)).status).toBe(204);
    expect((await call(demo, 'GET', `${images}/${c}`)).body.tags).toEqual(['z']);
    expect((await call(demo, 'DELETE', `${images}/${c}/tags/z`)).status).toBe(204);
    expect((await call(demo, 'DELETE', `${images}/${c}/tags/z`)).status).toBe(404);

    const notFound = await call(demo, 'GET', `${images}/00000000-0000-0000-0000-000000000000`);
    expect(notFound.status).toBe(404);
    expect(notFound.body).toEqual({
      message: 'No image found with ID 00000000-0000-0000-0000-000000000000<br /><br />\n\n\n',
      code: '404 Not Found',
      title: 'Not Found',
    });

    for (const id of [a, b, c]) expect((await call(demo, 'DELETE', `${images}/${id}`)).status).toBe(204);
    expect(sim.inventory().image).toEqual({ images: 1 });
  });

  it('hides private images of other projects and shares through members', async () => {
    const res = await call(admin, 'POST', images, { name: 'admin-private', visibility: 'private', disk_format: 'raw', container_format: 'bare' });
    expect(res.status).toBe(201);
    expect((await call(demo, 'GET', `${images}/${res.body.id}`)).status).toBe(404);
    expect(names((await call(demo, 'GET', images)).body)).not.toContain('admin-private');
    const publicByDemo = await call(demo, 'POST', images, { name: 'p', visibility: 'public' });
    expect(publicByDemo.status).toBe(403);

    const shared = await call(admin, 'POST', images, { name: 'admin-shared', disk_format: 'raw', container_format: 'bare' });
    expect((await call(admin, 'POST', `${images}/${shared.body.id}/members`, { member: demo.projectId })).body.status).toBe('pending');
    expect(names((await call(demo, 'GET', images)).body)).not.toContain('admin-shared');
    expect(names((await call(demo, 'GET', `${images}?member_status=pending`)).body)).toContain('admin-shared');
    await call(demo, 'PUT', `${images}/${shared.body.id}/members/${demo.projectId}`, { status: 'accepted' });
    expect(names((await call(demo, 'GET', images)).body)).toContain('admin-shared');
    expect((await call(demo, 'DELETE', `${images}/${shared.body.id}`)).status).toBe(403);
    await call(admin, 'DELETE', `${images}/${shared.body.id}`);
    await call(admin, 'DELETE', `${images}/${res.body.id}`);
  });

  it('updates with JSON patch and uploads data', async () => {
    const res = await call(demo, 'POST', images, { name: 'up', disk_format: 'raw', container_format: 'bare' });
    const patched = await call(
      demo,
      'PATCH',
      `${images}/${res.body.id}`,
      [
        { op: 'replace', path: '/name', value: 'up2' },
        { op: 'add', path: '/hw_disk_bus', value: 'scsi' },
      ],
      { 'content-type': 'application/openstack-images-v2.1-json-patch' },
    );
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'up2', hw_disk_bus: 'scsi' });
    const upload = await fetch(`${images}/${res.body.id}/file`, {
      method: 'PUT',
      headers: { 'x-auth-token': demo.token, 'content-type': 'application/octet-stream' },
      body: 'hello',
    });
    expect(upload.status).toBe(204);
    const after = await call(demo, 'GET', `${images}/${res.body.id}`);
    expect(after.body).toMatchObject({ status: 'active', size: 5, checksum: '5d41402abc4b2a76b9719d911017c592', os_hash_algo: 'sha512' });
    const data = await fetch(`${images}/${res.body.id}/file`, { headers: { 'x-auth-token': demo.token } });
    expect(await data.text()).toBe('hello');
    await call(demo, 'DELETE', `${images}/${res.body.id}`);
  });

  it('refuses data past its image_size_cap with 413, leaving the image queued for another upload', async () => {
    const res = await call(demo, 'POST', images, { name: 'capped', disk_format: 'raw', container_format: 'bare' });
    const file = `${images}/${res.body.id}/file`;
    const put = (body: Uint8Array<ArrayBuffer>) =>
      fetch(file, { method: 'PUT', headers: { 'x-auth-token': demo.token, 'content-type': 'application/octet-stream' }, body });
    const refused = await put(new Uint8Array(capBytes + 1));
    expect(refused.status).toBe(413);
    expect(await refused.json()).toMatchObject({ code: '413 Request Entity Too Large' });
    expect((await call(demo, 'GET', `${images}/${res.body.id}`)).body).toMatchObject({ status: 'queued', size: null });
    const within = new Uint8Array(capBytes).fill(7);
    expect((await put(within)).status).toBe(204);
    expect((await call(demo, 'GET', `${images}/${res.body.id}`)).body).toMatchObject({ status: 'active', size: capBytes });
    const data = await fetch(file, { headers: { 'x-auth-token': demo.token } });
    expect(data.headers.get('content-length')).toBe(String(capBytes));
    expect(new Uint8Array(await data.arrayBuffer())).toEqual(within);
    expect((await call(demo, 'DELETE', `${images}/${res.body.id}`)).status).toBe(204);
  });

  it('serves the schemas and version documents', async () => {
    const schema = await call(demo, 'GET', `${endpoint(demo, 'image')}/v2/schemas/image`);
    expect(schema.body.name).toBe('image');
    expect(schema.body.properties.visibility.enum).toContain('community');
    const versions = await fetch(`${sim.url}/image/versions`);
    const body = (await versions.json()) as { versions: { id: string; status: string }[] };
    expect(body.versions[0]).toMatchObject({ id: 'v2.16', status: 'CURRENT' });
  });
});

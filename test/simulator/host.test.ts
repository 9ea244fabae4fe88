import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/host.js';
import { call, login, start, type Session } from './helpers.js';

let sim: Simulator;
let demo: Session;
beforeAll(async () => {
  sim = await start();
  demo = await login(sim);
});
afterEach(() => sim.faults.clear());
afterAll(async () => {
  await sim.close();
});

describe('simulator host', () => {
  it('fails matching requests with the status in the service’s own error format', async () => {
    sim.faults.add({ service: 'image', method: 'GET', path: '^/v2/images$', status: 503 });
    const images = await call(demo, 'GET', `${sim.url}/image/v2/images`);
    expect(images.status).toBe(503);
    expect(images.body).toMatchObject({ code: '503 Service Unavailable', title: 'Service Unavailable' });
    expect(images.headers.get('x-openstack-request-id')).toMatch(/^req-/);
    expect((await call(demo, 'GET', `${sim.url}/image/v2/schemas/image`)).status).toBe(200);

    sim.faults.add({ service: 'block-storage', status: 500 });
    const volumes = await call(demo, 'GET', `${sim.url}/volume/v3/${demo.projectId}/volumes`);
    expect(volumes.status).toBe(500);
    expect(volumes.body).toEqual({ computeFault: { code: 500, message: expect.any(String) } });

    sim.faults.add({ service: 'identity', method: 'POST', status: 500, message: 'boom' });
    await expect(login(sim)).rejects.toThrow(/500.*boom/);
  });

  it('stops failing after `times` matches and sends Retry-After with 429', async () => {
    sim.faults.add({ service: '*', path: '^/v2/images', status: 429, times: 2, retryAfterSeconds: 3 });
    const first = await call(demo, 'GET', `${sim.url}/image/v2/images`);
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('3');
    expect((await call(demo, 'GET', `${sim.url}/image/v2/images`)).status).toBe(429);
    expect((await call(demo, 'GET', `${sim.url}/image/v2/images`)).status).toBe(200);
  });

  it('rolls faults from its seed: the same seed hits the same requests', async () => {
    const hits = async (faultSeed: number) => {
      const seeded = await start({ faultSeed });
      try {
        expect(seeded.faultSeed).toBe(faultSeed);
        const session = await login(seeded);
        seeded.faults.add({ service: 'image', status: 500, rate: 0.5 });
        const statuses: number[] = [];
        for (let i = 0; i < 24; i++) statuses.push((await call(session, 'GET', `${seeded.url}/image/v2/images`)).status);
        return statuses;
      } finally {
        await seeded.close();
      }
    };
    const first = await hits(2026);
    expect(await hits(2026)).toEqual(first);
    expect(first).toContain(500);
    expect(first).toContain(200);
    expect(await hits(7)).not.toEqual(first);
  });

  it('applies rate 0 as never', async () => {
    sim.faults.add({ service: 'image', status: 500, rate: 0 });
    expect((await call(demo, 'GET', `${sim.url}/image/v2/images`)).status).toBe(200);
  });

  it('adds latency from fault rules and from the latency option', async () => {
    sim.faults.add({ service: 'image', latencyMs: 150 });
    let t0 = Date.now();
    expect((await call(demo, 'GET', `${sim.url}/image/v2/images`)).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);

    const slow = await start({ latency: [{ service: 'block-storage', method: 'GET', ms: 120 }] });
    try {
      const session = await login(slow);
      t0 = Date.now();
      await call(session, 'GET', `${slow.url}/image/v2/images`);
      expect(Date.now() - t0).toBeLessThan(100);
      t0 = Date.now();
      expect((await call(session, 'GET', `${slow.url}/volume/v3/${session.projectId}/volumes`)).status).toBe(200);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(110);
    } finally {
      await slow.close();
    }
  });

  it('sends request ids, and Nova’s own request id header too', async () => {
    const servers = await call(demo, 'GET', `${sim.url}/compute/v2.1/servers`);
    expect(servers.status).toBe(200);
    expect(servers.headers.get('x-compute-request-id')).toBe(servers.headers.get('x-openstack-request-id'));
    const networks = await call(demo, 'GET', `${sim.url}/network/v2.0/networks`);
    expect(networks.headers.get('x-openstack-request-id')).toMatch(/^req-[0-9a-f-]{36}$/);
    expect(networks.headers.get('x-compute-request-id')).toBeNull();
    expect((await fetch(`${sim.url}/nowhere`)).headers.get('x-openstack-request-id')).toMatch(/^req-/);
  });

  it('rejects requests without a token, except version documents', async () => {
    const res = await fetch(`${sim.url}/image/v2/images`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' } });
    expect((await fetch(`${sim.url}/image`)).status).toBe(300);
    expect((await fetch(`${sim.url}/volume/`)).status).toBe(300);
  });

  it('answers unknown paths and malformed JSON in the service’s format', async () => {
    const unknown = await call(demo, 'GET', `${sim.url}/volume/v3/${demo.projectId}/nothing-here`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.itemNotFound.code).toBe(404);
    const res = await fetch(`${sim.url}/volume/v3/${demo.projectId}/volumes`, {
      method: 'POST',
      headers: { 'x-auth-token': demo.token, 'content-type': 'application/json' },
      body: '{"volume": ',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).badRequest.code).toBe(400);
  });

  it('reports inventory and quota overrides by project name', async () => {
    const inventory = sim.inventory();
    expect(inventory.image).toEqual({ images: 1 });
    expect(Object.keys(inventory).sort()).toEqual(['block-storage', 'compute', 'identity', 'image', 'load-balancer', 'network']);
    expect(inventory.identity).toMatchObject({ projects: 3 });
    expect(() => sim.setQuota('nope', 'volumes', 1)).toThrow(/unknown project/);
  });

  it('writes a clouds.yaml for demo and admin', () => {
    const yaml = sim.cloudsYaml('x');
    expect(yaml).toContain('x:');
    expect(yaml).toContain('x-admin:');
    expect(yaml).toContain(`auth_url: ${sim.url}/identity/v3`);
    expect(yaml).toContain('region_name: RegionOne');
  });
});

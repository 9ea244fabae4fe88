/**
 * The session against the shared OpenStack simulator: its Keystone catalog,
 * token validation, error formats and fault injection, as the reconciler
 * will meet them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MetricsRegistry } from '../../../src/observability/metrics.js';
import { loadCloud, OpenStackError, OpenStackSession } from '../../../src/openstack/index.js';
import { startSimulator, type Simulator } from '../../../src/simulator/host.js';

const images = z.object({ images: z.array(z.object({ id: z.string(), name: z.string().nullable() })) });
const volumes = z.object({ volumes: z.array(z.object({ id: z.string() })) });

let simulator: Simulator;
let session: OpenStackSession;
let registry: MetricsRegistry;

beforeAll(async () => {
  simulator = await startSimulator();
  registry = new MetricsRegistry({ processMetrics: false });
  session = await OpenStackSession.create(loadCloud({ cloudsYaml: simulator.cloudsYaml('sim'), cloudName: 'sim' }), {
    metrics: registry,
    sleep: async () => undefined,
  });
});

afterAll(async () => {
  session?.close();
  await simulator?.close();
});

describe('OpenStackSession against the simulator', () => {
  it('authenticates and reaches services through the catalog', async () => {
    const scope = await session.authenticate();
    expect(scope.projectName).toBe('demo');
    const listed = await session.request('image', { method: 'GET', path: '/v2/images' }, images);
    expect(listed.status).toBe(200);
    expect(listed.requestId).toMatch(/^req-/);
    const vols = await session.request('block-storage', { method: 'GET', path: '/volumes' }, volumes);
    expect(vols.body.volumes).toEqual(expect.any(Array));
    expect(await session.endpoint('block-storage')).toBe(`${simulator.url}/volume/v3/${scope.projectId}`);
  });

  it('reports a missing resource as NotFound with the service’s message', async () => {
    const missing = '00000000-0000-0000-0000-000000000000';
    const error = await session.request('image', { method: 'GET', path: `/v2/images/${missing}` }, images).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenStackError);
    expect((error as OpenStackError).kind).toBe('NotFound');
    expect((error as OpenStackError).message).toContain(`glance GET /v2/images/${missing}: 404 Not Found: `);
    expect((error as OpenStackError).message).toContain(`No image found with ID ${missing}`);
  });

  it('re-authenticates after the tokens expire', async () => {
    const before = await tokenIssues();
    simulator.expireTokens();
    await session.request('image', { method: 'GET', path: '/v2/images' }, images);
    expect(await tokenIssues()).toBe(before + 1);
  });

  it('retries injected 503s on reads', async () => {
    simulator.faults.add({ service: 'image', method: 'GET', status: 503, times: 2 });
    try {
      const listed = await session.request('image', { method: 'GET', path: '/v2/images' }, images);
      expect(listed.status).toBe(200);
      expect((await registry.scrape()).body).toMatch(/openstack_api_requests_total\{service="image",method="GET",status="503"\} 2\n/);
    } finally {
      simulator.faults.clear();
    }
  });

  it('rejects a wrong password with Keystone’s message', async () => {
    const yaml = simulator.cloudsYaml('sim').replace(/password: ministack-demo/, 'password: wrong');
    const wrong = await OpenStackSession.create(loadCloud({ cloudsYaml: yaml, cloudName: 'sim' }));
    try {
      const error = await wrong.authenticate().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenStackError);
      expect((error as OpenStackError).kind).toBe('Unauthorized');
      expect((error as OpenStackError).message).toMatch(/^keystone POST \/v3\/auth\/tokens: 401 Unauthorized: .+; check the credentials of cloud "sim"/);
    } finally {
      wrong.close();
    }
  });
});

async function tokenIssues(): Promise<number> {
  const match = /^openstack_token_issues_total (\d+)$/m.exec((await registry.scrape()).body);
  return Number(match?.[1]);
}

/**
 * The service clients through the real OpenStackSession, against the
 * client tests' HTTP stand-in: what actually goes on the wire (URL, query
 * encoding, microversion headers, body) for the cases the recording fake
 * cannot show.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadCloud, OpenStackSession } from '../../../src/openstack/index.js';
import { createServiceClients, type ServiceClients } from '../../../src/openstack/services/index.js';
import { cloudsYaml, projectId, StandIn, type Recorded } from '../client/stand-in.js';

let standIn: StandIn;
let session: OpenStackSession;
let clients: ServiceClients;

beforeEach(async () => {
  standIn = await StandIn.start();
  session = await OpenStackSession.create(loadCloud({ cloudsYaml: cloudsYaml(`${standIn.url}/identity`), cloudName: 'test' }), {
    sleep: async () => undefined,
  });
  clients = createServiceClients(session);
});

afterEach(async () => {
  session.close();
  await standIn.close();
});

function answer(body: unknown, status = 200): void {
  standIn.reply = () => ({ status, body });
}

function only(): Recorded {
  expect(standIn.requests).toHaveLength(1);
  return standIn.requests[0]!;
}

describe('service clients on the wire', () => {
  it('Neutron: router:external, comma-joined tags, repeated device_owner and fixed_ips', async () => {
    answer({ networks: [] });
    await clients.neutron.listNetworks({ 'router:external': true, tags: ['a', 'b'], 'not-tags-any': ['c'] });
    expect(only().url).toBe('/network/v2.0/networks?router%3Aexternal=true&tags=a%2Cb&not-tags-any=c');
    standIn.requests.length = 0;
    answer({ ports: [] });
    await clients.neutron.listPorts({
      device_owner: ['network:router_interface', 'network:ha_router_replicated_interface'],
      fixed_ips: [{ ip_address: '10.0.0.5' }],
    });
    expect(only().url).toBe(
      '/network/v2.0/ports?device_owner=network%3Arouter_interface&device_owner=network%3Aha_router_replicated_interface&fixed_ips=ip_address%3D10.0.0.5',
    );
  });

  it('Nova: versioned root, both microversion headers, JSON body', async () => {
    answer({ server: { id: 's1' } }, 202);
    await clients.nova.createServer({ name: 'n', flavorRef: '1', imageRef: 'i', networks: [{ port: 'p' }] }, { group: 'g' });
    const request = only();
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/compute/v2.1/servers');
    expect(request.headers['openstack-api-version']).toBe('compute 2.60');
    expect(request.headers['x-openstack-nova-api-version']).toBe('2.60');
    expect(JSON.parse(request.body)).toEqual({
      server: { name: 'n', flavorRef: '1', imageRef: 'i', networks: [{ port: 'p' }] },
      'os:scheduler_hints': { group: 'g' },
    });
  });

  it('Glance: one tag parameter per tag', async () => {
    answer({ images: [] });
    await clients.glance.findImages({ name: 'ubuntu', tags: ['capi', 'k8s-1.31'] });
    expect(only().url).toBe('/image/v2/images?name=ubuntu&tag=capi&tag=k8s-1.31');
  });

  it('Cinder: project-scoped root, volume microversion header, metadata as a dict literal', async () => {
    answer({ volumes: [] });
    await clients.cinder.listVolumes({ metadata: { owner: 'u1' } });
    const request = only();
    expect(request.url).toBe(`/volume/v3/${projectId}/volumes/detail?metadata=%7B%22owner%22%3A%22u1%22%7D`);
    expect(request.headers['openstack-api-version']).toBe('volume 3.60');
  });

  it('Octavia: cascade delete and no microversion header', async () => {
    answer(undefined, 204);
    await clients.octavia.deleteLoadBalancer('lb1', { cascade: true });
    const request = only();
    expect(request.url).toBe('/load-balancer/v2/lbaas/loadbalancers/lb1?cascade=true');
    expect(request.headers['openstack-api-version']).toBeUndefined();
  });

  it('a POST that failed transiently is not repeated; a GET is', async () => {
    answer({ error: 'busy' }, 503);
    await expect(clients.neutron.createNetwork({ name: 'n' })).rejects.toMatchObject({ kind: 'Transient' });
    expect(standIn.requests).toHaveLength(1);
    standIn.requests.length = 0;
    await expect(clients.neutron.getNetwork('n1')).rejects.toMatchObject({ kind: 'Transient' });
    expect(standIn.requests.length).toBeGreaterThan(1);
  });
});

/**
 * The hostile-input suite for the simulated cloud: bodies and parameters a
 * broken client sends, each answered as the real service answers (400, 404,
 * 413 or 401 in the service's own error format), never a 500 or a crash,
 * and the simulator keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/host.js';
import { endpoint, login, start, type Session } from './helpers.js';

let sim: Simulator;
let demo: Session;
type Service = 'neutron' | 'nova' | 'octavia' | 'glance' | 'cinder' | 'keystone';
const url = {} as Record<Service, string>;

beforeAll(async () => {
  sim = await start();
  demo = await login(sim);
  url.neutron = `${endpoint(demo, 'network')}/v2.0`;
  url.nova = endpoint(demo, 'compute');
  url.octavia = `${endpoint(demo, 'load-balancer')}/v2/lbaas`;
  url.glance = `${endpoint(demo, 'image')}/v2`;
  url.cinder = endpoint(demo, 'block-storage');
  url.keystone = `${sim.url}/identity/v3`;
});

afterAll(async () => {
  await sim?.close();
});

interface Case {
  name: string;
  service: Service;
  method?: string;
  path: string;
  body?: string | Uint8Array<ArrayBuffer>;
  contentType?: string;
  token?: string | null;
  status: number;
}

const cases: Case[] = [
  { name: 'Neutron: truncated JSON', service: 'neutron', method: 'POST', path: '/networks', body: '{"network":', status: 400 },
  { name: 'Neutron: a body that is an array', service: 'neutron', method: 'POST', path: '/networks', body: '[]', status: 400 },
  { name: 'Neutron: a wrongly typed field', service: 'neutron', method: 'POST', path: '/networks', body: '{"network":{"name":5}}', status: 400 },
  { name: 'Neutron: an unknown attribute', service: 'neutron', method: 'POST', path: '/networks', body: '{"network":{"name":"n","color":"red"}}', status: 400 },
  {
    name: 'Neutron: a subnet with a CIDR that is none',
    service: 'neutron',
    method: 'POST',
    path: '/subnets',
    body: '{"subnet":{"network_id":"00000000-0000-0000-0000-000000000000","cidr":"10.0.0.0/99","ip_version":4}}',
    status: 400,
  },
  { name: 'Neutron: an ID that is no UUID', service: 'neutron', path: '/networks/not-a-uuid', status: 404 },
  { name: 'Neutron: a negative limit', service: 'neutron', path: '/networks?limit=-1', status: 400 },
  { name: 'Neutron: a limit past any integer', service: 'neutron', path: '/networks?limit=1e30', status: 400 },
  { name: 'Neutron: a marker that does not exist', service: 'neutron', path: '/networks?limit=1&marker=00000000-0000-0000-0000-000000000000', status: 404 },
  {
    name: 'Neutron: a body nested 10,000 deep',
    service: 'neutron',
    method: 'POST',
    path: '/networks',
    body: `{"network":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`,
    status: 400,
  },
  { name: 'Neutron: invalid UTF-8', service: 'neutron', method: 'POST', path: '/networks', body: new Uint8Array([0x7b, 0xff, 0x7d]), status: 400 },
  { name: 'Neutron: no token', service: 'neutron', path: '/networks', token: null, status: 401 },
  { name: 'Neutron: a forged token', service: 'neutron', path: '/networks', token: 'gAAAAforged', status: 401 },
  { name: 'Nova: a server body of the wrong shape', service: 'nova', method: 'POST', path: '/servers', body: '{"server":"big"}', status: 400 },
  {
    name: 'Nova: a server with no flavor',
    service: 'nova',
    method: 'POST',
    path: '/servers',
    body: '{"server":{"name":"s","imageRef":"00000000-0000-0000-0000-000000000000"}}',
    status: 400,
  },
  { name: 'Nova: a microversion that does not exist', service: 'nova', path: '/servers', status: 406 },
  { name: 'Nova: a server that does not exist', service: 'nova', path: '/servers/00000000-0000-0000-0000-000000000000', status: 404 },
  {
    name: 'Octavia: a load balancer on no subnet',
    service: 'octavia',
    method: 'POST',
    path: '/loadbalancers',
    body: '{"loadbalancer":{"name":"lb"}}',
    status: 400,
  },
  {
    name: 'Octavia: a listener on a port past 65535',
    service: 'octavia',
    method: 'POST',
    path: '/listeners',
    body: '{"listener":{"protocol":"TCP","protocol_port":70000,"loadbalancer_id":"00000000-0000-0000-0000-000000000000"}}',
    status: 400,
  },
  { name: 'Glance: an image filter of the wrong form', service: 'glance', path: '/images?limit=abc', status: 400 },
  { name: 'Cinder: a volume of size -1', service: 'cinder', method: 'POST', path: '/volumes', body: '{"volume":{"size":-1}}', status: 400 },
  { name: 'Cinder: a volume of size "big"', service: 'cinder', method: 'POST', path: '/volumes', body: '{"volume":{"size":"big"}}', status: 400 },
  {
    name: 'Keystone: a password login with no password',
    service: 'keystone',
    method: 'POST',
    path: '/auth/tokens',
    body: '{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":"demo","domain":{"name":"Default"}}}}}}',
    token: null,
    status: 400,
  },
  {
    name: 'Keystone: a wrong password',
    service: 'keystone',
    method: 'POST',
    path: '/auth/tokens',
    body: '{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":"demo","domain":{"name":"Default"},"password":"wrong"}}}}}',
    token: null,
    status: 401,
  },
  { name: 'Keystone: a body that is not JSON', service: 'keystone', method: 'POST', path: '/auth/tokens', body: 'auth=me', token: null, status: 400 },
];

describe('simulated cloud hostile inputs', () => {
  for (const testCase of cases) {
    it(testCase.name, async () => {
      const headers: Record<string, string> = { accept: 'application/json' };
      const token = testCase.token === undefined ? demo.token : testCase.token;
      if (token !== null) headers['x-auth-token'] = token;
      if (testCase.body !== undefined) headers['content-type'] = testCase.contentType ?? 'application/json';
      if (testCase.name.includes('microversion')) headers['openstack-api-version'] = 'compute 9.99';
      const res = await fetch(`${url[testCase.service]}${testCase.path}`, { method: testCase.method ?? 'GET', headers, body: testCase.body });
      const text = await res.text();
      expect(res.status, text.slice(0, 300)).toBe(testCase.status);
      // Each service's own error format is JSON (Keystone's 401 included), never an HTML page or a stack.
      expect(() => JSON.parse(text)).not.toThrow();
      expect(text).not.toMatch(/at .*\.(js|ts):\d+/);
      const health = await fetch(`${url.neutron}/networks`, { headers: { 'x-auth-token': demo.token } });
      expect(health.status).toBe(200);
    });
  }
});

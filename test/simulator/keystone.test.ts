import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/host.js';
import { call, endpoint, login, start } from './helpers.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await start();
});
afterAll(async () => {
  await sim.close();
});

const issue = (body: unknown) =>
  fetch(`${sim.url}/identity/v3/auth/tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('keystone', () => {
  it('serves the version documents without a token', async () => {
    const root = await fetch(`${sim.url}/identity`);
    expect(root.status).toBe(300);
    const versions = (await root.json()) as { versions: { values: { id: string; links: { href: string }[] }[] } };
    expect(versions.versions.values[0]!.id).toBe('v3.14');
    expect(versions.versions.values[0]!.links[0]!.href).toBe(`${sim.url}/identity/v3/`);
    const v3 = await fetch(`${sim.url}/identity/v3`);
    expect(v3.status).toBe(200);
  });

  it('issues a project-scoped token with roles and a catalog of all six services', async () => {
    const res = await issue({
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'demo', domain: { name: 'Default' }, password: 'ministack-demo' } } },
        scope: { project: { name: 'demo', domain: { name: 'Default' } } },
      },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-subject-token')).toMatch(/^gAAAAA/);
    expect(res.headers.get('x-openstack-request-id')).toMatch(/^req-[0-9a-f-]{36}$/);
    const { token } = (await res.json()) as any;
    expect(token.methods).toEqual(['password']);
    expect(token.user).toMatchObject({ name: 'demo', domain: { id: 'default', name: 'Default' } });
    expect(token.project.name).toBe('demo');
    expect(token.roles.map((r: { name: string }) => r.name).sort()).toEqual(['load-balancer_member', 'member', 'reader']);
    expect(Date.parse(token.expires_at) - Date.now()).toBeGreaterThan(3_500_000);
    expect(token.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const byType = Object.fromEntries(token.catalog.map((e: any) => [e.type, e]));
    expect(Object.keys(byType).sort()).toEqual(['block-storage', 'compute', 'identity', 'image', 'load-balancer', 'network', 'volumev3']);
    expect(byType.identity.endpoints.map((e: any) => e.interface).sort()).toEqual(['admin', 'internal', 'public']);
    expect(byType.identity.endpoints[0].url).toBe(`${sim.url}/identity`);
    expect(byType.image.endpoints[0].url).toBe(`${sim.url}/image`);
    expect(byType.network.endpoints[0].url).toBe(`${sim.url}/network`);
    expect(byType.compute.endpoints[0].url).toBe(`${sim.url}/compute/v2.1`);
    expect(byType['load-balancer'].endpoints[0].url).toBe(`${sim.url}/load-balancer`);
    expect(byType['block-storage'].endpoints[0].url).toBe(`${sim.url}/volume/v3/${token.project.id}`);
    expect(byType.volumev3.endpoints[0].region).toBe('RegionOne');
  });

  it('answers a wrong password with keystone 401', async () => {
    const res = await issue({
      auth: { identity: { methods: ['password'], password: { user: { name: 'demo', domain: { name: 'Default' }, password: 'nope' } } } },
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: { code: 401, message: 'The request you have made requires authentication.', title: 'Unauthorized' } });
  });

  it('issues unscoped tokens without a catalog, and rescopes them', async () => {
    const admin = await login(sim, 'admin');
    const res = await issue({ auth: { identity: { methods: ['password'], password: { user: { id: admin.userId, password: 'ministack-admin' } } } } });
    expect(res.status).toBe(201);
    const { token } = (await res.json()) as any;
    expect(token.project).toBeUndefined();
    expect(token.catalog).toBeUndefined();
    const rescoped = await issue({
      auth: { identity: { methods: ['token'], token: { id: res.headers.get('x-subject-token') } }, scope: { project: { id: admin.projectId } } },
    });
    expect(rescoped.status).toBe(201);
    const body = (await rescoped.json()) as any;
    expect(body.token.roles.map((r: { name: string }) => r.name).sort()).toEqual(['admin', 'load-balancer_admin', 'member', 'reader']);
  });

  it('validates, revokes and lists the catalog and projects of tokens', async () => {
    const demo = await login(sim);
    const other = await login(sim);
    const validated = await call(demo, 'GET', `${sim.url}/identity/v3/auth/tokens`, undefined, { 'x-subject-token': other.token });
    expect(validated.status).toBe(200);
    expect(validated.body.token.project.id).toBe(demo.projectId);
    const head = await fetch(`${sim.url}/identity/v3/auth/tokens`, { method: 'HEAD', headers: { 'x-auth-token': demo.token, 'x-subject-token': other.token } });
    expect(head.status).toBe(200);
    const catalog = await call(demo, 'GET', `${sim.url}/identity/v3/auth/catalog`);
    expect(catalog.body.catalog.length).toBeGreaterThanOrEqual(3);
    const projects = await call(demo, 'GET', `${sim.url}/identity/v3/auth/projects`);
    expect(projects.body.projects.map((p: { name: string }) => p.name)).toEqual(['demo']);
    expect((await call(demo, 'DELETE', `${sim.url}/identity/v3/auth/tokens`, undefined, { 'x-subject-token': other.token })).status).toBe(204);
    const gone = await call(demo, 'GET', `${sim.url}/identity/v3/auth/tokens`, undefined, { 'x-subject-token': other.token });
    expect(gone.status).toBe(404);
    expect(gone.body.error.message).toBe(`Could not find token: ${other.token}.`);
    expect((await call(other, 'GET', `${endpoint(demo, 'image')}/v2/images`)).status).toBe(401);
  });

  it('rejects expired tokens at every service after expireTokens()', async () => {
    const demo = await login(sim);
    const images = `${endpoint(demo, 'image')}/v2/images`;
    expect((await call(demo, 'GET', images)).status).toBe(200);
    sim.expireTokens();
    const res = await call(demo, 'GET', images);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' } });
    expect(res.headers.get('www-authenticate')).toBe(`Keystone uri="${sim.url}/identity"`);
    expect((await call('', 'GET', `${endpoint(demo, 'block-storage')}/volumes`)).status).toBe(401);
    expect((await fetch(`${sim.url}/image/versions`)).status).toBe(200);
  });

  it('expires tokens after their lifetime', async () => {
    const short = await start({ tokenLifetimeMs: 100 });
    try {
      const demo = await login(short);
      expect((await call(demo, 'GET', `${short.url}/image/v2/images`)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 150));
      expect((await call(demo, 'GET', `${short.url}/image/v2/images`)).status).toBe(401);
    } finally {
      await short.close();
    }
  });

  it('creates application credentials and authenticates with them', async () => {
    const demo = await login(sim);
    const created = await call(demo, 'POST', `${sim.url}/identity/v3/users/${demo.userId}/application_credentials`, {
      application_credential: { name: 'capo' },
    });
    expect(created.status).toBe(201);
    const cred = created.body.application_credential;
    expect(cred).toMatchObject({ name: 'capo', project_id: demo.projectId, unrestricted: false, expires_at: null });
    expect(cred.secret.length).toBeGreaterThan(40);
    const dup = await call(demo, 'POST', `${sim.url}/identity/v3/users/${demo.userId}/application_credentials`, { application_credential: { name: 'capo' } });
    expect(dup.status).toBe(409);

    const byId = await issue({ auth: { identity: { methods: ['application_credential'], application_credential: { id: cred.id, secret: cred.secret } } } });
    expect(byId.status).toBe(201);
    const token = ((await byId.json()) as any).token;
    expect(token.methods).toEqual(['application_credential']);
    expect(token.project.id).toBe(demo.projectId);
    expect(token.application_credential).toEqual({ id: cred.id, name: 'capo', restricted: true });
    const byName = await issue({
      auth: {
        identity: {
          methods: ['application_credential'],
          application_credential: { name: 'capo', secret: cred.secret, user: { name: 'demo', domain: { name: 'Default' } } },
        },
      },
    });
    expect(byName.status).toBe(201);
    const restricted = await call(byName.headers.get('x-subject-token')!, 'POST', `${sim.url}/identity/v3/users/${demo.userId}/application_credentials`, {
      application_credential: { name: 'nested' },
    });
    expect(restricted.status).toBe(403);
    const wrong = await issue({ auth: { identity: { methods: ['application_credential'], application_credential: { id: cred.id, secret: 'x' } } } });
    expect(wrong.status).toBe(401);

    const listed = await call(demo, 'GET', `${sim.url}/identity/v3/users/${demo.userId}/application_credentials`);
    expect(listed.body.application_credentials.map((c: { name: string }) => c.name)).toEqual(['capo']);
    expect(listed.body.application_credentials[0].secret).toBeUndefined();
    expect(sim.inventory().identity?.application_credentials).toBe(1);
    expect((await call(demo, 'DELETE', `${sim.url}/identity/v3/users/${demo.userId}/application_credentials/${cred.id}`)).status).toBe(204);
    expect((await call(byId.headers.get('x-subject-token')!, 'GET', `${sim.url}/image/v2/images`)).status).toBe(401);
  });

  it('lets admins read projects and users, and forbids the demo user', async () => {
    const admin = await login(sim, 'admin');
    const demo = await login(sim);
    const projects = await call(admin, 'GET', `${sim.url}/identity/v3/projects?name=demo`);
    expect(projects.body.projects).toHaveLength(1);
    expect(projects.body.projects[0]).toMatchObject({ name: 'demo', domain_id: 'default', enabled: true });
    const denied = await call(demo, 'GET', `${sim.url}/identity/v3/projects`);
    expect(denied.status).toBe(403);
    expect(denied.body.error.title).toBe('Forbidden');
    expect((await call(demo, 'GET', `${sim.url}/identity/v3/projects/${demo.projectId}`)).body.project.name).toBe('demo');
    expect((await call(demo, 'GET', `${sim.url}/identity/v3/users/${demo.userId}`)).body.user.name).toBe('demo');
    expect((await call(admin, 'GET', `${sim.url}/identity/v3/domains/default`)).body.domain.name).toBe('Default');
  });
});

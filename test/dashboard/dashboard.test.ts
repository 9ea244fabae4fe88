/**
 * The dashboard in a real browser (Debian's chromium through playwright-core) against the embedded
 * default with examples/ applied: signing in, the overview, the cluster's tree against what the
 * simulated cloud holds, live updates from a kubectl change, a server put in ERROR explained in
 * "why not Ready", the actions for an admin, the leak audit and its confirmed cleanup, and their
 * absence and refusal for a read-only user, what is not shown to a user allowed only OpenStackClusters,
 * and CSRF and cookie-less calls refused. Screenshots of each page go to artifacts/dashboard/.
 * Without chromium the suite skips, saying so.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, appendFile } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { apply, getObject, waitForReady } from '../../harness/cluster-flow.js';
import { CloudCensus } from '../../harness/census.js';
import { createServiceClients, loadCloud, OpenStackSession } from '../../src/openstack/index.js';
import { startExampleServer, type ExampleServer } from '../reconcile/flows/examples.js';

const chromiumPath = process.env.CHROMIUM_PATH ?? ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((candidate) => existsSync(candidate));
const unavailable =
  chromiumPath && existsSync(chromiumPath) ? undefined : 'no chromium (apt-get install chromium; .ci/run installs it; CHROMIUM_PATH names another)';
if (unavailable) console.warn(`the dashboard browser tests are skipped: ${unavailable}`);

const artifacts = path.resolve(import.meta.dirname, '../../artifacts/dashboard');
/** A user who may read everything in namespace default and change nothing. */
const viewerPolicy = { user: 'viewer', namespace: 'default', resource: '*', apiGroup: '*', readonly: true };
/** A user who may read OpenStackClusters in namespace default and nothing else. */
const clustersOnlyPolicy = {
  user: 'clusters-only',
  namespace: 'default',
  resource: 'openstackclusters',
  apiGroup: 'infrastructure.cluster.x-k8s.io',
  readonly: true,
};

describe.skipIf(unavailable !== undefined)(
  unavailable === undefined ? 'the dashboard in a browser' : `the dashboard in a browser (skipped: ${unavailable})`,
  () => {
    let example: ExampleServer;
    let browser: Browser;
    let adminToken: string;
    let admin: BrowserContext;
    let page: Page;

    beforeAll(async () => {
      await mkdir(artifacts, { recursive: true });
      example = await startExampleServer({}, {}, { viewer: [], 'clusters-only': [] });
      const { server } = example;
      adminToken = (await readFile(server.tokenPath, 'utf8')).trim();
      const policies = [viewerPolicy, clustersOnlyPolicy].map(
        (spec) => `${JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec })}\n`,
      );
      await appendFile(path.join(server.dataDir, 'policy.jsonl'), policies.join(''));
      await apply(server.kubectl, example.manifests);
      browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
      admin = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
      page = await admin.newPage();
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await example?.stop();
    });

    const url = (pathname: string) => `${example.server.url}${pathname}`;

    async function signIn(target: Page, token: string): Promise<void> {
      await target.goto(url('/dashboard/'));
      await target.getByLabel('Bearer token').fill(token);
      await target.getByRole('button', { name: 'Sign in' }).click();
      await target.getByRole('heading', { name: 'Clusters' }).waitFor();
    }

    it('refuses a wrong token, then signs in and lists the example cluster', async () => {
      await page.goto(url('/dashboard/'));
      await page.getByLabel('Bearer token').fill('not-a-token');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('That token is not valid.');
      await page.screenshot({ path: path.join(artifacts, 'sign-in.png') });

      await signIn(page, adminToken);
      const row = page.locator('tr[data-cluster="default/demo"]');
      await row.waitFor();
      expect(await row.locator('a').textContent()).toBe('default/demo');
      // The session is a cookie the page's script cannot read.
      const [cookie] = await admin.cookies();
      expect(cookie).toMatchObject({ name: 'capo-dashboard-session', httpOnly: true, secure: true, sameSite: 'Strict', path: '/dashboard' });
      expect(await page.evaluate(() => document.cookie)).toBe('');
    });

    it('shows in the tree every resource of the cluster that the simulated cloud holds, once Ready', async () => {
      await waitForReady(example.server.kubectl, 'demo', 150);
      await page.goto(url('/dashboard/namespaces/default/clusters/demo'));
      await expect.poll(() => page.getByTestId('why-not-ready').locator('h2').textContent(), { timeout: 10_000 }).toBe('Ready');
      const census = await CloudCensus.open(example.server.cloud!);
      try {
        const ours = await census.ourIds();
        const shown = new Set(await page.locator('[data-testid=tree] li[data-id]').evaluateAll((items) => items.map((item) => item.getAttribute('data-id'))));
        for (const kind of ['networks', 'subnets', 'routers', 'securityGroups', 'servers', 'ports', 'loadBalancers', 'images'] as const) {
          expect(ours[kind].length, kind).toBeGreaterThan(0);
          expect(
            ours[kind].filter((id) => !shown.has(id)),
            `${kind} missing from the tree`,
          ).toEqual([]);
        }
      } finally {
        census.close();
      }
      // The ORC Images the machines and the bastion boot from, with their state.
      expect(await page.locator('[data-testid=tree] li[data-kind="Image"]').evaluateAll((items) => items.map((item) => item.textContent ?? ''))).toEqual([
        expect.stringMatching(/bastion-image.*Available/),
        expect.stringMatching(/node-image.*Available/),
      ]);
      expect(await page.getByTestId('variables').textContent()).toContain('master_virtual_vip');
      // The timeline has a bar per object, each Ready one with its duration.
      const bars = page.locator('[data-testid=timeline] g[data-object]');
      expect(await bars.evaluateAll((groups) => groups.map((group) => group.getAttribute('data-object')))).toEqual(
        expect.arrayContaining(['OpenStackCluster demo', 'OpenStackServer demo-bastion', 'OpenStackMachine demo-md-0-2', 'OpenStackServer demo-md-0-2']),
      );
      expect(await page.locator('[data-testid=timeline] g[data-object="OpenStackCluster demo"] .duration').textContent()).toMatch(/^\d+ s$/);
      // The Events of the cluster's objects: marked on their rows, and listed under the timeline.
      expect(
        await page
          .locator('[data-testid=timeline] g[data-object="OpenStackCluster demo"] circle.event')
          .evaluateAll((marks) => marks.map((mark) => mark.getAttribute('data-reason'))),
      ).toEqual(expect.arrayContaining(['SuccessfulCreateNetwork', 'SuccessfulCreateLoadBalancer']));
      expect(await page.getByTestId('events').textContent()).toMatch(/SuccessfulCreateServer.*OpenStackServer demo-md-0-2/s);
      await page.screenshot({ path: path.join(artifacts, 'cluster.png'), fullPage: true });
      await page.goto(url('/dashboard/'));
      await expect.poll(() => page.locator('tr[data-cluster="default/demo"] [data-testid=machines]').textContent()).toBe('6/6');
      // Building the cluster called every service; the chart has a row for each, with its total.
      await expect
        .poll(() => page.locator('[data-testid=calls] g[data-service]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-service'))), {
          timeout: 20_000,
        })
        .toEqual(expect.arrayContaining(['compute', 'identity', 'image', 'load-balancer', 'network']));
      await page.screenshot({ path: path.join(artifacts, 'overview.png'), fullPage: true });
    });

    it("draws the timeline to the cluster's last change, not to now, and lists the missing variables the overview counts", async () => {
      const detail = await (await page.request.get(url('/dashboard/api/namespaces/default/clusters/demo'))).json();
      const readyTimes = (detail.timeline as { readyAt?: string }[])
        .map((span) => span.readyAt)
        .filter((time): time is string => time !== undefined)
        .sort();
      expect(detail.timelineEndsAt >= readyTimes.at(-1)!).toBe(true);
      expect(Date.parse(detail.timelineEndsAt)).toBeLessThan(Date.now());
      // A build that went well has no Warning: machines waiting their turn at the load balancer are not failures.
      expect((detail.events as { type: string; reason: string; message: string }[]).filter((event) => event.type === 'Warning')).toEqual([]);
      await page.goto(url('/dashboard/namespaces/default/clusters/demo'));
      await page.getByTestId('timeline').waitFor();
      const listed = await page.getByTestId('variables').locator('table.missing tbody tr td:first-child').allTextContents();
      expect(listed).toEqual(detail.summary.missingVariables);
    });

    it('shows a kubectl change without a reload', async () => {
      await page.goto(url('/dashboard/namespaces/default/clusters/demo'));
      await page.getByTestId('actions').waitFor();
      const paused = page.locator('h1 .badge', { hasText: 'paused' });
      expect(await paused.count()).toBe(0);
      await example.server.kubectl(['patch', 'clusters.cluster.x-k8s.io', 'demo', '--type=merge', '-p', '{"spec":{"paused":true}}']);
      await paused.waitFor({ timeout: 10_000 });
      await example.server.kubectl(['patch', 'clusters.cluster.x-k8s.io', 'demo', '--type=merge', '-p', '{"spec":{"paused":false}}']);
      await paused.waitFor({ state: 'detached', timeout: 10_000 });
    });

    it('names a server the cloud put in ERROR as the reason the cluster is not Ready', async () => {
      const cloud = example.server.cloud!;
      const demo = await OpenStackSession.create(loadCloud({ cloudsYaml: cloud.cloudsYaml(), cloudName: 'simulator' }));
      const session = await OpenStackSession.create(loadCloud({ cloudsYaml: cloud.cloudsYaml(), cloudName: 'simulator-admin' }));
      try {
        const [server] = await createServiceClients(demo).nova.findServersByName('demo-md-0-1');
        // Nova's admin action to set a server's state by hand: what a failed hypervisor leaves behind.
        await session.request('compute', { method: 'POST', path: `/servers/${server!.id}/action`, body: { 'os-resetState': { state: 'error' } } }, z.unknown());
        // The reconciler looks again at its pace; the admin API asks it now.
        const answer = await page.request.post(url('/admin/v1/namespaces/default/openstackservers/demo-md-0-1/reconcile'), {
          headers: { Authorization: `Bearer ${adminToken}` },
        });
        expect(answer.status()).toBe(202);
      } finally {
        demo.close();
        session.close();
      }
      await page.goto(url('/dashboard/namespaces/default/clusters/demo'));
      const why = page.getByTestId('why-not-ready');
      await expect.poll(() => why.locator('.blocker strong').textContent(), { timeout: 20_000 }).toBe('OpenStackServer demo-md-0-1');
      expect(await why.locator('.blocker').textContent()).toContain('ERROR');
      await page.screenshot({ path: path.join(artifacts, 'why-not-ready.png'), fullPage: true });
    });

    it("marks drift: the floating IP deleted behind the reconciler's back, and made again", async () => {
      const cloud = example.server.cloud!;
      const demo = await OpenStackSession.create(loadCloud({ cloudsYaml: cloud.cloudsYaml(), cloudName: 'simulator' }));
      let gone: string;
      try {
        const cluster = (await getObject(example.server.kubectl, 'openstackcluster/demo')) as {
          status: { extensions: { ownedResources: Record<string, string> } };
        };
        gone = cluster.status.extensions.ownedResources['floatingip/api'];
        await createServiceClients(demo).neutron.deleteFloatingIp(gone);
        const answer = await page.request.post(url('/admin/v1/namespaces/default/openstackclusters/demo/reconcile'), {
          headers: { Authorization: `Bearer ${adminToken}` },
        });
        expect(answer.status()).toBe(202);
      } finally {
        demo.close();
      }
      await page.goto(url('/dashboard/namespaces/default/clusters/demo'));
      const drift = page.getByTestId('drift');
      await expect.poll(() => drift.textContent(), { timeout: 20_000 }).toContain(gone);
      expect(await drift.textContent()).toMatch(/OpenStackCluster demo.*floating IP.*no longer exists in OpenStack: making it again/s);
      expect(await page.locator('h1 .badge', { hasText: 'drift' }).count()).toBe(1);
      await page.screenshot({ path: path.join(artifacts, 'drift.png'), fullPage: true });
    });

    it('says why the reconciler leaves an OpenStackCluster alone: its Cluster does not exist', async () => {
      const orphan = {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2',
        kind: 'OpenStackCluster',
        metadata: { name: 'orphan', namespace: 'default', labels: { 'cluster.x-k8s.io/cluster-name': 'nowhere' } },
        spec: { identityRef: { name: 'demo-cloud-config', cloudName: 'openstack' } },
      };
      const applied = await example.server.kubectl(['apply', '-f', '-'], { input: JSON.stringify(orphan) });
      expect(applied.stderr).toBe('');
      await page.goto(url('/dashboard/namespaces/default/clusters/orphan'));
      const why = page.getByTestId('why-not-ready');
      await expect.poll(() => why.locator('.blocker strong').first().textContent(), { timeout: 20_000 }).toBe('OpenStackCluster orphan');
      expect(await why.locator('.blocker').first().textContent()).toContain('the Cluster nowhere its label names does not exist');
      await example.server.kubectl(['delete', 'openstackcluster', 'orphan']);
    });

    it('lets the admin reconcile, pause and resume', async () => {
      await page.goto(url('/dashboard/namespaces/default/clusters/demo'));
      await page.getByRole('button', { name: 'Reconcile now' }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toBe('Queued for reconcile.');
      await page.getByRole('button', { name: 'Pause' }).click();
      await page.getByRole('button', { name: 'Resume' }).waitFor();
      expect(
        JSON.parse(await example.server.kubectl(['get', 'clusters.cluster.x-k8s.io', 'demo', '-o', 'json']).then((result) => result.stdout)).spec.paused,
      ).toBe(true);
      await page.getByRole('button', { name: 'Resume' }).click();
      await page.getByRole('button', { name: 'Pause' }).waitFor();
    });

    it('finds resources of ours whose owner is gone, and deletes them once confirmed', async () => {
      const cloud = example.server.cloud!;
      const session = await OpenStackSession.create(loadCloud({ cloudsYaml: cloud.cloudsYaml(), cloudName: 'simulator' }));
      const { neutron } = createServiceClients(session);
      // What a deletion cut short leaves: a network and a port tagged for an object that no longer exists.
      const goneOwner = 'capo-apiserver:owner=00000000-0000-4000-8000-00000000dead';
      const network = await neutron.createNetwork({ name: 'left-behind' });
      await neutron.replaceTags('networks', network.id, [goneOwner]);
      const port = await neutron.createPort({ network_id: network.id, name: 'left-behind-port' });
      await neutron.replaceTags('ports', port.id, [goneOwner]);
      try {
        await page.goto(url('/dashboard/'));
        const leaks = page.getByTestId('leaks');
        await leaks.getByRole('button', { name: 'Run leak audit' }).click();
        await leaks.locator(`tr[data-leak="${network.id}"]`).waitFor();
        expect(await leaks.locator('tr[data-leak]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-leak')))).toEqual([port.id, network.id]);
        await page.screenshot({ path: path.join(artifacts, 'leak-audit.png'), fullPage: true });
        // Nothing goes on the first click.
        await leaks.getByRole('button', { name: 'Delete leaked resources…' }).click();
        expect(await neutron.getNetwork(network.id)).toMatchObject({ id: network.id });
        await leaks.getByRole('button', { name: 'Confirm: delete 2 resources' }).click();
        await expect.poll(() => leaks.getByTestId('leak-summary').textContent()).toMatch(/^No leaks in 1 cloud/);
        expect(await leaks.getByTestId('cleanup-outcomes').locator('li').allTextContents()).toEqual([
          `ports ${port.id}: deleted`,
          `networks ${network.id}: deleted`,
        ]);
        expect(await neutron.listNetworks({ name: 'left-behind' })).toEqual([]);
      } finally {
        session.close();
      }
      // The example cluster's own resources were never among them.
      expect(await example.server.kubectl(['get', 'openstackcluster', 'demo', '-o', 'jsonpath={.status.network.id}']).then((result) => result.stdout)).not.toBe(
        '',
      );
    });

    /** A browser of its own signed in with `token`, on the example cluster's page; the caller closes its context. */
    async function clusterPageAs(token: string): Promise<Page> {
      // The policy file is re-read when saved: the user can read the cluster once it has been.
      const probe = await browser.newContext({ ignoreHTTPSErrors: true });
      await probe.request.post(url('/dashboard/api/session'), { data: { token } });
      await expect.poll(async () => (await probe.request.get(url('/dashboard/api/namespaces/default/clusters/demo'))).status()).toBe(200);
      await probe.close();
      const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
      const user = await context.newPage();
      await signIn(user, token);
      await user.goto(url('/dashboard/namespaces/default/clusters/demo'));
      await user.getByTestId('tree').waitFor();
      return user;
    }

    it('shows a read-only user no actions, and refuses them when sent anyway', async () => {
      const viewer = await clusterPageAs('viewer-token');
      try {
        await expect.poll(() => viewer.getByTestId('why-not-ready').count()).toBe(1);
        expect(await viewer.getByTestId('actions').getByRole('button').allTextContents()).toEqual(['Run preflight']);
        await viewer.screenshot({ path: path.join(artifacts, 'cluster-read-only.png'), fullPage: true });
        const { csrfToken } = await (await viewer.request.get(url('/dashboard/api/session'))).json();
        expect((await viewer.request.get(url('/dashboard/api/leaks'))).status()).toBe(403);
        expect(
          (
            await viewer.request.post(url('/dashboard/api/leaks/cleanup'), {
              headers: { 'X-CSRF-Token': csrfToken },
              data: { resources: [{ kind: 'networks', id: 'x' }] },
            })
          ).status(),
        ).toBe(403);
        for (const action of ['reconcile', 'pause', 'resume']) {
          const answer = await viewer.request.post(url(`/dashboard/api/namespaces/default/clusters/demo/${action}`), {
            headers: { 'X-CSRF-Token': csrfToken },
          });
          expect(answer.status(), action).toBe(403);
          expect(await answer.json()).toMatchObject({ kind: 'Status', reason: 'Forbidden', message: expect.stringContaining('User "viewer" cannot') });
        }
      } finally {
        await viewer.context().close();
      }
    });

    it("tells a user allowed only OpenStackClusters which parts of the cluster's page are not shown to them", async () => {
      const limited = await clusterPageAs('clusters-only-token');
      try {
        expect(await limited.getByTestId('hidden').textContent()).toBe(
          'Not shown to you: clusterextensions, clusters, events, images, openstackmachines, openstackservers',
        );
        await limited.screenshot({ path: path.join(artifacts, 'cluster-clusters-only.png'), fullPage: true });
        // The admin, who may read everything, is told of nothing hidden.
        await page.goto(url('/dashboard/namespaces/default/clusters/demo'));
        await page.getByTestId('tree').waitFor();
        expect(await page.getByTestId('hidden').count()).toBe(0);
      } finally {
        await limited.context().close();
      }
    });

    it('refuses a mutating call without the CSRF token, any call without the cookie, and a malformed sign-in', async () => {
      const withoutToken = await page.request.post(url('/dashboard/api/namespaces/default/clusters/demo/reconcile'));
      expect(withoutToken.status()).toBe(403);
      expect(await withoutToken.json()).toMatchObject({
        kind: 'Status',
        reason: 'Forbidden',
        message: "a POST needs the session's CSRF token in the x-csrf-token header",
      });
      const wrongToken = await page.request.post(url('/dashboard/api/namespaces/default/clusters/demo/reconcile'), { headers: { 'X-CSRF-Token': 'forged' } });
      expect(wrongToken.status()).toBe(403);

      const anonymous = await browser.newContext({ ignoreHTTPSErrors: true });
      try {
        for (const [method, pathname] of [
          ['GET', '/dashboard/api/clusters'],
          ['GET', '/dashboard/api/events'],
          ['POST', '/dashboard/api/namespaces/default/clusters/demo/pause'],
        ] as const) {
          const answer = await anonymous.request.fetch(url(pathname), { method });
          expect(answer.status(), `${method} ${pathname}`).toBe(401);
          expect(await answer.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized' });
        }
        for (const [body, code, reason] of [
          ['{"token":', 400, 'BadRequest'],
          [JSON.stringify({ token: 'x', admin: true }), 400, 'BadRequest'],
          [JSON.stringify({ token: 'x'.repeat(200_000) }), 413, 'RequestEntityTooLarge'],
        ] as const) {
          const answer = await anonymous.request.post(url('/dashboard/api/session'), { data: body, headers: { 'Content-Type': 'application/json' } });
          expect(answer.status(), body.slice(0, 20)).toBe(code);
          expect(await answer.json()).toMatchObject({ kind: 'Status', reason });
        }
        // What a form on another site could send: refused before the token is looked at.
        const form = await anonymous.request.post(url('/dashboard/api/session'), {
          data: JSON.stringify({ token: adminToken }),
          headers: { 'Content-Type': 'text/plain' },
        });
        expect(form.status()).toBe(415);
        expect(await anonymous.cookies()).toEqual([]);
      } finally {
        await anonymous.close();
      }
    });

    it('serves every page under a Content-Security-Policy that allows no inline script', async () => {
      const answer = await page.request.get(url('/dashboard/'));
      expect(answer.headers()['content-security-policy']).toContain("script-src 'self'");
      expect(answer.headers()['content-security-policy']).not.toContain('unsafe-inline');
      const violations: string[] = [];
      page.on('console', (message) => {
        if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
      });
      await page.goto(url('/dashboard/namespaces/default/clusters/demo'));
      await page.getByTestId('tree').waitFor();
      expect(violations).toEqual([]);
    });
  },
);

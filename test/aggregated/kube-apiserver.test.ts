/**
 * The server aggregated behind a real kube-apiserver: registered with APIServices for every
 * group-version it serves, it is found Available, kubectl reaches it through kube-apiserver, and
 * authentication and authorization are the management cluster's (front-proxy certificates and
 * SubjectAccessReview). Straight to its port, forged identity headers and a front-proxy
 * certificate with a name that is not allowed get nowhere.
 */
import https from 'node:https';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from '../../src/app.js';
import { createAnsibleWorkspace, requireAnsible } from '../ansible/workspace.js';
import { startAggregatedServer, type AggregatedServer } from '../../harness/aggregated-server.js';
import { controlPlaneUnavailable, kubectlProxy, startControlPlane, type ControlPlane } from '../../harness/control-plane.js';
import { pollUntil } from '../../harness/poll.js';

const unavailable = controlPlaneUnavailable();
const group = 'infrastructure.cluster.x-k8s.io';

let plane: ControlPlane;
let server: AggregatedServer;
let app: RunningApp;
let frontProxy: { cert: string; key: string };
let intruder: { cert: string; key: string };
let expired: { cert: string; key: string };

/** A request straight to the server's port, with whatever certificate and headers a test gives. */
function direct(
  urlPath: string,
  options: { method?: string; cert?: string; key?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: string }> {
  const { method = 'GET', cert, key, headers, body: requestBody } = options;
  return new Promise((resolve, reject) => {
    const request = https.request(new URL(urlPath, app.url), { method, ca: server.serverCa, cert, key, headers, servername: server.serverName }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end(requestBody);
  });
}

describe.skipIf(unavailable !== undefined)(
  unavailable === undefined ? 'aggregated behind kube-apiserver' : `aggregated behind kube-apiserver (skipped: ${unavailable})`,
  () => {
    beforeAll(async () => {
      plane = await startControlPlane({ controllerManager: true });
      frontProxy = await plane.certificate('test-front-proxy', '/CN=front-proxy-client', 'extendedKeyUsage=clientAuth', 'front-proxy-ca');
      intruder = await plane.certificate('intruder', '/CN=intruder', 'extendedKeyUsage=clientAuth', 'front-proxy-ca');
      // Valid for no time at all: expired by the time a test presents it.
      expired = await plane.certificate('expired-front-proxy', '/CN=front-proxy-client', 'extendedKeyUsage=clientAuth', 'front-proxy-ca', 0);
      server = await startAggregatedServer(plane);
      app = server.app;
      const rbac = await plane.kubectl(
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'List',
          items: [
            { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } },
            {
              apiVersion: 'rbac.authorization.k8s.io/v1',
              kind: 'Role',
              metadata: { name: 'osc-reader', namespace: 'team-a' },
              rules: [{ apiGroups: [group], resources: ['openstackclusters'], verbs: ['get', 'list', 'watch'] }],
            },
            {
              apiVersion: 'rbac.authorization.k8s.io/v1',
              kind: 'RoleBinding',
              metadata: { name: 'reader', namespace: 'team-a' },
              roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'osc-reader' },
              subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'reader' }],
            },
          ],
        }),
      );
      if (rbac.code !== 0) throw new Error(rbac.stderr);
    }, 300_000);

    afterAll(async () => {
      await server?.close();
      await plane?.stop();
    }, 120_000);

    it('is discovered and served through kube-apiserver by kubectl', async () => {
      const resources = await plane.kubectl(['api-resources', `--api-group=${group}`, '-o', 'name']);
      expect(resources.stdout.split('\n')).toEqual(expect.arrayContaining([`openstackclusters.${group}`, `openstackmachines.${group}`]));
      const manifest = {
        apiVersion: `${group}/v1beta2`,
        kind: 'OpenStackCluster',
        metadata: { name: 'demo', namespace: 'team-a' },
        spec: { identityRef: { cloudName: 'openstack', name: 'demo-cloud-config' } },
      };
      const applied = await plane.kubectl(['apply', '-f', '-'], JSON.stringify(manifest));
      expect(applied.stderr).toBe('');
      expect(applied.stdout).toContain(`openstackcluster.${group}/demo created`);
      const read = JSON.parse((await plane.kubectl(['get', 'osc', 'demo', '-n', 'team-a', '-o', 'json'])).stdout);
      // Defaulted by our schema, as CAPO's CRD defaults it.
      expect(read.spec.identityRef).toEqual({ ...manifest.spec.identityRef, type: 'Secret' });
      const wide = await plane.kubectl(['get', 'openstackclusters', '-A', '-o', 'wide']);
      expect(wide.stdout).toMatch(/^NAMESPACE\s+NAME\s+CLUSTER\s+NETWORK\s+ENDPOINT\s+BASTION IP\s+AGE/);
    });

    it('asks the management cluster who may do what (SubjectAccessReview)', async () => {
      const asReader = (urlPath: string) =>
        direct(urlPath, { ...frontProxy, headers: { 'X-Remote-User': 'reader', 'X-Remote-Group': 'system:authenticated' } });
      expect((await asReader(`/apis/${group}/v1beta2/namespaces/team-a/openstackclusters`)).status).toBe(200);
      const elsewhere = await asReader(`/apis/${group}/v1beta2/namespaces/default/openstackclusters`);
      expect(elsewhere.status).toBe(403);
      expect(JSON.parse(elsewhere.body).message).toContain('User "reader" cannot list resource "openstackclusters"');
      const deleting = await direct(`/apis/${group}/v1beta2/namespaces/team-a/openstackclusters/demo`, {
        method: 'DELETE',
        ...frontProxy,
        headers: { 'X-Remote-User': 'reader' },
      });
      expect(deleting.status).toBe(403);
    });

    it('believes identity headers only from the allowed front proxy', async () => {
      const forged = { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' };
      const listPath = `/apis/${group}/v1beta2/openstackclusters`;
      // No certificate: the headers are dropped, and anonymous may not list.
      expect((await direct(listPath, { headers: forged })).status).toBe(401);
      // A front-proxy CA certificate whose name is not among the allowed ones.
      expect((await direct(listPath, { ...intruder, headers: forged })).status).toBe(401);
      // The allowed name, from the right CA, but expired.
      expect((await direct(listPath, { ...expired, headers: forged })).status).toBe(401);
      // The real front proxy's certificate, naming the admin.
      expect((await direct(listPath, { ...frontProxy, headers: forged })).status).toBe(200);
    });

    it('takes server-side apply, explain, watch and delete through kube-apiserver', async () => {
      const applied = await plane.kubectl(
        ['apply', '--server-side', '--field-manager=platform', '-f', '-'],
        JSON.stringify({
          apiVersion: `${group}/v1beta2`,
          kind: 'OpenStackMachineTemplate',
          metadata: { name: 'workers', namespace: 'team-a' },
          spec: { template: { spec: { flavor: { filter: { name: 'm1.small' } }, image: { filter: { name: 'ubuntu' } } } } },
        }),
      );
      expect(applied.stderr).toBe('');
      expect(applied.stdout).toContain(`openstackmachinetemplate.${group}/workers serverside-applied`);
      const explained = await plane.kubectl(['explain', 'openstackcluster.spec.apiServer']);
      expect(explained.stdout).toContain('managedLoadBalancer');
      const watch = await plane.kubectl(['get', 'osmt', '-n', 'team-a', '--watch-only', '--output-watch-events', '-o', 'name', '--request-timeout=5s']);
      // A watch that saw nothing happen ends at the client's timeout without an error of ours.
      expect(watch.stderr).not.toContain('Error from server');
      const deleted = await plane.kubectl(['delete', 'osmt', 'workers', '-n', 'team-a']);
      expect(deleted.stdout).toContain('deleted');
      expect((await plane.kubectl(['get', 'osmt', '-n', 'team-a', '-o', 'name'])).stdout).toBe('');
      const computed = await plane.kubectl(['get', 'clusterextensions', '-A']);
      expect(computed.code, computed.stderr).toBe(0);
    });

    it('authenticates bearer tokens with TokenReview', async () => {
      const created = await plane.kubectl(['create', 'serviceaccount', 'bot', '-n', 'team-a']);
      expect(created.code, created.stderr).toBe(0);
      const token = (await plane.kubectl(['create', 'token', 'bot', '-n', 'team-a'])).stdout.trim();
      const listPath = `/apis/${group}/v1beta2/namespaces/team-a/openstackclusters`;
      const asBot = await direct(listPath, { headers: { Authorization: `Bearer ${token}` } });
      // Authenticated as the service account, which RBAC gives nothing: 403 naming it, not 401.
      expect(asBot.status).toBe(403);
      expect(JSON.parse(asBot.body).message).toContain('User "system:serviceaccount:team-a:bot"');
      expect((await direct(listPath, { headers: { Authorization: 'Bearer not-a-token' } })).status).toBe(401);
    });

    it("answers GraphQL under its group-version through kube-apiserver, with the caller's credentials", async () => {
      const answered = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = https.request(
          new URL('/apis/extensions.capo-apiserver.io/v1alpha1/graphql', plane.url),
          { method: 'POST', ca: server.serverCa, ...plane.admin, headers: { 'Content-Type': 'application/json' } },
          (response) => {
            let body = '';
            response.setEncoding('utf8');
            response.on('data', (chunk) => (body += chunk));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
          },
        );
        request.on('error', reject);
        request.end(JSON.stringify({ query: '{ clusters(namespace: "team-a") { totalCount edges { node { name } } } }' }));
      });
      expect(answered.status, answered.body).toBe(200);
      expect(JSON.parse(answered.body)).toEqual({ data: { clusters: { totalCount: 1, edges: [{ node: { name: 'demo' } }] } } });
    });

    it('serves the admin API under its group-version through kube-apiserver', async () => {
      const queue = await plane.kubectl(['get', '--raw', '/apis/extensions.capo-apiserver.io/v1alpha1/admin/queue']);
      expect(queue.stderr).toBe('');
      expect(JSON.parse(queue.stdout)).toEqual({ controllers: [] });
    });

    it('serves the dashboard through kubectl proxy, as the user kube-apiserver authenticated, CSRF-guarded', async () => {
      const proxy = await kubectlProxy(plane.kubeconfig);
      try {
        const root = `${proxy.url}/apis/extensions.capo-apiserver.io/v1alpha1/dashboard`;
        const page = await fetch(`${root}/namespaces/team-a/clusters/demo`);
        expect(page.status).toBe(200);
        expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
        // The page's files are found below the path it was reached by.
        const script = new URL(/src="([^"]+\.js)"/.exec(await page.text())![1]!, page.url);
        expect(script.href).toMatch(new RegExp(`^${root}/assets/`));
        expect((await fetch(script)).status).toBe(200);

        const session = (await (await fetch(`${root}/api/session`)).json()) as { user: { name: string; groups: string[] }; csrfToken: string };
        expect(session.user.groups).toContain('system:masters');
        const clusters = (await (await fetch(`${root}/api/clusters`)).json()) as { clusters: { namespace: string; name: string }[] };
        expect(clusters.clusters.map((cluster) => `${cluster.namespace}/${cluster.name}`)).toContain('team-a/demo');
        // The proxy adds the user's credentials to whatever reaches it, so a mutating call needs the CSRF token too.
        const forged = await fetch(`${root}/api/namespaces/team-a/clusters/demo/pause`, { method: 'POST' });
        expect(forged.status).toBe(403);
        const paused = await fetch(`${root}/api/namespaces/team-a/clusters/demo/pause`, { method: 'POST', headers: { 'X-CSRF-Token': session.csrfToken } });
        // Without a reconciler this server does not follow Cluster API's Clusters in the management cluster.
        expect(await paused.json()).toMatchObject({ code: 503, message: expect.stringContaining('kubectl patch cluster') });
      } finally {
        proxy.stop();
      }
    });

    it('gives the Ansible plugin its inventory through kube-apiserver, with a kubeconfig', async () => {
      await requireAnsible();
      const workspace = await createAnsibleWorkspace();
      try {
        const file = await workspace.writeConfig('mgmt.capo.yml', { plugin: 'capo.openstack.inventory', kubeconfig: plane.kubeconfig, namespace: 'team-a' });
        const result = await workspace.inventory(['-i', file, '--list']);
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
        expect(JSON.parse(result.stdout)).toHaveProperty('all');
      } finally {
        await workspace.close();
      }
    });

    it('creates nothing in a namespace that is missing or being deleted, and is emptied by the namespace controller', async () => {
      const cluster = (namespace: string, name: string, metadata: Record<string, unknown> = {}) =>
        JSON.stringify({
          apiVersion: `${group}/v1beta2`,
          kind: 'OpenStackCluster',
          metadata: { name, namespace, ...metadata },
          spec: { identityRef: { cloudName: 'openstack', name: 'cloud' } },
        });
      const missing = await plane.kubectl(['create', '-f', '-'], cluster('nowhere', 'c'));
      expect(missing.stderr).toContain('namespaces "nowhere" not found');

      expect((await plane.kubectl(['create', 'namespace', 'doomed'])).code).toBe(0);
      expect((await plane.kubectl(['create', '-f', '-'], cluster('doomed', 'held', { finalizers: ['testing.capo.dev/hold'] }))).code).toBe(0);
      expect((await plane.kubectl(['delete', 'namespace', 'doomed', '--wait=false'])).code).toBe(0);
      // kube-controller-manager's namespace controller deletes our object; its finalizer keeps it, and the namespace, terminating.
      const terminating = await plane.kubectl(['wait', '--for=jsonpath={.metadata.deletionTimestamp}', 'osc/held', '-n', 'doomed', '--timeout=60s']);
      expect(terminating.code, terminating.stderr).toBe(0);
      const refused = await plane.kubectl(['create', '-f', '-'], cluster('doomed', 'late'));
      expect(refused.stderr).toContain('unable to create new content in namespace doomed because it is being terminated');
      await plane.kubectl(['patch', 'osc', 'held', '-n', 'doomed', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
      const gone = await plane.kubectl(['wait', '--for=delete', 'namespace/doomed', '--timeout=90s']);
      expect(gone.code, gone.stderr).toBe(0);
    });

    it('lets the garbage collector delete objects whose owner in kube-apiserver is gone', async () => {
      expect((await plane.kubectl(['create', 'configmap', 'owner', '-n', 'team-a'])).code).toBe(0);
      const uid = (await plane.kubectl(['get', 'configmap', 'owner', '-n', 'team-a', '-o', 'jsonpath={.metadata.uid}'])).stdout;
      const owned = {
        apiVersion: `${group}/v1beta2`,
        kind: 'OpenStackCluster',
        metadata: { name: 'owned', namespace: 'team-a', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid }] },
        spec: { identityRef: { cloudName: 'openstack', name: 'cloud' } },
      };
      expect((await plane.kubectl(['create', '-f', '-'], JSON.stringify(owned))).code).toBe(0);
      expect((await plane.kubectl(['delete', 'configmap', 'owner', '-n', 'team-a'])).code).toBe(0);
      const collected = await plane.kubectl(['wait', '--for=delete', 'osc/owned', '-n', 'team-a', '--timeout=90s']);
      expect(collected.code, collected.stderr).toBe(0);
    });

    it("carries Cluster API's contract labels on CRDs that take no traffic from the APIServices", async () => {
      const crds = fileURLToPath(new URL('../../deploy/api/contract-crds.yaml', import.meta.url));
      const applied = await plane.kubectl(['apply', '-f', crds]);
      expect(applied.code, applied.stderr).toBe(0);
      const established = await plane.kubectl(['wait', '--for=condition=Established', `crd/openstackclusters.${group}`, '--timeout=30s']);
      expect(established.code, established.stderr).toBe(0);
      const labels = JSON.parse((await plane.kubectl(['get', 'crd', `openstackclusters.${group}`, '-o', 'jsonpath={.metadata.labels}'])).stdout);
      expect(labels).toMatchObject({ 'cluster.x-k8s.io/v1beta2': 'v1beta2' });
      // Still ours: the APIService stays Available and requests keep reaching this server.
      expect((await plane.kubectl(['wait', '--for=condition=Available', `apiservice/v1beta2.${group}`, '--timeout=30s'])).code).toBe(0);
      const read = await plane.kubectl(['get', 'osc', 'demo', '-n', 'team-a', '-o', 'jsonpath={.spec.identityRef.name}']);
      expect(read.stdout).toBe('demo-cloud-config');
    });

    it('has install manifests (deploy/) that kube-apiserver accepts', async () => {
      const deploy = fileURLToPath(new URL('../../deploy', import.meta.url));
      const applied = await plane.kubectl(['apply', '--dry-run=server', '-k', deploy]);
      expect(applied.stderr).toBe('');
      for (const object of [
        'deployment.apps/capo-apiserver',
        'service/capo-apiserver',
        'apiservice.apiregistration.k8s.io/v1beta2.infrastructure.cluster.x-k8s.io',
        'poddisruptionbudget.policy/capo-apiserver',
      ]) {
        expect(applied.stdout).toContain(object);
      }
    });

    it('fails closed when TokenReview and SubjectAccessReview do not answer, and remembers nothing of it', async () => {
      const token = (await plane.kubectl(['create', 'token', 'bot', '-n', 'team-a'])).stdout.trim();
      const carol = await plane.certificate('carol', '/CN=carol', 'extendedKeyUsage=clientAuth');
      const listPath = `/apis/${group}/v1beta2/namespaces/team-a/openstackclusters`;
      const frozen = await plane.freezeApiServer();
      let answers: { status: number; body: string }[];
      try {
        // Each review has 10 s; the administrator's certificate (system:masters) needs none.
        answers = await Promise.all([
          direct(listPath, { headers: { Authorization: `Bearer ${token}` } }),
          direct(listPath, carol),
          direct(listPath, plane.admin),
        ]);
      } finally {
        frozen.resume();
      }
      const [byToken, byCarol, byAdmin] = answers;
      expect(byToken.status).toBe(401);
      expect(byCarol.status).toBe(500);
      expect(JSON.parse(byCarol.body)).toMatchObject({ kind: 'Status', reason: 'InternalError', code: 500 });
      expect(byAdmin.status).toBe(200);
      // Once kube-apiserver answers again, so do the reviews: the failures were not cached.
      const asBot = await direct(listPath, { headers: { Authorization: `Bearer ${token}` } });
      expect(asBot.status).toBe(403);
      expect(JSON.parse(asBot.body).message).toContain('User "system:serviceaccount:team-a:bot"');
      expect(JSON.parse((await direct(listPath, carol)).body).message).toContain('User "carol" cannot list resource "openstackclusters"');
    }, 120_000);

    it('keeps serving what it stores while the management cluster is gone, reports not ready, and recovers by itself', async () => {
      const listPath = `/apis/${group}/v1beta2/openstackclusters`;
      const readBefore = await direct(listPath, plane.admin);
      expect(readBefore.status).toBe(200);
      const stopped = await plane.stopApiServer();
      try {
        const readDuring = await direct(listPath, plane.admin);
        expect(readDuring.status).toBe(200);
        expect(JSON.parse(readDuring.body)).toEqual(JSON.parse(readBefore.body));
        const notReady = await pollUntil(
          'readiness to report the management cluster gone',
          async () => {
            const answer = await direct('/readyz?verbose');
            const gone = ['[-]namespace-informer failed', '[-]extension-apiserver-authentication failed'].every((line) => answer.body.includes(line));
            return answer.status === 500 && gone ? answer : undefined;
          },
          { timeoutMs: 30_000, intervalMs: 200 },
        );
        expect(notReady.body).toContain('[+]storage ok');
        expect((await direct('/livez')).status).toBe(200);
        // A create needs the namespace from the management cluster: refused, not admitted blind.
        const create = await direct(`/apis/${group}/v1beta2/namespaces/fresh/openstackclusters`, {
          method: 'POST',
          ...plane.admin,
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({
            apiVersion: `${group}/v1beta2`,
            kind: 'OpenStackCluster',
            metadata: { name: 'blind' },
            spec: { identityRef: { cloudName: 'openstack', name: 'cloud' } },
          }),
        });
        expect(create.status).toBe(500);
      } finally {
        await stopped.start();
      }
      await pollUntil('readiness after the management cluster is back', async () => ((await direct('/readyz')).status === 200 ? true : undefined), {
        timeoutMs: 60_000,
        intervalMs: 200,
      });
      // Nothing stored changed, and kubectl reaches the server through kube-apiserver again.
      expect(JSON.parse((await direct(listPath, plane.admin)).body)).toEqual(JSON.parse(readBefore.body));
      expect((await plane.kubectl(['wait', '--for=condition=Available', `apiservice/v1beta2.${group}`, '--timeout=60s'])).code).toBe(0);
      // Availability and discovery are separate controllers in kube-apiserver: its discovery manager
      // fetches ours once it is back, and a fetch that failed (it allows 5 s, and the suite loads two
      // cores) leaves the group-version listed without resources until a retry with backoff or its
      // refresh of every minute. kubectl is given that long to find the resource again.
      let lastError = '';
      await pollUntil(
        "kubectl to find openstackclusters in kube-apiserver's discovery again",
        async () => {
          const listed = await plane.kubectl(['get', `openstackclusters.${group}`, '-A', '-o', 'name']);
          lastError = listed.stderr;
          return listed.code === 0 ? true : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 1_000 },
      ).catch((error: Error) => {
        throw new Error(`${error.message}; kubectl said: ${lastError}`);
      });
    }, 360_000);

    it('answers health checks without asking anyone', async () => {
      expect(await direct('/readyz')).toEqual({ status: 200, body: 'ok' });
    });
  },
);

/**
 * clusterextensions and openstacknodes as kubectl sees them: the real
 * kubectl against the real server, with CAPO objects and their status
 * written through the API.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { computedKinds } from '../../../src/inventory/kinds/kinds.js';
import { infrastructureKinds } from '../../../src/api/infrastructure/kinds.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { kubectlFails, kubectlOk, openWatch, request, startTestServer, type TestServer } from '../../../harness/test-server.js';
import { cluster, controlPlaneHostVars, machine, namespace, server as openStackServer } from '../../../harness/inventory-objects.js';

let server: TestServer;

const ok = (args: string[], input?: string) => kubectlOk(server, args, input);
const fails = (args: string[], input?: string) => kubectlFails(server, args, input);

/** Creates a fixture object through the API (without its status), then writes its status through the status subresource. */
async function createWithStatus(object: JsonObject, resource: string, change: (object: Record<string, any>) => void = () => undefined): Promise<void> {
  const { status, metadata, ...rest } = structuredClone(object) as Record<string, any>;
  const { uid: _uid, resourceVersion: _rv, creationTimestamp: _created, ownerReferences, ...meta } = metadata;
  const body: Record<string, any> = { ...rest, metadata: meta };
  if (ownerReferences) {
    const owner = JSON.parse(await ok(['get', 'openstackmachine', ownerReferences[0].name, '-n', namespace, '-o', 'json']));
    body.metadata.ownerReferences = [{ ...ownerReferences[0], uid: owner.metadata.uid }];
  }
  change(body);
  await ok(['create', '-f', '-'], JSON.stringify(body));
  await patchStatus(resource, meta.name, status);
}

async function patchStatus(resource: string, name: string, status: unknown): Promise<void> {
  await ok(['patch', resource, name, '-n', namespace, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
}

beforeAll(async () => {
  server = await startTestServer({ kinds: [...infrastructureKinds, ...computedKinds] });
  await createWithStatus(cluster(), 'openstackcluster');
  await createWithStatus(machine('c1-cp-0', { controlPlane: true, address: '10.6.0.20' }), 'openstackmachine');
  await createWithStatus(machine('c1-md-a', { address: '10.6.0.21' }), 'openstackmachine');
  await createWithStatus(openStackServer('c1-cp-0'), 'openstackserver');
  await createWithStatus(openStackServer('c1-md-a'), 'openstackserver');
});

afterAll(async () => {
  await server?.stop();
});

describe('discovery and explain', () => {
  it('lists both kinds as read-only, with their short names', async () => {
    const out = await ok(['api-resources', '--api-group=extensions.capo-apiserver.io', '-o', 'wide']);
    expect(out).toMatch(/^clusterextensions\s+cext,cexts\s+extensions\.capo-apiserver\.io\/v1alpha1\s+true\s+ClusterExtension\s+get,list,watch/m);
    expect(out).toMatch(/^openstacknodes\s+osknode,osknodes\s+extensions\.capo-apiserver\.io\/v1alpha1\s+true\s+OpenStackNode\s+get,list,watch/m);
  });

  it('explains the status and where each variable comes from', async () => {
    const status = await ok(['explain', 'clusterextensions.status']);
    expect(status).toContain('KIND:       ClusterExtension');
    expect(status).toMatch(/vars\s+<Object>/);
    expect(status).toMatch(/missing\s+<\[\]Object>/);
    const vip = await ok(['explain', 'clusterextensions.status.vars.master_virtual_vip']);
    expect(vip).toContain('From status.extensions.loadBalancers.controlPlane.vip.');
    const reason = await ok(['explain', 'clusterextensions.status.missing.reason']);
    expect(reason).toMatch(/ENUM:\s+NotSet\s+NotReported\s+NotFound\s+NotApplicable/);
    expect(reason).toContain('NotReported: the reconciler has not');
    const vars = await ok(['explain', 'osknode.spec.vars']);
    expect(vars).toMatch(/ansible_ssh_common_args\s+<string>/);
  });
});

describe('kubectl get', () => {
  it('prints clusterextensions with their columns, wide too', async () => {
    const table = (await ok(['get', 'clusterextensions', '-n', namespace])).trim().split('\n');
    expect(table[0]).toMatch(/^NAME\s+PLUGIN\s+API VIP\s+CONTROL PLANE\s+WORKERS\s+MISSING\s+READY\s+AGE$/);
    expect(table[1]).toMatch(/^c1\s+cilium\s+10\.6\.0\.10\s+1\s+1\s+0\s+True\s+\d+s$/);
    const wide = (await ok(['get', 'cext', '-n', namespace, '-o', 'wide'])).trim().split('\n');
    expect(wide[0]).toMatch(/^NAME\s+PLUGIN\s+API VIP\s+CONTROL PLANE\s+WORKERS\s+MISSING\s+READY\s+CLUSTER\s+INGRESS VIP\s+REGION\s+PROJECT\s+AGE$/);
    expect(wide[1]).toMatch(/^c1\s+cilium\s+10\.6\.0\.10\s+1\s+1\s+0\s+True\s+c1\s+10\.6\.0\.11\s+RegionOne\s+team-a-project\s+\d+s$/);
  });

  it('prints openstacknodes with STATUS, ROLES and PROFILE, and selects by label', async () => {
    const table = (await ok(['get', 'osknode', '-n', namespace])).trim().split('\n');
    // The plural of the short name, as the seed document writes it, names the same kind.
    expect(await ok(['get', 'osknodes', '-n', namespace, '-o', 'name'])).toBe(
      'openstacknode.extensions.capo-apiserver.io/c1-cp-0\nopenstacknode.extensions.capo-apiserver.io/c1-md-a\n',
    );
    expect(table[0]).toMatch(/^NAME\s+STATUS\s+ROLES\s+PROFILE\s+AGE$/);
    expect(table.slice(1)).toEqual([
      expect.stringMatching(/^c1-cp-0\s+Running\s+control-plane\s+m1\.large\s+\d+s$/),
      expect.stringMatching(/^c1-md-a\s+Running\s+worker\s+m1\.medium\s+\d+s$/),
    ]);
    const wide = (await ok(['get', 'openstacknodes', 'c1-md-a', '-n', namespace, '-o', 'wide'])).trim().split('\n');
    expect(wide[1]).toMatch(/^c1-md-a\s+Running\s+worker\s+m1\.medium\s+c1\s+10\.6\.0\.21\s+srv-c1-md-a\s+ubuntu-2204-kube-v1\.33\.1\s+\d+s$/);
    expect(await ok(['get', 'osknode', '-n', namespace, '-l', 'cluster.x-k8s.io/control-plane', '-o', 'name'])).toBe(
      'openstacknode.extensions.capo-apiserver.io/c1-cp-0\n',
    );
    expect(await ok(['get', 'cext', '-A', '-l', 'team=a', '-o', 'name'])).toBe('clusterextension.extensions.capo-apiserver.io/c1\n');
    expect(await ok(['get', 'cext', '-A', '-l', 'team=b', '-o', 'name'])).toBe('');
  });

  it('never names the SSH key Secret, in get, list, watch or a Table with the object', async () => {
    const names = (object: any) => object.spec.extensions.ssh;
    expect(names(JSON.parse(await ok(['get', 'clusterextension', 'c1', '-n', namespace, '-o', 'json'])))).toEqual({ user: 'ubuntu' });
    expect(names(JSON.parse(await ok(['get', 'cext', '-n', namespace, '-o', 'json'])).items[0])).toEqual({ user: 'ubuntu' });
    const path = `/apis/extensions.capo-apiserver.io/v1alpha1/namespaces/${namespace}/clusterextensions`;
    const table = await request(server, 'GET', `${path}?includeObject=Object`, { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    expect(table.body).not.toContain('c1-ssh');
    const watch = await openWatch(server, `${path}?watch=true`);
    try {
      expect(names((await watch.waitFor(1))[0].object)).toEqual({ user: 'ubuntu' });
    } finally {
      watch.close();
    }
  });

  it('prints every variable in -o yaml, with a resourceVersion from storage', async () => {
    const yaml = await ok(['get', 'clusterextension', 'c1', '-n', namespace, '-o', 'yaml']);
    for (const line of [
      'kube_network_plugin: cilium',
      'master_virtual_vip: 10.6.0.10',
      'harbor_addr: 10.6.0.11',
      'openstack_region_name: RegionOne',
      'c1-md-a:',
      'kind: ClusterExtension',
    ]) {
      expect(yaml).toContain(line);
    }
    const object = JSON.parse(await ok(['get', 'clusterextension', 'c1', '-n', namespace, '-o', 'json']));
    const list = JSON.parse(await ok(['get', 'openstackservers', '-n', namespace, '-o', 'json']));
    const newest = Math.max(...list.items.map((item: any) => Number(item.metadata.resourceVersion)));
    expect(Number(object.metadata.resourceVersion)).toBe(newest);
    const node = JSON.parse(await ok(['get', 'osknode', 'c1-cp-0', '-n', namespace, '-o', 'json']));
    expect(node.spec.vars).toEqual(controlPlaneHostVars);
    expect(node.status.ports).toEqual([{ id: 'port-c1-cp-0', name: 'c1-cp-0-0', networkID: 'net-1', fixedIPs: ['10.6.0.20'] }]);
  });

  it('answers 404 for objects that are not computed from anything', async () => {
    // In namespace default: for other namespaces kubectl also asks whether the namespace exists.
    expect(await fails(['get', 'clusterextension', 'nope', '-n', 'default'])).toContain(
      'Error from server (NotFound): clusterextensions.extensions.capo-apiserver.io "nope" not found',
    );
  });
});

describe('read-only', () => {
  it('refuses create, patch and delete with MethodNotAllowed', async () => {
    const body = JSON.stringify({ apiVersion: 'extensions.capo-apiserver.io/v1alpha1', kind: 'ClusterExtension', metadata: { name: 'mine', namespace } });
    // Without --validate=false kubectl first looks for the POST path in OpenAPI v3 and, not finding one, wants v2 as protobuf.
    expect(await fails(['create', '--validate=false', '-f', '-'], body)).toContain(
      'Error from server (MethodNotAllowed): error when creating "STDIN": create is not supported on resources of kind "clusterextensions.extensions.capo-apiserver.io"',
    );
    expect(await fails(['delete', 'clusterextension', 'c1', '-n', namespace])).toContain('Error from server (MethodNotAllowed)');
    expect(await fails(['label', 'osknode', 'c1-md-a', '-n', namespace, 'x=y'])).toContain('Error from server (MethodNotAllowed)');
    const collection = `/apis/extensions.capo-apiserver.io/v1alpha1/namespaces/${namespace}/openstacknodes`;
    for (const [method, path] of [
      ['DELETE', collection],
      ['PUT', `${collection}/c1-md-a`],
      ['PATCH', `${collection}/c1-md-a`],
      ['POST', collection],
    ]) {
      const response = await request(server, method, path, { headers: { 'Content-Type': 'application/merge-patch+json' }, body: '{}' });
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(response.json()).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'MethodNotAllowed', code: 405 });
    }
    expect((await request(server, 'GET', `${collection}/c1-md-a/status`)).status).toBe(404);
  });
});

describe('kubectl get -w', () => {
  /** Watch events printed one per line as "TYPE value" by a jsonpath template. */
  function watchLines(args: string[], template: string): { lines: string[]; child: ChildProcessWithoutNullStreams; next(count: number): Promise<string[]> } {
    const child = server.spawnKubectl(['get', ...args, '-n', namespace, '--watch', '--output-watch-events', '-o', `jsonpath={.type} ${template}{"\\n"}`]);
    const lines: string[] = [];
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const parts = buffer.split('\n');
      buffer = parts.pop()!;
      lines.push(...parts.filter(Boolean));
    });
    return {
      lines,
      child,
      async next(count) {
        await vi.waitFor(() => expect(lines.length, JSON.stringify(lines)).toBeGreaterThanOrEqual(count), { timeout: 10_000, interval: 10 });
        return lines.slice(0, count);
      },
    };
  }

  it('shows a machine status change as MODIFIED on its clusterextension and its node, and the cluster deletion', async () => {
    const extension = watchLines(['clusterextension', 'c1'], "{.object.status.vars.node_resources['c1-md-a'].memory}");
    const node = watchLines(['osknode', 'c1-md-a'], '{.object.spec.nodeResources.reserved.memory} {.object.status.missing[*].variable}');
    try {
      expect(await extension.next(1)).toEqual(['ADDED 1380Mi']);
      expect(await node.next(1)).toEqual(['ADDED 1380Mi ']);

      const reserved = { cpu: '100m', memory: '2000Mi', ephemeralStorage: '500Mi' };
      await patchStatus('openstackmachine', 'c1-md-a', { extensions: { nodeResources: { reserved } } });
      expect(await extension.next(2)).toEqual(['ADDED 1380Mi', 'MODIFIED 2000Mi']);
      expect(await node.next(2)).toEqual(['ADDED 1380Mi ', 'MODIFIED 2000Mi ']);

      await ok(['delete', 'openstackcluster', 'c1', '-n', namespace]);
      expect(await extension.next(3)).toEqual(['ADDED 1380Mi', 'MODIFIED 2000Mi', 'DELETED 2000Mi']);
      // The node outlives its cluster, and says what it lost.
      expect(await node.next(3)).toEqual(['ADDED 1380Mi ', 'MODIFIED 2000Mi ', 'MODIFIED 2000Mi cluster']);
    } finally {
      extension.child.kill();
      node.child.kill();
    }
  });

  it('prints a new table row when a server changes state', async () => {
    const child = server.spawnKubectl(['get', 'osknode', 'c1-md-a', '-n', namespace, '--watch']);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const rows = async (count: number) => {
      await vi.waitFor(() => expect(output.trim().split('\n').length, output).toBeGreaterThanOrEqual(count), { timeout: 10_000, interval: 10 });
      return output.trim().split('\n');
    };
    try {
      expect((await rows(2))[1]).toMatch(/^c1-md-a\s+Running\s+worker\s+m1\.medium\s+\d+s$/);
      await patchStatus('openstackserver', 'c1-md-a', { instanceState: 'BUILD' });
      expect((await rows(3))[2]).toMatch(/^c1-md-a\s+Provisioning\s+worker\s+m1\.medium\s+\d+s$/);
    } finally {
      child.kill();
    }
  });

  it('resumes a watch from a resourceVersion', async () => {
    const path = `/apis/extensions.capo-apiserver.io/v1alpha1/namespaces/${namespace}/openstacknodes`;
    const listed = (await request(server, 'GET', path)).json();
    await patchStatus('openstackserver', 'c1-cp-0', { instanceState: 'SHUTOFF' });
    await patchStatus('openstackserver', 'c1-cp-0', { instanceState: 'ERROR' });
    const watch = await openWatch(server, `${path}?watch=1&resourceVersion=${listed.metadata.resourceVersion}`);
    try {
      const events = await watch.waitFor(2);
      expect(events.map((e) => [e.type, e.object.metadata.name, e.object.status.phase])).toEqual([
        ['MODIFIED', 'c1-cp-0', 'Stopped'],
        ['MODIFIED', 'c1-cp-0', 'Failed'],
      ]);
      const resumed = await openWatch(server, `${path}?watch=1&resourceVersion=${events[0].object.metadata.resourceVersion}`);
      try {
        expect((await resumed.waitFor(1)).map((e) => e.object.status.phase)).toEqual(['Failed']);
      } finally {
        resumed.close();
      }
    } finally {
      watch.close();
    }
  });
});

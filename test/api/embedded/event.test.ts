/**
 * The core v1 Event as the embedded mode serves it: kubectl creates and lists Events, selects them
 * by the fields kube's event strategy declares (and refuses others as kube does), prints kube's
 * columns, and Events an hour past their last change are swept away.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../../harness/test-server.js';
import { eventKind } from '../../../src/api/embedded/kinds.js';
import { sweepEvents } from '../../../src/api/embedded/event-ttl.js';
import { servedKinds } from '../../../src/served-kinds.js';

let server: TestServer;

const event = (name: string, lastTimestamp: string, type = 'Normal') => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name, namespace: 'default' },
  involvedObject: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2', kind: 'OpenStackCluster', name: 'demo', namespace: 'default', uid: 'u-1' },
  reason: 'SuccessfulCreateNetwork',
  message: `event ${name}`,
  type,
  source: { component: 'capo-apiserver' },
  firstTimestamp: lastTimestamp,
  lastTimestamp,
  count: 1,
});

beforeAll(async () => {
  server = await startTestServer({ kinds: servedKinds });
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

describe('core v1 Events, embedded', () => {
  it('are listed by kubectl with its event columns, and selected by involvedObject fields and type', async () => {
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const created = await server.kubectl(['create', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [event('fresh', now), event('warned', now, 'Warning')] }),
    });
    expect(created.stderr).toBe('');
    const table = await server.kubectl(['get', 'events']);
    expect(table.stdout.split('\n')[0]).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    expect(table.stdout).toMatch(/\n\d+s\s+Normal\s+SuccessfulCreateNetwork\s+openstackcluster\/demo\s+event fresh\n/);
    const warnings = await server.kubectl([
      'get',
      'events',
      '--field-selector',
      'involvedObject.kind=OpenStackCluster,involvedObject.name=demo,type=Warning',
      '-o',
      'name',
    ]);
    expect(warnings.stdout.trim()).toBe('event/warned');
    const refused = await server.kubectl(['get', 'events', '--field-selector', 'message=x']);
    expect(refused.stderr).toContain('field label not supported: message');
  });

  it('expire an hour after their last change', async () => {
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    expect((await server.kubectl(['create', '-f', '-'], { input: JSON.stringify(event('stale', twoHoursAgo)) })).stderr).toBe('');
    expect(await sweepEvents(server.stores.storeOf(eventKind))).toBe(1);
    const names = (await server.kubectl(['get', 'events', '-o', 'name'])).stdout.trim().split('\n');
    expect(names).toEqual(['event/fresh', 'event/warned']);
  });
});

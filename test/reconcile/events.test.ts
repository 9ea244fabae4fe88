/**
 * Events as kubectl shows them, in both modes: the reconciler records what it creates (Normal,
 * CAPO's reasons such as SuccessfulCreateNetwork) and what fails (Warning, with the cloud's words),
 * `kubectl get events --field-selector involvedObject.kind=...` finds them, and `kubectl describe`
 * lists them under the object. Embedded, this server serves the Events; aggregated, they are
 * written into the management cluster and kube-apiserver serves them.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { apiModeUnavailable, startApiMode, type ApiMode, type ApiModeName } from '../../harness/api-modes.js';
import { pollUntil } from '../../harness/poll.js';
import { renderExamples } from './flows/examples.js';

interface EventView {
  type: string;
  reason: string;
  message: string;
  count: number;
  source?: { component?: string };
  involvedObject: { kind: string; name: string; uid: string };
}

describe.each(['embedded', 'aggregated'] as ApiModeName[])('Events, %s', (modeName) => {
  const unavailable = apiModeUnavailable(modeName);
  describe.skipIf(unavailable !== undefined)(unavailable === undefined ? 'through kubectl' : `through kubectl (skipped: ${unavailable})`, () => {
    let mode: ApiMode;
    let manifests: string;

    /** The documents of an example file, as kubectl would apply them. */
    async function example(file: string): Promise<Record<string, any>[]> {
      return parseAllDocuments(await readFile(path.join(manifests, file), 'utf8')).map((document) => document.toJS());
    }

    async function apply(objects: unknown[]): Promise<void> {
      const applied = await mode.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
      expect(applied.stderr).toBe('');
    }

    async function events(selector: string): Promise<EventView[]> {
      const listed = await mode.kubectl(['get', 'events', '-n', 'default', '--field-selector', selector, '-o', 'json']);
      expect(listed.stderr).toBe('');
      return JSON.parse(listed.stdout).items as EventView[];
    }

    beforeAll(async () => {
      mode = await startApiMode(modeName);
      manifests = await renderExamples(mode.app.cloud!.url);
    }, 300_000);

    afterAll(async () => {
      await mode?.stop();
      if (manifests) await rm(manifests, { recursive: true, force: true });
    }, 120_000);

    it('records what the reconciler creates, found by field selector and listed by kubectl describe', async () => {
      const [cluster] = await example('02-openstackcluster.yaml');
      delete cluster!.spec.bastion;
      await apply([...(await example('00-cloud-credentials.yaml')), ...(await example('01-cluster.yaml')), cluster]);
      const created = await pollUntil(
        'a SuccessfulCreateNetwork event of the OpenStackCluster',
        async () => {
          const found = await events('involvedObject.kind=OpenStackCluster,involvedObject.name=demo,reason=SuccessfulCreateNetwork');
          return found.length > 0 ? found : undefined;
        },
        { timeoutMs: 60_000 },
      );
      expect(created).toEqual([
        expect.objectContaining({
          type: 'Normal',
          reason: 'SuccessfulCreateNetwork',
          message: expect.stringMatching(/^Created network k8s-clusterapi-cluster-default-demo with id [0-9a-f-]{36}$/),
          count: 1,
          source: { component: 'capo-apiserver' },
          involvedObject: expect.objectContaining({ kind: 'OpenStackCluster', name: 'demo', apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2' }),
        }),
      ]);
      // Selecting by type too, as kubectl users filter warnings.
      expect(await events('involvedObject.kind=OpenStackCluster,type=Warning')).toEqual([]);

      const described = await mode.kubectl(['describe', 'openstackcluster', 'demo']);
      expect(described.stderr).toBe('');
      const eventsSection = described.stdout.slice(described.stdout.indexOf('\nEvents:'));
      expect(eventsSection).toMatch(
        /^\s+Normal\s+SuccessfulCreateNetwork\s+\S+\s+capo-apiserver\s+Created network k8s-clusterapi-cluster-default-demo with id /m,
      );
      expect(eventsSection).toMatch(/SuccessfulCreateSubnet/);
      expect(eventsSection).toMatch(/^\s+Normal\s+PreflightPassed\s/m);
    });

    it('records a user mistake as a Warning with the reason and the words of the failure, once, counting repeats', async () => {
      const [machine, infraMachine] = await example('03-machines.yaml');
      const [bootstrap] = await example('04-bootstrap-data.yaml');
      for (const object of [machine!, infraMachine!]) object.metadata.name = 'wrong-flavor';
      machine!.spec.infrastructureRef.name = 'wrong-flavor';
      infraMachine!.spec.flavor = { filter: { name: 'no-such-flavor' } };
      await apply([...(await example('00-images.yaml')), bootstrap, machine, infraMachine]);
      const warnings = await pollUntil(
        'a Warning about the flavor',
        async () => {
          const found = await events('involvedObject.kind=OpenStackMachine,involvedObject.name=wrong-flavor,type=Warning');
          return found.some((event) => event.message.includes('no-such-flavor')) ? found : undefined;
        },
        { timeoutMs: 90_000 },
      );
      expect(warnings.filter((event) => event.message.includes('no-such-flavor'))).toHaveLength(1);
      // The machine, and the OpenStackServer it made, each list the failure; the ORC Image lists its upload.
      for (const kind of ['openstackmachine', 'openstackserver']) {
        const described = await mode.kubectl(['describe', kind, 'wrong-flavor']);
        expect(described.stderr).toBe('');
        expect(described.stdout.slice(described.stdout.indexOf('\nEvents:'))).toMatch(/^\s+Warning\s+\w+\s+.*capo-apiserver\s+.*no-such-flavor/m);
      }
      await pollUntil(
        "the ORC Image's create event",
        async () => ((await events('involvedObject.kind=Image,involvedObject.name=node-image')).length > 0 ? true : undefined),
        { timeoutMs: 60_000 },
      );
      const image = await mode.kubectl(['describe', 'images.openstack.k-orc.cloud', 'node-image']);
      expect(image.stdout.slice(image.stdout.indexOf('\nEvents:'))).toMatch(/^\s+Normal\s+SuccessfulCreateImage\s+.*Created image capi-node with id /m);
    }, 120_000);
  });
});

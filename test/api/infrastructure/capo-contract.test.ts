/**
 * CAPO's API contract, through the server's HTTP surface, in both modes (embedded, and aggregated
 * behind a real kube-apiserver): the schemas published in /openapi/v3 against CAPO's CRDs of each
 * kept release (differences only as listed in crd-differences.ts), every rule of CAPO v0.14.2's
 * webhooks through each served version (capo-webhook-rules.ts), and objects nobody owns left as
 * their author wrote them while the reconciler runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiModeUnavailable, startApiMode, type ApiAnswer, type ApiMode, type ApiModeName } from '../../../harness/api-modes.js';
import { pollUntil } from '../../../harness/poll.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { listedDifferences } from './crd-differences.js';
import { webhookRules, type RuleCase } from './capo-webhook-rules.js';
import { servedSchemaDifferences, type OpenApiDocument } from './served-schemas.js';

const group = 'infrastructure.cluster.x-k8s.io';

/** A collection's path, in namespace default unless the kind is cluster-scoped. */
function collectionPath(version: string, plural: string, clusterScoped = false): string {
  return `/apis/${group}/${version}${clusterScoped ? '' : '/namespaces/default'}/${plural}`;
}

/** Reconciles each controller has finished, from the server's metrics. */
async function reconcilesDone(mode: ApiMode): Promise<Map<string, number>> {
  const done = new Map<string, number>();
  const { body } = await mode.app.metrics.scrape();
  for (const match of body.matchAll(/^reconcile_duration_seconds_count\{controller="([^"]+)",result="[^"]+"\} (\d+)$/gm)) {
    done.set(match[1]!, (done.get(match[1]!) ?? 0) + Number(match[2]));
  }
  return done;
}

/** The objects nobody owns yet: no Cluster names them, or the one named does not exist. */
const unowned: { plural: string; version: string; controller?: string; body: JsonObject; namespaced?: false }[] = [
  {
    plural: 'openstackclusters',
    version: 'v1beta2',
    controller: 'openstackcluster',
    body: { metadata: { name: 'unowned' }, spec: { identityRef: { name: 'cloud-config', cloudName: 'openstack' } } },
  },
  {
    plural: 'openstackclusters',
    version: 'v1beta1',
    controller: 'openstackcluster',
    body: {
      metadata: { name: 'named-cluster-missing', labels: { 'cluster.x-k8s.io/cluster-name': 'not-yet' } },
      spec: { identityRef: { name: 'cloud-config', cloudName: 'openstack' } },
    },
  },
  {
    plural: 'openstackmachines',
    version: 'v1beta2',
    controller: 'openstackmachine',
    body: { metadata: { name: 'unowned' }, spec: { flavor: { filter: { name: 'm1.small' } }, image: { filter: { name: 'ubuntu' } } } },
  },
  {
    plural: 'openstackmachines',
    version: 'v1beta1',
    controller: 'openstackmachine',
    body: {
      metadata: {
        name: 'owner-reference-missing',
        ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: 'not-yet', uid: '0b9c2f4e-5d0a-4a0e-8f3c-6b1d7e2a9c40' }],
      },
      spec: { flavor: 'm1.small', image: { filter: { name: 'ubuntu' } } },
    },
  },
  {
    plural: 'openstackmachinetemplates',
    version: 'v1beta2',
    controller: 'openstackmachinetemplate',
    body: { metadata: { name: 'unowned' }, spec: { template: { spec: { flavor: { filter: { name: 'm1.small' } }, image: { filter: { name: 'ubuntu' } } } } } },
  },
  {
    plural: 'openstackclustertemplates',
    version: 'v1beta1',
    body: { metadata: { name: 'unowned' }, spec: { template: { spec: { identityRef: { name: 'cloud-config', cloudName: 'openstack' } } } } },
  },
  {
    plural: 'openstackclusteridentities',
    version: 'v1alpha1',
    namespaced: false,
    body: { metadata: { name: 'unowned' }, spec: { secretRef: { name: 'cloud-config', namespace: 'default' } } },
  },
];

const kindOf: Record<string, string> = {
  openstackclusters: 'OpenStackCluster',
  openstackmachines: 'OpenStackMachine',
  openstackmachinetemplates: 'OpenStackMachineTemplate',
  openstackclustertemplates: 'OpenStackClusterTemplate',
  openstackclusteridentities: 'OpenStackClusterIdentity',
};

/** What kube renders of an admission refusal, reduced to what a rule names. */
function refusal(answer: ApiAnswer): { code: number; reason: unknown; causes: { field: string; message: string }[] } {
  const causes = (answer.body?.details?.causes ?? []) as { field: string; message: string }[];
  return { code: answer.status, reason: answer.body?.reason, causes: causes.map(({ field, message }) => ({ field, message })) };
}

describe.each(['embedded', 'aggregated'] as ApiModeName[])('CAPO contract, %s', (modeName) => {
  const unavailable = apiModeUnavailable(modeName);
  describe.skipIf(unavailable !== undefined)(unavailable === undefined ? 'over HTTP' : `over HTTP (skipped: ${unavailable})`, () => {
    let mode: ApiMode;

    beforeAll(async () => {
      mode = await startApiMode(modeName);
    }, 300_000);

    afterAll(async () => {
      await mode?.stop();
    }, 120_000);

    // First, while the reconciler has nothing else to do: each controller's finished passes are then this test's.
    it('leaves objects nobody owns as written: an update with the resourceVersion the create returned succeeds', async () => {
      const before = await reconcilesDone(mode);
      const created: { path: string; object: JsonObject }[] = [];
      for (const { plural, version, body, namespaced } of unowned) {
        const collection = collectionPath(version, plural, namespaced === false);
        const answer = await mode.call('POST', collection, { apiVersion: `${group}/${version}`, kind: kindOf[plural], ...body });
        expect(answer.status, `${collection}: ${JSON.stringify(answer.body)}`).toBe(201);
        created.push({ path: `${collection}/${(body.metadata as { name: string }).name}`, object: answer.body });
      }
      const expected = new Map<string, number>();
      for (const { controller } of unowned) if (controller) expected.set(controller, (expected.get(controller) ?? before.get(controller) ?? 0) + 1);
      await pollUntil('the reconciler has looked at every object', async () => {
        const done = await reconcilesDone(mode);
        return [...expected].every(([controller, count]) => (done.get(controller) ?? 0) >= count) || undefined;
      });
      for (const { path, object } of created) {
        const current = (await mode.call('GET', path)).body;
        expect({
          path,
          resourceVersion: current.metadata.resourceVersion,
          finalizers: current.metadata.finalizers,
          conditions: current.status?.conditions,
        }).toEqual({
          path,
          resourceVersion: object.metadata && (object.metadata as JsonObject).resourceVersion,
          finalizers: undefined,
          conditions: undefined,
        });
        const update = structuredClone(object) as { metadata: { labels?: Record<string, string> } };
        update.metadata.labels = { ...update.metadata.labels, edited: 'true' };
        const answer = await mode.call('PUT', path, update);
        expect({ path, status: answer.status }).toEqual({ path, status: 200 });
      }
    });

    it("serves every schema as CAPO's CRDs, but for the listed differences", async () => {
      const documents = new Map<string, OpenApiDocument>();
      for (const version of ['v1alpha1', 'v1beta1', 'v1beta2']) {
        const answer = await mode.call('GET', `/openapi/v3/apis/${group}/${version}`);
        expect(answer.status).toBe(200);
        documents.set(version, answer.body);
      }
      const found = servedSchemaDifferences(documents);
      const listed = listedDifferences.flatMap(({ release, plural, version, differences }) =>
        differences.map((difference) => ({ release, plural, version, difference })),
      );
      const key = (entry: { release: string; plural: string; version: string; difference: string }) =>
        `${entry.release} ${entry.plural} ${entry.version} ${entry.difference}`;
      const listedKeys = new Set(listed.map(key));
      const foundKeys = new Set(found.map(key));
      expect({ unlisted: found.map(key).filter((line) => !listedKeys.has(line)), stale: listed.map(key).filter((line) => !foundKeys.has(line)) }).toEqual({
        unlisted: [],
        stale: [],
      });
    });

    let serial = 0;
    it.each(webhookRules.map((rule) => [`${rule.plural} ${rule.version}: ${rule.rule}`, rule] as [string, RuleCase]))('%s', async (_, rule) => {
      const name = `rule-${++serial}`;
      const body = structuredClone(rule.object) as { metadata: JsonObject };
      body.metadata = { ...body.metadata, name };
      const collection = collectionPath(rule.version, rule.plural);
      const created = await mode.call('POST', collection, body);
      const expectRule = (answer: ApiAnswer, success: number) => {
        if (rule.refused) expect(refusal(answer)).toEqual({ code: 422, reason: 'Invalid', causes: rule.refused });
        else expect(answer.status, JSON.stringify(answer.body)).toBe(success);
      };
      if (!rule.update) return expectRule(created, 201);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      // As a client updates: the object as it is now, changed; again if the controller wrote in between (409).
      const update = rule.update;
      const updated = await pollUntil('an update without a conflict', async () => {
        const current = (await mode.call('GET', `${collection}/${name}`)).body;
        update(current);
        const answer = await mode.call('PUT', `${collection}/${name}${rule.dryRun ? '?dryRun=All' : ''}`, current);
        return answer.status === 409 ? undefined : answer;
      });
      expectRule(updated, 200);
    });
  });
});

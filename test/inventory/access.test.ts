/**
 * InventoryAccess asks the authorizer each question once per request: a view over many clusters
 * and kinds costs one decision per namespace and kind, and refusals name the first kind denied.
 */
import { describe, expect, it } from 'vitest';
import type { Authorizer, RequestAttributes } from '../../src/apiserver/auth/authorizer.js';
import { ForbiddenError, InventoryAccess, readableKinds } from '../../src/inventory/access.js';

function countingAuthorizer(allowed: (attributes: RequestAttributes) => boolean): Authorizer & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async authorize(attributes) {
      if ('resource' in attributes) asked.push(`${attributes.resource.verb} ${attributes.resource.resource} ${attributes.resource.namespace ?? ''}`);
      return { allowed: allowed(attributes), reason: '' };
    },
  };
}

const user = { name: 'alice', groups: [] };
const onlyClusters = (attributes: RequestAttributes) => 'resource' in attributes && attributes.resource.resource === 'openstackclusters';

describe('InventoryAccess', () => {
  it('asks once per namespace and kind, however many objects a view shows', async () => {
    const authorizer = countingAuthorizer(onlyClusters);
    const access = new InventoryAccess(user, authorizer);
    const answers = await Promise.all(
      Array.from({ length: 500 }, (_, i) => access.mayList(i % 2 ? readableKinds.machines : readableKinds.nodes, i % 3 ? 'team-a' : 'team-b')),
    );
    expect(answers.every((answer) => answer === false)).toBe(true);
    expect(authorizer.asked.sort()).toEqual([
      'list openstackmachines team-a',
      'list openstackmachines team-b',
      'list openstacknodes team-a',
      'list openstacknodes team-b',
    ]);
    await access.mayListClusters('team-a');
    await access.mayListClusters('team-a');
    expect(authorizer.asked).toHaveLength(5);
  });

  it('refuses with the first kind denied, in the order asked, and asks nothing twice', async () => {
    const authorizer = countingAuthorizer(onlyClusters);
    const access = new InventoryAccess(user, authorizer);
    const checks = [
      { kind: readableKinds.nodes, namespace: 'team-a' },
      { kind: readableKinds.clusterExtensions, namespace: 'team-a' },
    ];
    for (let i = 0; i < 3; i++) {
      const refusal = await access.requireList(checks).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(ForbiddenError);
      expect((refusal as Error).message).toBe(
        'openstacknodes.extensions.capo-apiserver.io is forbidden: User "alice" cannot list resource "openstacknodes" in API group "extensions.capo-apiserver.io" in the namespace "team-a"',
      );
    }
    expect(authorizer.asked).toEqual(['list openstacknodes team-a', 'list clusterextensions team-a']);
    await expect(
      access.requireList([{ kind: { group: 'infrastructure.cluster.x-k8s.io', version: 'v1beta2', resource: 'openstackclusters' }, namespace: 'team-a' }]),
    ).resolves.toBeUndefined();
  });

  it("asks REST's question: list, in the kind's group and version, in the namespace", async () => {
    const seen: RequestAttributes[] = [];
    const access = new InventoryAccess(user, {
      authorize: async (attributes) => {
        seen.push(attributes);
        return { allowed: true };
      },
    });
    await access.mayList(readableKinds.servers, 'team-a');
    expect(seen).toEqual([
      { user, resource: { verb: 'list', group: 'infrastructure.cluster.x-k8s.io', version: 'v1alpha1', resource: 'openstackservers', namespace: 'team-a' } },
    ]);
  });
});

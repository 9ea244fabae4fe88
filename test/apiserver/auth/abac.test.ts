/**
 * ABAC policy files: kube's v1beta1 Policy lines, matched as kube matches
 * them, chained after LocalAuthorizer.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AbacAuthorizer } from '../../../src/apiserver/auth/abac.js';
import { LocalAuthorizer, UnionAuthorizer, type RequestAttributes } from '../../../src/apiserver/auth/authorizer.js';
import { anonymousUser, authenticated, type UserInfo } from '../../../src/apiserver/auth/user.js';

let dir: string;
const opened: AbacAuthorizer[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'capo-abac-'));
});

afterEach(async () => {
  for (const authorizer of opened.splice(0)) authorizer.close();
  await rm(dir, { recursive: true, force: true });
});

function policy(spec: Record<string, unknown>): string {
  return JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec });
}

async function open(lines: string[], onError?: (error: Error) => void): Promise<AbacAuthorizer> {
  const file = path.join(dir, 'policy.jsonl');
  await writeFile(file, lines.join('\n'));
  const authorizer = await AbacAuthorizer.open(file, { onError });
  opened.push(authorizer);
  return authorizer;
}

const alice = authenticated('alice', ['team-a']);
const bob = authenticated('bob', ['ops']);

function onResource(user: UserInfo, verb: string, resource: string, namespace?: string, group = 'infrastructure.cluster.x-k8s.io'): RequestAttributes {
  return { user, resource: { verb, group, version: 'v1beta2', resource, ...(namespace ? { namespace } : {}) } };
}

function onPath(user: UserInfo, verb: string, urlPath: string): RequestAttributes {
  return { user, nonResource: { verb, path: urlPath } };
}

async function allowed(authorizer: AbacAuthorizer | UnionAuthorizer, attributes: RequestAttributes): Promise<boolean> {
  return (await authorizer.authorize(attributes)).allowed;
}

describe('matching', () => {
  it('confines a user to a namespace', async () => {
    const abac = await open([policy({ user: 'alice', namespace: 'team-a', resource: '*', apiGroup: '*' })]);
    expect(await allowed(abac, onResource(alice, 'delete', 'openstackclusters', 'team-a'))).toBe(true);
    expect(await allowed(abac, onResource(alice, 'get', 'secrets', 'team-a', ''))).toBe(true);
    expect(await allowed(abac, onResource(alice, 'get', 'openstackclusters', 'team-b'))).toBe(false);
    expect(await allowed(abac, onResource(alice, 'list', 'openstackclusteridentities'))).toBe(false);
    expect(await allowed(abac, onResource(bob, 'get', 'openstackclusters', 'team-a'))).toBe(false);
  });

  it('grants groups, wildcards, read-only access, one resource and one API group', async () => {
    const abac = await open([
      policy({ group: 'ops', readonly: true, namespace: '*', resource: '*', apiGroup: '*' }),
      policy({ user: 'alice', namespace: 'team-a', resource: 'secrets', apiGroup: '' }),
      policy({ user: '*', namespace: 'shared', resource: 'openstackclusters', apiGroup: 'infrastructure.cluster.x-k8s.io', readonly: true }),
    ]);
    for (const verb of ['get', 'list', 'watch']) expect(await allowed(abac, onResource(bob, verb, 'openstackmachines', 'any'))).toBe(true);
    expect(await allowed(abac, onResource(bob, 'create', 'openstackmachines', 'any'))).toBe(false);
    expect(await allowed(abac, onResource(bob, 'list', 'openstackclusteridentities'))).toBe(true);
    expect(await allowed(abac, onResource(alice, 'create', 'secrets', 'team-a', ''))).toBe(true);
    expect(await allowed(abac, onResource(alice, 'create', 'configmaps', 'team-a', ''))).toBe(false);
    expect(await allowed(abac, onResource(alice, 'get', 'secrets', 'team-a', 'other.group'))).toBe(false);
    expect(await allowed(abac, onResource(anonymousUser, 'get', 'openstackclusters', 'shared'))).toBe(true);
    expect(await allowed(abac, onResource(alice, 'patch', 'openstackclusters', 'shared'))).toBe(false);
  });

  it('requires both user and group when a policy names both', async () => {
    const abac = await open([policy({ user: 'alice', group: 'ops', namespace: '*', resource: '*', apiGroup: '*' })]);
    expect(await allowed(abac, onResource(alice, 'get', 'openstackclusters', 'x'))).toBe(false);
    expect(await allowed(abac, onResource(authenticated('alice', ['ops']), 'get', 'openstackclusters', 'x'))).toBe(true);
  });

  it('matches non-resource paths exactly, by trailing-* prefix or by *, and never resource requests', async () => {
    const abac = await open([
      policy({ user: 'alice', nonResourcePath: '/healthz' }),
      policy({ user: 'alice', nonResourcePath: '/admin/v1/*', readonly: true }),
      policy({ user: 'bob', nonResourcePath: '*' }),
    ]);
    expect(await allowed(abac, onPath(alice, 'get', '/healthz'))).toBe(true);
    expect(await allowed(abac, onPath(alice, 'get', '/healthz/ping'))).toBe(false);
    expect(await allowed(abac, onPath(alice, 'get', '/admin/v1/clusters/a'))).toBe(true);
    expect(await allowed(abac, onPath(alice, 'post', '/admin/v1/reconcile'))).toBe(false);
    expect(await allowed(abac, onPath(bob, 'post', '/anything'))).toBe(true);
    expect(await allowed(abac, onResource(bob, 'get', 'openstackclusters', 'x'))).toBe(false);
  });

  it('explains a denial with the policy file', async () => {
    const abac = await open([]);
    expect(await abac.authorize(onResource(alice, 'get', 'openstackclusters', 'x'))).toEqual({ allowed: false, reason: `no policy in ${abac.path} matches` });
  });
});

describe('chained after LocalAuthorizer', () => {
  it('lets system:masters do anything, the policy file grant the rest, and denies anonymous discovery', async () => {
    const abac = await open([policy({ user: 'alice', namespace: 'team-a', resource: '*', apiGroup: '*' })]);
    const chain = new UnionAuthorizer([new LocalAuthorizer(), abac]);
    const admin = authenticated('admin', ['system:masters']);
    expect(await allowed(chain, onResource(admin, 'delete', 'secrets', 'team-b', ''))).toBe(true);
    expect(await allowed(chain, onResource(alice, 'list', 'openstackclusters', 'team-a'))).toBe(true);
    expect(await allowed(chain, onPath(alice, 'get', '/apis'))).toBe(true);
    expect(await allowed(chain, onPath(anonymousUser, 'get', '/apis'))).toBe(false);
    const denied = await chain.authorize(onResource(alice, 'list', 'openstackclusters', 'team-b'));
    expect(denied).toEqual({ allowed: false, reason: `no policy grants this request; no policy in ${abac.path} matches` });
  });
});

describe('the file', () => {
  it('skips blank and comment lines', async () => {
    const abac = await open(['# team a', '', '   # indented comment', policy({ user: 'alice', namespace: 'team-a', resource: '*', apiGroup: '*' }), '']);
    expect(await allowed(abac, onResource(alice, 'get', 'x', 'team-a'))).toBe(true);
  });

  it.each([
    ['{"apiVersion":', 'line 2: not JSON:'],
    [
      JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1', kind: 'Policy', spec: { user: 'a' } }),
      'line 2: not an abac.authorization.kubernetes.io/v1beta1 Policy: apiVersion:',
    ],
    [JSON.stringify({ user: 'alice', namespace: '*' }), 'line 2: not an abac.authorization.kubernetes.io/v1beta1 Policy: apiVersion:'],
    [policy({ user: 'alice', namepsace: 'team-a' }), 'line 2: not an abac.authorization.kubernetes.io/v1beta1 Policy: spec: Unrecognized key: "namepsace"'],
    [policy({ user: 'alice', readonly: 'yes' }), 'line 2: not an abac.authorization.kubernetes.io/v1beta1 Policy: spec.readonly:'],
    [policy({ namespace: '*', resource: '*' }), 'line 2: not an abac.authorization.kubernetes.io/v1beta1 Policy: spec: spec needs a user or a group'],
  ])('rejects %s naming the line', async (line, message) => {
    await expect(open(['# first', line])).rejects.toThrow(`${path.join(dir, 'policy.jsonl')}: ${message}`);
  });

  it('applies a saved change, and keeps the previous policies when the change is invalid', async () => {
    const reported: string[] = [];
    const abac = await open([], (error) => reported.push(error.message));
    await writeFile(abac.path, policy({ user: 'alice', namespace: 'team-a', resource: '*', apiGroup: '*' }));
    await expect.poll(() => allowed(abac, onResource(alice, 'get', 'x', 'team-a')), { timeout: 10_000 }).toBe(true);
    await writeFile(abac.path, '{"broken"');
    await abac.reload();
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatch(new RegExp(`^${abac.path}: line 1: not JSON: .*; keeping the previous contents$`));
    expect(await allowed(abac, onResource(alice, 'get', 'x', 'team-a'))).toBe(true);
  });
});

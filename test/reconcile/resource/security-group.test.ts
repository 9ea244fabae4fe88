/**
 * The security group actuator: rule matching normalised as Neutron does
 * (pure), and against the simulator rule reconciliation that removes only
 * our own rules and Neutron's defaults, never a rule added by hand.
 */
import { describe, expect, it } from 'vitest';
import type { SecurityGroupRule } from '../../../src/openstack/index.js';
import { ownerTag, ownerTags } from '../../../src/reconcile/resource/actuator.js';
import { ensure, remove } from '../../../src/reconcile/resource/engine.js';
import { planRules, sameGroup, securityGroupActuator, type SecurityGroupDesired } from '../../../src/reconcile/resource/security-group.js';
import type { SecurityGroupRuleDesired } from '../../../src/capo/security-group-rules.js';
import { networkWithSubnet, newOwner, SimulatedNeutron, uniqueName } from './simulated-neutron.js';

const groupId = 'a1b2c3d4-0000-4000-8000-000000000001';
const otherGroupId = 'a1b2c3d4-0000-4000-8000-000000000002';
const marker = 'capo-apiserver:owner=11111111-2222-3333-4444-555555555555';

/** A rule as Neutron answers with it. */
function current(fields: Partial<SecurityGroupRule> & Pick<SecurityGroupRule, 'direction' | 'ethertype'>): SecurityGroupRule {
  return {
    id: `rule-${Math.random().toString(16).slice(2)}`,
    security_group_id: groupId,
    protocol: null,
    port_range_min: null,
    port_range_max: null,
    remote_ip_prefix: null,
    remote_group_id: null,
    description: '',
    ...fields,
  };
}

const egressDefaults = () => [current({ direction: 'egress', ethertype: 'IPv4' }), current({ direction: 'egress', ethertype: 'IPv6' })];

describe('planRules', () => {
  it.each<[string, Partial<SecurityGroupRule> & Pick<SecurityGroupRule, 'direction' | 'ethertype'>, SecurityGroupRuleDesired]>([
    [
      'a protocol name and its number',
      { direction: 'ingress', ethertype: 'IPv4', protocol: '6', port_range_min: 22, port_range_max: 22 },
      { direction: 'ingress', ethertype: 'IPv4', protocol: 'TCP', port_range_min: 22, port_range_max: 22 },
    ],
    [
      'the whole port range and no range',
      { direction: 'ingress', ethertype: 'IPv4', protocol: 'udp' },
      { direction: 'ingress', ethertype: 'IPv4', protocol: 'udp', port_range_min: 1, port_range_max: 65535 },
    ],
    [
      '0.0.0.0/0 and no prefix',
      { direction: 'ingress', ethertype: 'IPv4', protocol: 'tcp', port_range_min: 6443, port_range_max: 6443 },
      { direction: 'ingress', ethertype: 'IPv4', protocol: 'tcp', port_range_min: 6443, port_range_max: 6443, remote_ip_prefix: '0.0.0.0/0' },
    ],
    [
      '::/0 written long and no prefix',
      { direction: 'egress', ethertype: 'IPv6', protocol: 'tcp', port_range_min: 443, port_range_max: 443 },
      { direction: 'egress', ethertype: 'IPv6', protocol: 'tcp', port_range_min: 443, port_range_max: 443, remote_ip_prefix: '0:0::0/0' },
    ],
    [
      'ICMP under IPv6 and IPv6-ICMP',
      { direction: 'ingress', ethertype: 'IPv6', protocol: 'ipv6-icmp' },
      { direction: 'ingress', ethertype: 'IPv6', protocol: 'icmp' },
    ],
    ['icmpv6 and 58', { direction: 'ingress', ethertype: 'IPv6', protocol: '58' }, { direction: 'ingress', ethertype: 'IPv6', protocol: 'icmpv6' }],
    [
      '"any" and no protocol',
      { direction: 'ingress', ethertype: 'IPv4', remote_group_id: otherGroupId },
      { direction: 'ingress', ethertype: 'IPv4', protocol: 'any', remote_group_id: otherGroupId },
    ],
    [
      'a bare address and its host prefix',
      { direction: 'ingress', ethertype: 'IPv4', protocol: 'tcp', port_range_min: 22, port_range_max: 22, remote_ip_prefix: '192.0.2.7/32' },
      { direction: 'ingress', ethertype: 'IPv4', protocol: 'tcp', port_range_min: 22, port_range_max: 22, remote_ip_prefix: '192.0.2.7' },
    ],
    [
      'an IPv6 prefix in upper case, uncompressed',
      { direction: 'ingress', ethertype: 'IPv6', protocol: 'tcp', port_range_min: 22, port_range_max: 22, remote_ip_prefix: '2001:db8::/64' },
      { direction: 'ingress', ethertype: 'IPv6', protocol: 'tcp', port_range_min: 22, port_range_max: 22, remote_ip_prefix: '2001:DB8:0:0::/64' },
    ],
    [
      'the group itself and its own ID',
      { direction: 'ingress', ethertype: 'IPv4', remote_group_id: groupId },
      { direction: 'ingress', ethertype: 'IPv4', remote_group_id: sameGroup },
    ],
  ])('matches %s', (_what, existing, desired) => {
    const rule = current({ ...existing, description: `etcd ${marker}` });
    expect(planRules([rule], [desired], groupId, marker)).toEqual({ create: [], remove: [] });
  });

  it.each<[string, SecurityGroupRuleDesired]>([
    ['another port', { direction: 'ingress', ethertype: 'IPv4', protocol: 'tcp', port_range_min: 2380, port_range_max: 2380, remote_group_id: sameGroup }],
    [
      'another remote group',
      { direction: 'ingress', ethertype: 'IPv4', protocol: 'tcp', port_range_min: 2379, port_range_max: 2379, remote_group_id: otherGroupId },
    ],
    ['another direction', { direction: 'egress', ethertype: 'IPv4', protocol: 'tcp', port_range_min: 2379, port_range_max: 2379, remote_group_id: sameGroup }],
    ['another protocol', { direction: 'ingress', ethertype: 'IPv4', protocol: 'udp', port_range_min: 2379, port_range_max: 2379, remote_group_id: sameGroup }],
  ])('tells apart %s, replacing our rule', (_what, desired) => {
    const ours = current({
      direction: 'ingress',
      ethertype: 'IPv4',
      protocol: 'tcp',
      port_range_min: 2379,
      port_range_max: 2379,
      remote_group_id: groupId,
      description: marker,
    });
    expect(planRules([ours], [desired], groupId, marker)).toEqual({ create: [desired], remove: [ours] });
  });

  it("keeps Neutron's default egress rules when equal ones are desired and deletes them otherwise", () => {
    const desiredEgress: SecurityGroupRuleDesired[] = [
      { direction: 'egress', ethertype: 'IPv4' },
      { direction: 'egress', ethertype: 'IPv6', remote_ip_prefix: '::/0' },
    ];
    expect(planRules(egressDefaults(), desiredEgress, groupId, marker)).toEqual({ create: [], remove: [] });
    const defaults = egressDefaults();
    expect(planRules(defaults, [desiredEgress[0]!], groupId, marker)).toEqual({ create: [], remove: [defaults[1]] });
  });

  it('deletes only our own unwanted rules: hand-added ones stay, even when they look like ours', () => {
    const ours = current({
      direction: 'ingress',
      ethertype: 'IPv4',
      protocol: 'tcp',
      port_range_min: 10250,
      port_range_max: 10250,
      description: `Kubelet ${marker}`,
    });
    const hand = current({ direction: 'ingress', ethertype: 'IPv4', protocol: 'tcp', port_range_min: 179, port_range_max: 179, description: 'BGP for Calico' });
    const handAnyEgress = current({ direction: 'egress', ethertype: 'IPv4', protocol: 'tcp', description: '' });
    const otherOwner = current({
      direction: 'ingress',
      ethertype: 'IPv4',
      protocol: 'tcp',
      port_range_min: 22,
      port_range_max: 22,
      description: 'capo-apiserver:owner=someone-else',
    });
    expect(planRules([ours, hand, handAnyEgress, otherOwner], [], groupId, marker)).toEqual({ create: [], remove: [ours] });
  });

  it('asks for each desired rule once, however often it is listed', () => {
    const a: SecurityGroupRuleDesired = {
      direction: 'ingress',
      ethertype: 'IPv4',
      protocol: 'tcp',
      port_range_min: 6443,
      port_range_max: 6443,
      description: 'Kubernetes API',
    };
    const b: SecurityGroupRuleDesired = { ...a, protocol: '6', remote_ip_prefix: '0.0.0.0/0', description: 'additional port' };
    expect(planRules([], [a, b, a], groupId, marker)).toEqual({ create: [a], remove: [] });
  });
});

const bench = SimulatedNeutron.forThisFile();

const kubeApi: SecurityGroupRuleDesired = {
  direction: 'ingress',
  ethertype: 'IPv4',
  protocol: 'tcp',
  port_range_min: 6443,
  port_range_max: 6443,
  description: 'Kubernetes API',
};
const fromSelf: SecurityGroupRuleDesired = { direction: 'ingress', ethertype: 'IPv4', remote_group_id: sameGroup, description: 'In-cluster ingress' };
const egressAny: SecurityGroupRuleDesired[] = [
  { direction: 'egress', ethertype: 'IPv4' },
  { direction: 'egress', ethertype: 'IPv6' },
];

function desiredGroup(rules: SecurityGroupRuleDesired[]): SecurityGroupDesired {
  return { name: uniqueName('k8s-cluster-default-secgroup-controlplane'), description: 'Cluster API managed group', rules };
}

describe('ensure a security group', () => {
  it('creates, tags and records it, then adds the rules Neutron did not create in one bulk request; a second pass only reads the group', async () => {
    const groups = securityGroupActuator(bench.neutron);
    const owner = newOwner();
    const desired = desiredGroup([...egressAny, kubeApi, fromSelf]);

    const first = await ensure(groups, { recordedId: undefined, desired, owner, record: bench.record });
    expect(first).toMatchObject({ ready: true, found: 'created' });
    const id = first.resource.id;
    expect(bench.trace()).toEqual([
      `GET /v2.0/security-groups?name=${desired.name}`,
      'POST /v2.0/security-groups',
      `PUT /v2.0/security-groups/${id}/tags`,
      `record ${id}`,
      'POST /v2.0/security-group-rules',
    ]);
    const rules = (await groups.getById(id))!.security_group_rules!;
    expect(rules).toHaveLength(4);
    expect(rules.find((rule) => rule.port_range_min === 6443)?.description).toBe(`Kubernetes API ${ownerTag(owner)}`);
    expect(rules.find((rule) => rule.remote_group_id === id)).toMatchObject({
      direction: 'ingress',
      protocol: null,
      description: `In-cluster ingress ${ownerTag(owner)}`,
    });
    expect(groups.describe(first.resource)).toMatchObject({ id, name: desired.name, rules: 4 });
    expect(first.resource.tags).toEqual(ownerTags(owner));

    bench.forget();
    expect(await ensure(groups, { recordedId: id, desired, owner, record: bench.record })).toMatchObject({ ready: true, found: 'recorded' });
    expect(bench.trace()).toEqual([`GET /v2.0/security-groups/${id}`]);
  });

  it("deletes Neutron's default egress rules when the desired rules leave them out", async () => {
    const groups = securityGroupActuator(bench.neutron);
    const owner = newOwner();
    const { resource } = await ensure(groups, { recordedId: undefined, desired: desiredGroup([kubeApi]), owner, record: bench.record });
    const rules = (await groups.getById(resource.id))!.security_group_rules!;
    expect(rules).toHaveLength(1);
    expect(rules[0]).toMatchObject({ direction: 'ingress', port_range_min: 6443 });
    expect(bench.requests('DELETE /v2.0/security-group-rules/')).toHaveLength(2);
  });

  it('removes a rule no longer desired but keeps one added by hand, and uses a hand-added rule equal to a desired one', async () => {
    const groups = securityGroupActuator(bench.neutron);
    const owner = newOwner();
    const desired = desiredGroup([...egressAny, kubeApi, fromSelf]);
    const { resource } = await ensure(groups, { recordedId: undefined, desired, owner, record: bench.record });
    const bgp = await bench.neutron.createSecurityGroupRule({
      security_group_id: resource.id,
      direction: 'ingress',
      protocol: 'tcp',
      port_range_min: 179,
      port_range_max: 179,
      description: 'BGP for Calico',
    });
    const ssh = await bench.neutron.createSecurityGroupRule({
      security_group_id: resource.id,
      direction: 'ingress',
      protocol: '6',
      port_range_min: 22,
      port_range_max: 22,
      remote_ip_prefix: '0.0.0.0/0',
    });
    const before = (await groups.getById(resource.id))!.security_group_rules!;
    const selfRule = before.find((rule) => rule.remote_group_id === resource.id)!;

    bench.forget();
    const sshDesired: SecurityGroupRuleDesired = {
      direction: 'ingress',
      ethertype: 'IPv4',
      protocol: 'tcp',
      port_range_min: 22,
      port_range_max: 22,
      description: 'SSH',
    };
    await ensure(groups, { recordedId: resource.id, desired: { ...desired, rules: [...egressAny, kubeApi, sshDesired] }, owner, record: bench.record });
    expect(bench.mutations()).toEqual([`DELETE /v2.0/security-group-rules/${selfRule.id}`]);
    const after = (await groups.getById(resource.id))!.security_group_rules!.map((rule) => rule.id).sort();
    expect(after).toEqual(
      before
        .filter((rule) => rule.id !== selfRule.id)
        .map((rule) => rule.id)
        .sort(),
    );
    expect(after).toEqual(expect.arrayContaining([bgp.id, ssh.id]));

    // A desired list without the hand-added rules still leaves them alone.
    bench.forget();
    await ensure(groups, { recordedId: resource.id, desired: { ...desired, rules: [...egressAny, kubeApi] }, owner, record: bench.record });
    expect(bench.mutations()).toEqual([]);
  });

  it("references another of the owner's groups, whose delete takes the rule along", async () => {
    const groups = securityGroupActuator(bench.neutron);
    const owner = newOwner();
    const worker = await ensure(groups, { recordedId: undefined, desired: desiredGroup(egressAny), owner, record: bench.record });
    const kubelet: SecurityGroupRuleDesired = {
      direction: 'ingress',
      ethertype: 'IPv4',
      protocol: 'tcp',
      port_range_min: 10250,
      port_range_max: 10250,
      remote_group_id: worker.resource.id,
    };
    const controlPlane = await ensure(groups, { recordedId: undefined, desired: desiredGroup([...egressAny, kubelet]), owner, record: bench.record });
    expect(controlPlane.resource.security_group_rules?.find((rule) => rule.remote_group_id === worker.resource.id)).toMatchObject({ port_range_min: 10250 });

    expect(await remove(groups, { recordedId: worker.resource.id, name: worker.resource.name, owner })).toEqual({ deleted: true });
    expect((await groups.getById(controlPlane.resource.id))!.security_group_rules).toHaveLength(2);
  });

  it('adopts only a group carrying the owner tag and never touches a same-named untagged one', async () => {
    const groups = securityGroupActuator(bench.neutron);
    const owner = newOwner();
    const desired = desiredGroup([kubeApi]);
    const users = await bench.neutron.createSecurityGroup({ name: desired.name });
    const orphan = await groups.create(desired, owner);
    bench.forget();

    const adopted = await ensure(groups, { recordedId: undefined, desired, owner, record: bench.record });
    expect(adopted).toMatchObject({ found: 'adopted', resource: { id: orphan.id } });
    expect(bench.requests('POST /v2.0/security-groups')).toEqual([]);
    expect(await remove(groups, { recordedId: undefined, name: desired.name, owner })).toEqual({ deleted: true });
    const left = await bench.neutron.listSecurityGroups({ name: desired.name });
    expect(left.map((group) => group.id)).toEqual([users.id]);
    // Untouched: still Neutron's two default rules.
    expect(left[0]!.security_group_rules).toHaveLength(2);
  });
});

describe('remove a security group', () => {
  it('is blocked by a port using it, naming the port, and finishes once the port is gone', async () => {
    const groups = securityGroupActuator(bench.neutron);
    const owner = newOwner();
    const desired = desiredGroup(egressAny);
    const { resource } = await ensure(groups, { recordedId: undefined, desired, owner, record: bench.record });
    const { network } = await networkWithSubnet(bench.neutron, '10.30.0.0/24');
    const port = await bench.neutron.createPort({ network_id: network.id, name: 'leaked-machine-port', security_groups: [resource.id] });

    const blocked = await remove(groups, { recordedId: resource.id, name: desired.name, owner });
    expect(blocked).toMatchObject({ requeueAfterMs: 15_000 });
    expect('blockedBy' in blocked && blocked.blockedBy).toMatch(
      new RegExp(
        `^security group ${resource.id} cannot be deleted yet \\(SecurityGroupInUse: .*\\); held by port ${port.id} "leaked-machine-port" \\(unattached\\)$`,
      ),
    );

    await bench.neutron.deletePort(port.id);
    expect(await remove(groups, { recordedId: resource.id, name: desired.name, owner })).toEqual({ deleted: true });
    expect(await groups.getById(resource.id)).toBeUndefined();
  });

  it('counts a 404 on DELETE as done', async () => {
    expect(await bench.removeWhileDeleteAnswers404(securityGroupActuator(bench.neutron), desiredGroup([]), 'security-groups')).toEqual({ deleted: true });
  });
});

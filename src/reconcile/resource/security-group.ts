/**
 * The Neutron security group actuator. Rules are reconciled within the
 * group: missing desired rules are created; rules this owner created and no
 * longer wants are deleted, and so are Neutron's default egress rules when
 * no equal rule is desired. Every other rule was added by someone else (by
 * hand, most likely) and stays: CAPO deleted those, and users lost rules
 * they needed.
 *
 * Our rules are known by their description, which ends with the owner tag
 * (rules cannot carry tags in the Neutron releases we support).
 */
import type { SecurityGroupRuleDesired } from '../../capo/security-group-rules.js';
import type { CreateSecurityGroupRule, NeutronClient, SecurityGroup, SecurityGroupRule } from '../../openstack/index.js';
import { absentOn404, ownerTag, ownerTags, type ResourceActuator } from './actuator.js';
import { adoptableOf, canonicalAddress, ensureOwnerTags, portHolders, readById, createTagged, withOwnerMark } from './neutron.js';

/** As `remote_group_id`: the group the rule belongs to, whose ID is unknown until it exists. */
export const sameGroup = 'self';

export interface SecurityGroupDesired {
  name: string;
  description?: string;
  /** Undefined: the group's rules stay as they are (its remote groups' IDs are not known yet). */
  rules?: SecurityGroupRuleDesired[];
}

/** What one pass changes: rules to create, rules to delete. */
export interface RulePlan {
  create: SecurityGroupRuleDesired[];
  remove: SecurityGroupRule[];
}

/** Neutron's limit on a rule description. */
const maxDescriptionLength = 255;

export function securityGroupActuator(neutron: NeutronClient): ResourceActuator<SecurityGroupDesired, SecurityGroup> {
  /** Reconciles the rules from the group as read (its rules come with it) and keeps that copy current for describe(). */
  async function ensureRules(group: SecurityGroup, desired: readonly SecurityGroupRuleDesired[], marker: string): Promise<void> {
    const current = group.security_group_rules ?? (await neutron.listSecurityGroupRules({ security_group_id: group.id }));
    const plan = planRules(current, desired, group.id, marker);
    const created: SecurityGroupRule[] = [];
    // Creating first keeps wanted traffic flowing while unwanted rules go.
    // One bulk request for all missing rules: a new cluster's groups need a dozen, which would otherwise be a dozen calls.
    if (plan.create.length === 1) created.push(await neutron.createSecurityGroupRule(ruleBody(plan.create[0], group.id, marker)));
    else if (plan.create.length > 1) created.push(...(await neutron.createSecurityGroupRules(plan.create.map((rule) => ruleBody(rule, group.id, marker)))));
    for (const rule of plan.remove) await absentOn404(neutron.deleteSecurityGroupRule(rule.id));
    const removed = new Set(plan.remove.map((rule) => rule.id));
    group.security_group_rules = [...current.filter((rule) => !removed.has(rule.id)), ...created];
  }

  return {
    kind: 'security group',
    getById: (id) => absentOn404(neutron.getSecurityGroup(id)),
    readMany: readById(neutron, 'security group', (filters) => neutron.listSecurityGroups(filters)),
    findAdoptable: (name, owner) => adoptableOf(neutron.listSecurityGroups({ name }), owner),
    async create(desired, owner) {
      const tags = ownerTags(owner);
      return createTagged(neutron, 'security-groups', tags, (tagged) =>
        neutron.createSecurityGroup({ name: desired.name, description: withOwnerMark(desired.description, owner), ...tagged }),
      );
    },
    async postCreate(group, desired, owner) {
      await ensureOwnerTags(neutron, 'security-groups', group, owner);
      if (desired.rules !== undefined) await ensureRules(group, desired.rules, ownerTag(owner));
      return { done: true };
    },
    readiness: () => ({ ready: true }),
    async delete(group) {
      // Other groups' rules naming this one as remote go with it.
      await neutron.deleteSecurityGroup(group.id);
      return { done: true };
    },
    blockers: async (group) => portHolders(await neutron.listPorts({ security_groups: group.id })),
    describe: (group) => ({
      id: group.id,
      name: group.name,
      description: group.description,
      rules: group.security_group_rules?.length ?? 0,
    }),
  };
}

/**
 * The rule changes that bring `current` (the group's rules) to `desired`.
 * `marker` ends the description of every rule this owner creates; only
 * rules carrying it, and Neutron's default egress rules, are ever deleted.
 */
export function planRules(current: readonly SecurityGroupRule[], desired: readonly SecurityGroupRuleDesired[], groupId: string, marker: string): RulePlan {
  const missing = new Map<string, SecurityGroupRuleDesired>();
  for (const rule of desired) {
    const key = ruleKey(rule, groupId);
    if (!missing.has(key)) missing.set(key, rule);
  }
  const remove: SecurityGroupRule[] = [];
  for (const rule of current) {
    if (missing.delete(ruleKey(rule, groupId))) continue;
    if ((rule.description ?? '').endsWith(marker) || isNeutronDefault(rule)) remove.push(rule);
  }
  return { create: [...missing.values()], remove };
}

/** The fields Neutron tells rules apart by, on a desired rule as on one Neutron answers with. */
interface RuleFields {
  direction: string;
  ethertype: string;
  protocol?: string | null | undefined;
  port_range_min?: number | null | undefined;
  port_range_max?: number | null | undefined;
  remote_ip_prefix?: string | null | undefined;
  remote_group_id?: string | null | undefined;
}

/**
 * Two rules with the same key are one rule to Neutron (it refuses the
 * second with SecurityGroupRuleExists), normalised as Neutron does: protocol
 * names equal their numbers, ICMP under IPv6 is IPv6-ICMP, the whole port
 * range is no range, and a prefix covering every address is no prefix.
 */
function ruleKey(rule: RuleFields, groupId: string): string {
  const wholeRange = rule.port_range_min === 1 && rule.port_range_max === 65535;
  return JSON.stringify([
    rule.direction,
    rule.ethertype,
    protocolNumber(rule.protocol, rule.ethertype === 'IPv6'),
    wholeRange ? null : (rule.port_range_min ?? null),
    wholeRange ? null : (rule.port_range_max ?? null),
    rule.remote_group_id === sameGroup ? groupId : (rule.remote_group_id ?? null),
    remotePrefix(rule.remote_ip_prefix),
  ]);
}

/** neutron-lib's IP_PROTOCOL_MAP. */
const protocolNumbers: Record<string, number> = {
  ah: 51,
  dccp: 33,
  egp: 8,
  esp: 50,
  gre: 47,
  hopopt: 0,
  icmp: 1,
  igmp: 2,
  ip: 0,
  ipip: 4,
  'ipv6-encap': 41,
  'ipv6-frag': 44,
  'ipv6-icmp': 58,
  icmpv6: 58,
  'ipv6-nonxt': 59,
  'ipv6-opts': 60,
  'ipv6-route': 43,
  ospf: 89,
  pgm: 113,
  rsvp: 46,
  sctp: 132,
  tcp: 6,
  udp: 17,
  udplite: 136,
  vrrp: 112,
};

const icmp = 1;
const ipv6Icmp = 58;

/** Null for any protocol; an unknown name is kept as written, for Neutron to refuse. */
function protocolNumber(protocol: string | null | undefined, ipv6: boolean): string | null {
  if (protocol === undefined || protocol === null || protocol === '' || protocol.toLowerCase() === 'any') return null;
  const name = protocol.toLowerCase();
  const number = /^\d+$/.test(name) ? Number(name) : protocolNumbers[name];
  if (number === undefined) return name;
  return String(ipv6 && number === icmp ? ipv6Icmp : number);
}

/** Null for any address; otherwise the CIDR as Neutron stores it (a bare address becomes a host prefix). */
function remotePrefix(prefix: string | null | undefined): string | null {
  if (prefix === undefined || prefix === null || prefix === '') return null;
  const [address = '', length] = prefix.split('/');
  const canonical = canonicalAddress(address);
  const cidr = `${canonical}/${length ?? (canonical.includes(':') ? 128 : 32)}`;
  return cidr === '0.0.0.0/0' || cidr === '::/0' ? null : cidr;
}

/** What Neutron adds to every new group: egress to anywhere over any protocol, without a description. */
function isNeutronDefault(rule: SecurityGroupRule): boolean {
  return (
    rule.direction === 'egress' &&
    rule.protocol === null &&
    rule.port_range_min === null &&
    rule.port_range_max === null &&
    rule.remote_group_id === null &&
    remotePrefix(rule.remote_ip_prefix) === null &&
    (rule.description ?? '') === ''
  );
}

function ruleBody(rule: SecurityGroupRuleDesired, groupId: string, marker: string): CreateSecurityGroupRule {
  return {
    security_group_id: groupId,
    direction: rule.direction,
    ethertype: rule.ethertype,
    protocol: protocolNumber(rule.protocol, false) === null ? undefined : rule.protocol,
    port_range_min: rule.port_range_min,
    port_range_max: rule.port_range_max,
    remote_ip_prefix: rule.remote_ip_prefix,
    remote_group_id: rule.remote_group_id === sameGroup ? groupId : rule.remote_group_id,
    description: markedDescription(rule.description, marker),
  };
}

/** The description, shortened where needed to leave room for the marker after it. */
function markedDescription(description: string | undefined, marker: string): string {
  if (description === undefined || description === '') return marker;
  return `${description.slice(0, maxDescriptionLength - marker.length - 1)} ${marker}`;
}

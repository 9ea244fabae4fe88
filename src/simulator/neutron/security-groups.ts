/**
 * Security groups and their rules: the per-project `default` group Neutron
 * creates on first use, rule canonicalisation and validation, duplicate
 * detection, and the in-use checks on delete.
 */
import {
  attr,
  boolean,
  field,
  Invalid,
  oneOf,
  ownerAttributes,
  ownerOf,
  parseBody,
  readOnly,
  standardReadOnly,
  string,
  type Parsed,
  createdTags,
  withCreationTags,
} from './body.js';
import { NeutronError, notFound, pyList, pyStr } from './errors.js';
import { cidrString, networkString, parseCidr } from './ip.js';
import { standardView, type Caller, type SecurityGroup, type SecurityGroupRule } from './model.js';
import type { Store } from './store.js';

const DEFAULT_DESCRIPTION = 'Default security group';

/** neutron_lib IP_PROTOCOL_MAP, in its order (the order error messages list them in). */
const PROTOCOLS: [string, number][] = [
  ['ah', 51],
  ['dccp', 33],
  ['egp', 8],
  ['esp', 50],
  ['gre', 47],
  ['hopopt', 0],
  ['icmp', 1],
  ['igmp', 2],
  ['ip', 0],
  ['ipip', 4],
  ['ipv6-encap', 41],
  ['ipv6-frag', 44],
  ['ipv6-icmp', 58],
  ['icmpv6', 58],
  ['ipv6-nonxt', 59],
  ['ipv6-opts', 60],
  ['ipv6-route', 43],
  ['ospf', 89],
  ['pgm', 113],
  ['rsvp', 46],
  ['sctp', 132],
  ['tcp', 6],
  ['udp', 17],
  ['udplite', 136],
  ['vrrp', 112],
];
const PROTOCOL_NUMBERS = new Map(PROTOCOLS);
const PORT_PROTOCOLS = [33, 132, 6, 17, 136];
const IPV6_ONLY_PROTOCOLS = ['ipv6-encap', 'ipv6-frag', 'ipv6-icmp', 'icmpv6', 'ipv6-nonxt', 'ipv6-opts', 'ipv6-route', '41', '44', '58', '59', '60', '43'];

const sgError = (status: number, type: string, message: string) => new NeutronError(status, type, message);

function protocol(v: unknown): string | null {
  if (v === null) return null;
  const invalid = () =>
    new Invalid(
      '',
      sgError(
        400,
        'SecurityGroupRuleInvalidProtocol',
        `Security group rule protocol ${pyStr(v)} not supported. Only protocol values ${pyList([null, ...PROTOCOLS.map(([n]) => n)])} and integer representations [0 to 255] are supported.`,
      ),
    );
  if (typeof v === 'number' || (typeof v === 'string' && /^-?\d+$/.test(v.trim()))) {
    const n = Number(v);
    if (Number.isInteger(n) && n >= 0 && n <= 255) return String(v);
    throw invalid();
  }
  if (typeof v === 'string' && PROTOCOL_NUMBERS.has(v.toLowerCase())) return v.toLowerCase();
  throw invalid();
}

function port(v: unknown): number | null {
  if (v === null) return null;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Invalid('', sgError(400, 'SecurityGroupInvalidPortValue', `Invalid value for port ${pyStr(v)}`));
  return n;
}

function ethertype(v: unknown): 'IPv4' | 'IPv6' {
  if (typeof v === 'string') {
    if (v.toLowerCase() === 'ipv4') return 'IPv4';
    if (v.toLowerCase() === 'ipv6') return 'IPv6';
  }
  throw new Invalid(
    '',
    sgError(400, 'SecurityGroupRuleInvalidEtherType', `Security group rule for ethertype '${pyStr(v)}' not supported. Allowed values are ['IPv4', 'IPv6'].`),
  );
}

function ipPrefix(v: unknown): string | null {
  if (v === null || v === '') return null;
  const c = typeof v === 'string' ? parseCidr(v, true) : undefined;
  if (!c) throw new Invalid('', sgError(400, 'InvalidCIDR', `Invalid CIDR ${pyStr(v)} given as IP prefix.`));
  return cidrString(c);
}

function groupName(v: unknown): string {
  const name = string(v, 255);
  if (name.toLowerCase() === 'default') throw new Invalid('', sgError(409, 'SecurityGroupDefaultAlreadyExists', 'Default security group already exists.'));
  return name;
}

const groupSpec = {
  ...standardReadOnly,
  name: attr(field(groupName), true, true),
  description: attr(
    field((v) => string(v, 255)),
    true,
    true,
  ),
  stateful: attr(field(boolean), true, true),
  ...ownerAttributes,
  security_group_rules: readOnly(),
  shared: readOnly(),
  tags: readOnly(),
};

const ruleSpec = {
  ...standardReadOnly,
  security_group_id: attr(
    field((v) => string(v, 36)),
    true,
    false,
    true,
  ),
  remote_group_id: attr(
    field((v) => (v === null ? null : string(v, 255))),
    true,
    false,
  ),
  direction: attr(
    field((v) => oneOf(v, ['ingress', 'egress'] as const)),
    true,
    false,
    true,
  ),
  protocol: attr(field(protocol), true, false),
  port_range_min: attr(field(port), true, false),
  port_range_max: attr(field(port), true, false),
  ethertype: attr(field(ethertype), true, false),
  remote_ip_prefix: attr(field(ipPrefix), true, false),
  remote_address_group_id: attr(
    field((v) => (v === null ? null : string(v, 36))),
    true,
    false,
  ),
  description: attr(
    field((v) => string(v, 255)),
    true,
    false,
  ),
  ...ownerAttributes,
  normalized_cidr: readOnly(),
};

export function ruleView(r: SecurityGroupRule): Record<string, unknown> {
  return {
    id: r.id,
    tenant_id: r.projectId,
    security_group_id: r.securityGroupId,
    ethertype: r.ethertype,
    direction: r.direction,
    protocol: r.protocol,
    port_range_min: r.portRangeMin,
    port_range_max: r.portRangeMax,
    remote_ip_prefix: r.remoteIpPrefix,
    remote_address_group_id: null,
    normalized_cidr: r.remoteIpPrefix ? networkString(parseCidr(r.remoteIpPrefix)!) : null,
    remote_group_id: r.remoteGroupId,
    description: r.description,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    revision_number: r.revision,
    project_id: r.projectId,
  };
}

export function groupView(s: Store, g: SecurityGroup): Record<string, unknown> {
  return {
    id: g.id,
    name: g.name,
    stateful: g.stateful,
    tenant_id: g.projectId,
    description: g.description,
    shared: false,
    // Rules inside their group also show the standard attributes a rule GET omits.
    security_group_rules: s.rulesOf(g.id).map((r) => ({ ...ruleView(r), standard_attr_id: r.standardAttrId, tags: [] })),
    ...standardView(g),
  };
}

function addRule(
  s: Store,
  projectId: string,
  groupId: string,
  fields: Partial<SecurityGroupRule> & Pick<SecurityGroupRule, 'direction' | 'ethertype'>,
): SecurityGroupRule {
  const now = s.now();
  const rule: SecurityGroupRule = {
    id: s.ctx.newId(),
    projectId,
    securityGroupId: groupId,
    protocol: null,
    portRangeMin: null,
    portRangeMax: null,
    remoteIpPrefix: null,
    remoteGroupId: null,
    description: '',
    createdAt: now,
    updatedAt: now,
    revision: 0,
    standardAttrId: s.nextStandardAttrId(),
    ...fields,
  };
  s.addRule(rule);
  return rule;
}

function newGroup(s: Store, projectId: string, name: string, description: string, stateful: boolean, isDefault: boolean, tags: string[] = []): SecurityGroup {
  s.checkQuota(projectId, 'security_group_rule', isDefault ? 4 : 2);
  const group: SecurityGroup = { ...s.standard(projectId, description, tags, 1), name, stateful, isDefault };
  s.securityGroups.set(group.id, group);
  for (const ethertype of ['IPv4', 'IPv6'] as const) {
    if (isDefault) addRule(s, projectId, group.id, { direction: 'ingress', ethertype, remoteGroupId: group.id });
    addRule(s, projectId, group.id, { direction: 'egress', ethertype });
  }
  return group;
}

/**
 * The project's `default` group, created on first need (a network or port
 * create, a security group list or create). A non-admin can only trigger
 * this for its own project.
 */
export function ensureDefaultGroup(s: Store, caller: Caller, projectId: string): string | undefined {
  if (!projectId || (projectId !== caller.projectId && !caller.isAdmin)) return undefined;
  const existing = [...s.securityGroups.values()].find((g) => g.isDefault && g.projectId === projectId);
  if (existing) return existing.id;
  return newGroup(s, projectId, 'default', DEFAULT_DESCRIPTION, true, true).id;
}

export function listGroups(s: Store, caller: Caller, projectFilter: string | undefined): SecurityGroup[] {
  ensureDefaultGroup(s, caller, projectFilter ?? caller.projectId);
  return [...s.securityGroups.values()].filter((g) => s.owns(caller, g));
}

export function createGroup(s: Store, caller: Caller, body: unknown): SecurityGroup {
  const v = parseBody(withCreationTags(groupSpec, s.options), 'security_group', body, 'POST');
  const projectId = ownerOf(v, caller);
  s.checkQuota(projectId, 'security_group');
  ensureDefaultGroup(s, caller, projectId);
  return newGroup(s, projectId, v.name ?? '', v.description ?? '', v.stateful ?? true, false, createdTags(v));
}

const portsUsing = (s: Store, groupId: string) => [...s.ports.values()].filter((p) => p.securityGroups.includes(groupId));

export function updateGroup(s: Store, caller: Caller, id: string, body: unknown): SecurityGroup {
  const v = parseBody(groupSpec, 'security_group', body, 'PUT');
  const group = s.securityGroup(caller, id);
  if (v.stateful !== undefined && v.stateful !== group.stateful && portsUsing(s, id).length) {
    throw sgError(409, 'SecurityGroupInUse', `Security Group ${id} in use.`);
  }
  if (group.isDefault && v.name !== undefined) throw sgError(409, 'SecurityGroupCannotUpdateDefault', 'Updating default security group not allowed.');
  if (v.name !== undefined) group.name = v.name;
  if (v.description !== undefined) group.description = v.description;
  if (v.stateful !== undefined) group.stateful = v.stateful;
  s.touch(group);
  return group;
}

export function deleteGroup(s: Store, caller: Caller, id: string): void {
  const group = s.securityGroup(caller, id);
  if (portsUsing(s, id).length) throw sgError(409, 'SecurityGroupInUse', `Security Group ${id} in use.`);
  if (group.isDefault && !caller.isAdmin) throw sgError(409, 'SecurityGroupCannotRemoveDefault', 'Insufficient rights for removing default security group.');
  // Rules of this group, and other groups' rules that name it as remote group, go with it (FK cascade).
  for (const rule of [...s.rules.values()]) {
    if (rule.securityGroupId === id || rule.remoteGroupId === id) s.removeRule(rule);
  }
  s.securityGroups.delete(id);
}

const protocolNumber = (p: string) => (PROTOCOL_NUMBERS.has(p) ? PROTOCOL_NUMBERS.get(p)! : Number(p));

/** The identity Neutron compares rules by (description aside; any-address prefixes equal none; protocol names equal their numbers). */
function ruleKey(
  r: Pick<SecurityGroupRule, 'direction' | 'ethertype' | 'protocol' | 'portRangeMin' | 'portRangeMax' | 'remoteGroupId' | 'remoteIpPrefix' | 'securityGroupId'>,
): string {
  const prefix = r.remoteIpPrefix === null || r.remoteIpPrefix === '0.0.0.0/0' || r.remoteIpPrefix === '::/0' ? '+' : r.remoteIpPrefix;
  let proto = '+';
  if (r.protocol !== null) {
    let p = r.protocol;
    if (r.ethertype === 'IPv6' && (p === 'icmp' || p === 'icmpv6')) p = 'ipv6-icmp';
    if (r.ethertype === 'IPv6' && p === '1') p = '58';
    proto = String(protocolNumber(p));
  }
  return [r.direction, r.ethertype, r.portRangeMax ?? '+', r.portRangeMin ?? '+', proto, r.remoteGroupId ?? '+', prefix, r.securityGroupId].join('_');
}

type RuleInput = Parsed<typeof ruleSpec>;

function validatePortRange(rule: { protocol: string | null; portRangeMin: number | null; portRangeMax: number | null }): void {
  const { portRangeMin: min, portRangeMax: max } = rule;
  if (min === null && max === null) return;
  if (!rule.protocol) throw sgError(400, 'SecurityGroupProtocolRequiredWithPorts', 'Must also specify protocol if port range is given.');
  const number = protocolNumber(rule.protocol === 'icmpv6' ? 'ipv6-icmp' : rule.protocol);
  if (PORT_PROTOCOLS.includes(number)) {
    if (min === 0 || max === 0) throw sgError(400, 'SecurityGroupInvalidPortValue', 'Invalid value for port 0');
    if (min === null || max === null || min > max) {
      throw sgError(400, 'SecurityGroupInvalidPortRange', 'For TCP/UDP protocols, port_range_min must be <= port_range_max');
    }
  } else if (number === 1 || number === 58) {
    for (const [value, attrName, what] of [
      [min, 'port_range_min', 'type'],
      [max, 'port_range_max', 'code'],
    ] as const) {
      if (value !== null && !(value >= 0 && value <= 255)) {
        throw sgError(400, 'SecurityGroupInvalidIcmpValue', `Invalid value for ICMP ${what} (${attrName}) ${value}. It must be 0 to 255.`);
      }
    }
    if (min === null && max !== null) {
      throw sgError(400, 'SecurityGroupMissingIcmpType', `ICMP code (port-range-max) ${max} is provided but ICMP type (port-range-min) is missing.`);
    }
  } else {
    throw sgError(
      400,
      'SecurityGroupInvalidProtocolForPort',
      `Ports cannot be specified for protocol ${number}. Ports are only supported for DCCP, SCTP, TCP, UDP, UDPLITE.`,
    );
  }
}

export function createRule(s: Store, caller: Caller, body: unknown): SecurityGroupRule {
  const v: RuleInput = parseBody(ruleSpec, 'security_group_rule', body, 'POST');
  const projectId = ownerOf(v, caller);
  const ethertype = v.ethertype ?? 'IPv4';
  let protocol = v.protocol ?? null;
  if (ethertype === 'IPv6' && (protocol === 'icmp' || protocol === 'icmpv6')) protocol = 'ipv6-icmp';
  if (ethertype === 'IPv6' && protocol === '1') protocol = '58';
  let portRangeMin = v.port_range_min ?? null;
  let portRangeMax = v.port_range_max ?? null;
  // The whole port range means no range.
  if (portRangeMin === 1 && portRangeMax === 65535) portRangeMin = portRangeMax = null;
  validatePortRange({ protocol, portRangeMin, portRangeMax });
  const remoteIpPrefix = v.remote_ip_prefix ?? null;
  if (remoteIpPrefix && `IPv${parseCidr(remoteIpPrefix)!.version}` !== ethertype) {
    throw sgError(400, 'SecurityGroupRuleParameterConflict', `Conflicting value ethertype ${ethertype} for CIDR ${v.remote_ip_prefix}`);
  }
  if (protocol && IPV6_ONLY_PROTOCOLS.includes(protocol) && ethertype === 'IPv4') {
    throw sgError(400, 'SecurityGroupEthertypeConflictWithProtocol', `Invalid ethertype ${ethertype} for protocol ${protocol}.`);
  }
  const remoteGroupId = v.remote_group_id ?? null;
  const remotes = [remoteIpPrefix, remoteGroupId, v.remote_address_group_id ?? null].filter((r) => r);
  if (remotes.length > 1) {
    throw sgError(400, 'SecurityGroupMultipleRemoteEntites', 'Only one of remote_ip_prefix or remote_group_id or remote_address_group_id may be provided.');
  }
  const visibleTo = { ...caller, projectId };
  if (remoteGroupId) s.securityGroup(visibleTo, remoteGroupId);
  if (v.remote_address_group_id) {
    throw sgError(404, 'AddressGroupNotFound', `Address group ${v.remote_address_group_id} could not be found.`);
  }
  const securityGroupId = v.security_group_id!;
  const group = s.securityGroups.get(securityGroupId);
  if (!group || !s.owns(visibleTo, group)) throw notFound.securityGroup(securityGroupId);
  s.checkQuota(projectId, 'security_group_rule');

  const fields = {
    securityGroupId,
    direction: v.direction!,
    ethertype,
    protocol,
    portRangeMin,
    portRangeMax,
    remoteIpPrefix,
    remoteGroupId,
    description: v.description ?? '',
  };
  const key = ruleKey(fields);
  const duplicate = s.rulesOf(securityGroupId).find((r) => ruleKey(r) === key);
  if (duplicate) throw sgError(409, 'SecurityGroupRuleExists', `Security group rule already exists. Rule id is ${duplicate.id}.`);
  const rule = addRule(s, projectId, securityGroupId, fields);
  s.touch(group);
  return rule;
}

export function deleteRule(s: Store, caller: Caller, id: string): void {
  const rule = s.rule(caller, id);
  s.removeRule(rule);
  const group = s.securityGroups.get(rule.securityGroupId);
  if (group) s.touch(group);
}

/**
 * Request bodies, validated with zod the way Neutron's API layer validates
 * them: unknown attributes, attributes not allowed in POST/PUT, missing
 * required ones, then each value's converter and validator, each failure
 * answered with Neutron's own 400 message.
 */
import { z } from 'zod';
import { badRequest, invalidInput, type NeutronError, pyList, pyStr } from './errors.js';
import { parseAddress, parseCidr } from './ip.js';
import type { NeutronOptions } from './store.js';

/** A value a validator rejects: `reason` goes into "Invalid input for <attr>. Reason: <reason>."; `error` replaces the whole answer. */
export class Invalid extends Error {
  constructor(
    readonly reason: string,
    readonly error?: NeutronError,
  ) {
    super(reason);
  }
}

/** A zod field around a Neutron-style converter/validator. */
export function field<T>(convert: (value: unknown) => T): z.ZodType<T> {
  return z.unknown().transform((value, ctx) => {
    try {
      return convert(value);
    } catch (error) {
      if (!(error instanceof Invalid)) throw error;
      ctx.addIssue({ code: 'custom', message: error.reason, params: { error: error.error } });
      return z.NEVER;
    }
  });
}

export interface Attribute {
  schema: z.ZodType<unknown>;
  post: boolean;
  put: boolean;
  required?: boolean;
}

export type Spec = Record<string, Attribute>;
export type Parsed<S extends Spec> = { [K in keyof S]?: z.output<S[K]['schema']> };

export const attr = <T>(schema: z.ZodType<T>, post: boolean, put: boolean, required = false) => ({ schema, post, put, required });
/** Shown but never written by clients (status, id, timestamps, ...). */
export const readOnly = () =>
  attr(
    field((v) => v),
    false,
    false,
  );

/** The owner fields every resource accepts on create (an admin may create for another project). */
export const ownerAttributes = {
  tenant_id: attr(
    field((v) => string(v, 255)),
    true,
    false,
  ),
  project_id: attr(
    field((v) => string(v, 255)),
    true,
    false,
  ),
};

export const standardReadOnly = {
  id: readOnly(),
  created_at: readOnly(),
  updated_at: readOnly(),
  revision_number: readOnly(),
};

/**
 * `{<resource>: {...}}` → the validated attributes. `method` decides which
 * attributes are writable; POST also enforces required ones.
 */
export function parseBody<S extends Spec>(spec: S, resource: string, body: unknown, method: 'POST' | 'PUT'): Parsed<S> {
  if (body === undefined || body === null || (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0)) {
    throw badRequest('Resource body required');
  }
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('Body contains invalid data');
  const envelope = body as Record<string, unknown>;
  if (`${resource}s` in envelope) throw badRequest('Bulk operation not supported');
  const item = envelope[resource];
  if (item === undefined || item === null) throw badRequest(`Unable to find '${resource}' in request body`);
  if (typeof item !== 'object' || Array.isArray(item)) throw badRequest(`Object '${resource}' contains invalid data`);
  const values = item as Record<string, unknown>;

  if ('tenant_id' in values && 'project_id' in values && values.tenant_id !== values.project_id) {
    throw badRequest("'project_id' and 'tenant_id' do not match");
  }
  const unknown = Object.keys(values).filter((k) => !(k in spec));
  if (unknown.length) throw badRequest(`Unrecognized attribute(s) '${unknown.join(', ')}'`);
  for (const [name, a] of Object.entries(spec)) {
    if (method === 'POST') {
      if (a.post && a.required && !(name in values)) throw badRequest(`Failed to parse request. Required attribute '${name}' not specified`);
      if (!a.post && name in values) throw badRequest(`Attribute '${name}' not allowed in POST`);
    } else if (!a.put && name in values) {
      throw badRequest(`Cannot update read-only attribute ${name}`);
    }
  }

  const shape = Object.fromEntries(Object.entries(spec).map(([name, a]) => [name, a.schema.optional()]));
  const result = z.object(shape).safeParse(values);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const error = (issue as { params?: { error?: NeutronError } }).params?.error;
    if (error) throw error;
    throw badRequest(`Invalid input for ${String(issue.path[0])}. Reason: ${issue.message}.`);
  }
  const parsed = result.data as Record<string, unknown>;
  for (const key of Object.keys(parsed)) if (!(key in values)) delete parsed[key];
  return parsed as Parsed<S>;
}

/** The project a create is for: the body's owner fields for admins, else the caller's (others get Neutron's 400). */
export function ownerOf(values: { tenant_id?: string; project_id?: string }, caller: { projectId: string; isAdmin: boolean }): string {
  const requested = values.project_id ?? values.tenant_id;
  if (requested === undefined) return caller.projectId;
  if (requested !== caller.projectId && !caller.isAdmin) {
    throw badRequest("Specifying 'project_id' or 'tenant_id' other than the authenticated project in request requires admin or advsvc privileges");
  }
  return requested;
}

// Converters and validators, with neutron_lib's messages.

export function string(v: unknown, max: number): string {
  if (typeof v !== 'string') throw new Invalid(`'${pyStr(v)}' is not a valid string`);
  if (v.length > max) throw new Invalid(`'${v}' exceeds maximum length of ${max}`);
  return v;
}

export function boolean(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (v === 0 || v === 1) return v === 1;
  if (typeof v === 'string') {
    const s = v.toLowerCase();
    if (s === 'true' || s === '1') return true;
    if (s === 'false' || s === '0') return false;
  }
  throw new Invalid('', invalidInput(`'${pyStr(v)}' cannot be converted to boolean`));
}

export function integer(v: unknown, min?: number, max?: number): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : NaN;
  if (!Number.isInteger(n)) throw new Invalid('', invalidInput(`'${pyStr(v)}' is not an integer`));
  if (min !== undefined && n < min) throw new Invalid(`'${n}' is too small - must be at least '${min}'`);
  if (max !== undefined && n > max) throw new Invalid(`'${n}' is too large - must be no larger than '${max}'`);
  return n;
}

const UUID = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/;

export function uuid(v: unknown): string {
  if (typeof v !== 'string' || !UUID.test(v)) throw new Invalid(`'${pyStr(v)}' is not a valid UUID`);
  return v;
}

export const uuidOrNull = (v: unknown) => (v === null ? null : uuid(v));

export function oneOf<T extends string | number>(v: unknown, values: readonly T[]): T {
  if (!values.includes(v as T)) throw new Invalid(`${pyStr(v)} is not in ${pyList(values)}`);
  return v as T;
}

export function ipAddress(v: unknown): string {
  const a = typeof v === 'string' ? parseAddress(v) : undefined;
  if (!a) throw new Invalid(`'${pyStr(v)}' is not a valid IP address`);
  return v as string;
}

export const ipOrNull = (v: unknown) => (v === null ? null : ipAddress(v));

export function subnetCidr(v: unknown): string {
  if (typeof v !== 'string' || !parseCidr(v)) throw new Invalid(`'${pyStr(v)}' is not a valid IP subnet`);
  return v;
}

const MAC = /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/;

export function mac(v: unknown): string {
  if (typeof v !== 'string' || !MAC.test(v)) throw new Invalid(`'${pyStr(v)}' is not a valid MAC address`);
  return v.toLowerCase().replaceAll('-', ':');
}

export function list(v: unknown): unknown[] {
  if (!Array.isArray(v)) throw new Invalid(`'${pyStr(v)}' is not a list`);
  return v;
}

export function dict(v: unknown): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Invalid(`'${pyStr(v)}' is not a dictionary`);
  return v as Record<string, unknown>;
}

export function uniqueStrings(v: unknown, max: number): string[] {
  const items = list(v).map((i) => string(i, max));
  const dups = [...new Set(items.filter((i, n) => items.indexOf(i) !== n))];
  if (dups.length) throw new Invalid(`Duplicate items in the list: '${dups.join(', ')}'`);
  return items;
}

export const uuidList = (v: unknown) => list(v).map(uuid);

export const tags = field((v) => uniqueStrings(v, 255));

/**
 * A resource's attributes with its tags writable on create, as the
 * `tag-creation` extension (Neutron 2024.1 on) makes them; without it a
 * create carrying tags is refused ("Attribute 'tags' not allowed in POST").
 */
export function withCreationTags<S extends Spec>(spec: S, options: NeutronOptions): S {
  return options.tagCreation ? { ...spec, tags: attr(tags, true, false) } : spec;
}

/** The tags a parsed create carries (none where the spec does not take them). */
export const createdTags = (values: { tags?: unknown }): string[] => (values.tags as string[] | undefined) ?? [];

export function fixedIps(v: unknown): { subnet_id?: string; ip_address?: string }[] {
  const seen = new Set<string>();
  return list(v).map((item) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new Invalid(`Invalid data format for fixed IP: '${pyStr(item)}'`);
    const entry = item as Record<string, unknown>;
    if (Object.keys(entry).some((k) => k !== 'subnet_id' && k !== 'ip_address')) throw new Invalid(`Invalid data format for fixed IP: '${pyStr(item)}'`);
    // Key order is kept: policy messages list sub-attributes in request order.
    const out: { subnet_id?: string; ip_address?: string } = {};
    for (const key of Object.keys(entry)) {
      if (key === 'subnet_id') out.subnet_id = uuid(entry.subnet_id);
      else {
        const ip = ipAddress(entry.ip_address);
        if (seen.has(ip)) throw new Invalid(`Duplicate IP address '${ip}'`);
        seen.add(ip);
        out.ip_address = ip;
      }
    }
    return out;
  });
}

function keyedDict(item: unknown, keys: readonly string[], what: string): Record<string, unknown> {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new Invalid(`Invalid data format for ${what}: '${pyStr(item)}'`);
  const entry = item as Record<string, unknown>;
  const actual = Object.keys(entry).sort();
  if (actual.length !== keys.length || keys.some((k) => !(k in entry))) {
    throw new Invalid(`Validation of dictionary's keys failed. Expected keys: ${pyList([...keys].sort())} Provided keys: ${pyList(actual)}`);
  }
  return entry;
}

export function allocationPools(v: unknown): { start: string; end: string }[] {
  return list(v).map((item) => {
    const e = keyedDict(item, ['start', 'end'], 'IP pool');
    return { start: ipAddress(e.start), end: ipAddress(e.end) };
  });
}

export function nameservers(v: unknown): string[] {
  const seen = new Set<string>();
  return list(v).map((item) => {
    if (typeof item !== 'string') throw new Invalid(`Invalid data format for nameserver: '${pyStr(item)}'`);
    if (!parseAddress(item)) throw new Invalid(`'${item}' is not a valid nameserver. '${item}' is not a valid IP address`);
    if (seen.has(item)) throw new Invalid(`Duplicate nameserver '${item}'`);
    seen.add(item);
    return item;
  });
}

export function hostRoutes(v: unknown): { destination: string; nexthop: string }[] {
  const seen = new Set<string>();
  return list(v).map((item) => {
    const e = keyedDict(item, ['destination', 'nexthop'], 'hostroute');
    if (typeof e.destination !== 'string' || !parseCidr(e.destination, true)) throw new Invalid(`'${pyStr(e.destination)}' is not a valid CIDR`);
    const route = { destination: e.destination, nexthop: ipAddress(e.nexthop) };
    const key = `${route.destination}|${route.nexthop}`;
    if (seen.has(key)) throw new Invalid(`Duplicate hostroute '${pyStr(route)}'`);
    seen.add(key);
    return route;
  });
}

export function allowedAddressPairs(v: unknown): { ip_address: string; mac_address?: string }[] {
  return list(v).map((item) => {
    const e = dict(item);
    const extra = Object.keys(e).filter((k) => k !== 'ip_address' && k !== 'mac_address');
    if (extra.length) throw new Invalid('', badRequest(`Unrecognized attribute(s) '${extra.join(', ')}'`));
    if (!('ip_address' in e)) throw new Invalid('', invalidInput('AllowedAddressPair must contain ip_address'));
    if (typeof e.ip_address !== 'string' || !parseCidr(e.ip_address, true)) throw new Invalid(`'${pyStr(e.ip_address)}' is not a valid IP address`);
    return 'mac_address' in e ? { ip_address: e.ip_address, mac_address: mac(e.mac_address) } : { ip_address: e.ip_address };
  });
}

export function dhcpOptions(v: unknown): { opt_name: string; opt_value: string; ip_version: number }[] {
  return list(v).map((item) => {
    const e = dict(item);
    return { opt_name: string(e.opt_name, 64), opt_value: string(e.opt_value, 255), ip_version: e.ip_version === undefined ? 4 : oneOf(e.ip_version, [4, 6]) };
  });
}

export function routes(v: unknown): { destination: string; nexthop: string }[] {
  return list(v).map((item) => {
    const e = keyedDict(item, ['destination', 'nexthop'], 'hostroute');
    if (typeof e.destination !== 'string' || !parseCidr(e.destination, true)) throw new Invalid(`'${pyStr(e.destination)}' is not a valid CIDR`);
    return { destination: e.destination, nexthop: ipAddress(e.nexthop) };
  });
}

export interface GatewayInfo {
  network_id: string;
  enable_snat?: boolean;
  external_fixed_ips?: { subnet_id?: string; ip_address?: string }[];
}

export function gatewayInfo(v: unknown): GatewayInfo | null {
  if (v === null || (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0)) return null;
  const e = dict(v);
  const extra = Object.keys(e).filter((k) => !['network_id', 'enable_snat', 'external_fixed_ips'].includes(k));
  if (extra.length) throw new Invalid(`Unexpected keys supplied: ${extra.join(', ')}`);
  if (!('network_id' in e)) throw new Invalid(`Validation of dictionary's keys failed. Expected keys: ['network_id'] Provided keys: ${pyList(Object.keys(e))}`);
  const info: GatewayInfo = { network_id: uuid(e.network_id) };
  if ('enable_snat' in e) info.enable_snat = boolean(e.enable_snat);
  if ('external_fixed_ips' in e) info.external_fixed_ips = fixedIps(e.external_fixed_ips);
  return info;
}

export function subports(v: unknown): { port_id: string; segmentation_type?: string; segmentation_id?: number }[] {
  if (!Array.isArray(v)) throw new Invalid(`Invalid data format for subports: '${pyStr(v)}' is not a list`);
  const seen = new Set<string>();
  return v.map((item) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new Invalid(`Invalid data format for subport: '${pyStr(item)}' is not a dict`);
    const e = item as Record<string, unknown>;
    if (!('port_id' in e)) throw new Invalid('A valid port UUID must be specified');
    if (typeof e.port_id !== 'string' || !UUID.test(e.port_id)) throw new Invalid(`Invalid UUID for subport: '${pyStr(e.port_id)}'`);
    if (seen.has(e.port_id)) throw new Invalid(`Non unique UUID for subport: '${e.port_id}'`);
    seen.add(e.port_id);
    const out: { port_id: string; segmentation_type?: string; segmentation_id?: number } = { port_id: e.port_id };
    if ('segmentation_type' in e) out.segmentation_type = string(e.segmentation_type, 32);
    if ('segmentation_id' in e) {
      const id = typeof e.segmentation_id === 'string' && /^\d+$/.test(e.segmentation_id) ? Number(e.segmentation_id) : e.segmentation_id;
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) {
        throw new Invalid(`Segmentation ID '${pyStr(e.segmentation_id)}' for '${pyStr(item)}' is not an integer`);
      }
      out.segmentation_id = id;
    }
    return out;
  });
}

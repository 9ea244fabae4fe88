/**
 * IPv4/IPv6 arithmetic on bigints, with the string forms netaddr produces
 * (Neutron's addresses and CIDRs round-trip through netaddr, so the
 * simulator must print them the same way).
 */

export type IpVersion = 4 | 6;

export interface Address {
  version: IpVersion;
  value: bigint;
}

export interface Cidr {
  version: IpVersion;
  /** The address as written, host bits included (a remote_ip_prefix keeps them). */
  address: bigint;
  prefix: number;
}

export interface Range {
  start: bigint;
  end: bigint;
}

const bits = (version: IpVersion) => (version === 4 ? 32 : 128);

function parseV4(s: string): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || (part.length > 1 && part.startsWith('0'))) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    value = (value << 8n) | BigInt(n);
  }
  return value;
}

function parseV6(s: string): bigint | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(s)) return undefined;
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    const items = part.split(':');
    for (let i = 0; i < items.length; i += 1) {
      const item = items[i]!;
      if (i === items.length - 1 && item.includes('.')) {
        const v4 = parseV4(item);
        if (v4 === undefined) return undefined;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(item)) return undefined;
        out.push(parseInt(item, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  return all.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

export function parseAddress(s: string): Address | undefined {
  if (typeof s !== 'string') return undefined;
  const v4 = parseV4(s);
  if (v4 !== undefined) return { version: 4, value: v4 };
  if (!s.includes(':')) return undefined;
  const v6 = parseV6(s);
  return v6 === undefined ? undefined : { version: 6, value: v6 };
}

export function formatAddress(version: IpVersion, value: bigint): string {
  if (version === 4) {
    return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
  }
  const groups: number[] = [];
  for (let i = 7; i >= 0; i -= 1) groups.push(Number((value >> BigInt(i * 16)) & 0xffffn));
  // RFC 5952: the longest run (at least two) of zero groups becomes '::', the first on ties.
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j += 1;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** A CIDR; without `/len` only when `allowBare` (then a host prefix, as netaddr reads a bare address). */
export function parseCidr(s: string, allowBare = false): Cidr | undefined {
  if (typeof s !== 'string') return undefined;
  const slash = s.indexOf('/');
  if (slash < 0) {
    if (!allowBare) return undefined;
    const a = parseAddress(s);
    return a && { version: a.version, address: a.value, prefix: bits(a.version) };
  }
  const a = parseAddress(s.slice(0, slash));
  const len = s.slice(slash + 1);
  if (!a || !/^\d{1,3}$/.test(len)) return undefined;
  const prefix = Number(len);
  if (prefix > bits(a.version)) return undefined;
  return { version: a.version, address: a.value, prefix };
}

const hostMask = (c: { version: IpVersion; prefix: number }) => (1n << BigInt(bits(c.version) - c.prefix)) - 1n;

export const firstOf = (c: Cidr) => c.address & ~hostMask(c);
export const lastOf = (c: Cidr) => firstOf(c) | hostMask(c);

/** `a.b.c.d/len` with the host bits cleared. */
export const networkString = (c: Cidr) => `${formatAddress(c.version, firstOf(c))}/${c.prefix}`;
/** `a.b.c.d/len` as given. */
export const cidrString = (c: Cidr) => `${formatAddress(c.version, c.address)}/${c.prefix}`;

export const cidrContains = (c: Cidr, a: Address) => a.version === c.version && a.value >= firstOf(c) && a.value <= lastOf(c);

export const cidrsOverlap = (a: Cidr, b: Cidr) => a.version === b.version && firstOf(a) <= lastOf(b) && firstOf(b) <= lastOf(a);

/**
 * Whether `a` may be a port's address on subnet `c`: inside it, and for IPv4
 * neither the network nor the broadcast address (except on /31 and /32).
 */
export function usableInSubnet(c: Cidr, a: Address): boolean {
  if (!cidrContains(c, a)) return false;
  if (c.version === 6 || c.prefix >= 31) return true;
  return a.value !== firstOf(c) && a.value !== lastOf(c);
}

/** The pools Neutron generates for a subnet: every host address minus the gateway. */
export function defaultPools(c: Cidr, gateway: Address | undefined): Range[] {
  const first = firstOf(c);
  const last = lastOf(c);
  if (first === last) return [{ start: first, end: last }];
  const start = first + 1n;
  const end = c.version === 4 ? last - 1n : last;
  if (start >= end) return [];
  return subtract([{ start, end }], gateway ? [gateway.value] : []);
}

/** `ranges` without the given addresses, as sorted disjoint ranges. */
function subtract(ranges: Range[], addresses: bigint[]): Range[] {
  let out = [...ranges];
  for (const a of addresses) {
    const next: Range[] = [];
    for (const r of out) {
      if (a < r.start || a > r.end) next.push(r);
      else {
        if (a > r.start) next.push({ start: r.start, end: a - 1n });
        if (a < r.end) next.push({ start: a + 1n, end: r.end });
      }
    }
    out = next;
  }
  return out.sort((x, y) => (x.start < y.start ? -1 : x.start > y.start ? 1 : 0));
}

export const rangesOverlap = (a: Range, b: Range) => a.start <= b.end && b.start <= a.end;

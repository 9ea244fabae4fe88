/**
 * Where an ORC Image's content may come from. The server fetches the URL and
 * its answer can be read back from Glance, so a URL naming an address inside
 * the server's network (loopback, link-local, private, CGNAT, the server's own
 * interfaces) would read that network for whoever may write an Image. Those
 * are refused unless the operator allows them (--image-download-allow).
 *
 * The rule is applied to the address each connection is actually made to,
 * not to the URL's text: the agents below resolve the host themselves, keep
 * only the allowed addresses and hand those to the socket, so a name that
 * resolves to 127.0.0.1 (or changes its answer between two lookups) is
 * caught, and every hop of a redirect connects through the same agents.
 */
import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import os from 'node:os';
import { TerminalError } from '../runtime/controller.js';

type Family = 'ipv4' | 'ipv6';

/** What an operator allows: a range for any port, or one address on one port. */
export interface Allowance {
  address: string;
  prefix: number;
  family: Family;
  port?: number;
}

/** Ranges refused unless allowed, with what each is called in a refusal. */
const refusedRanges: readonly (readonly [string, number, Family, string])[] = [
  ['0.0.0.0', 8, 'ipv4', 'an unspecified ("this network") address'],
  ['127.0.0.0', 8, 'ipv4', 'a loopback address'],
  ['10.0.0.0', 8, 'ipv4', 'a private (RFC 1918) address'],
  ['172.16.0.0', 12, 'ipv4', 'a private (RFC 1918) address'],
  ['192.168.0.0', 16, 'ipv4', 'a private (RFC 1918) address'],
  ['100.64.0.0', 10, 'ipv4', 'a shared (CGNAT, RFC 6598) address'],
  ['169.254.0.0', 16, 'ipv4', 'a link-local address'],
  ['192.0.0.0', 24, 'ipv4', 'an IETF protocol assignment address'],
  ['224.0.0.0', 4, 'ipv4', 'a multicast address'],
  ['240.0.0.0', 4, 'ipv4', 'a reserved address'],
  ['::', 128, 'ipv6', 'the unspecified address'],
  ['::1', 128, 'ipv6', 'a loopback address'],
  ['fe80::', 10, 'ipv6', 'a link-local address'],
  ['fc00::', 7, 'ipv6', 'a unique local (ULA) address'],
  ['ff00::', 8, 'ipv6', 'a multicast address'],
];

/** `10.0.0.0/8`, `fd00::/8` or one address (any port), `127.0.0.1:6445` or `[::1]:8080` (that port only). */
export function parseAllowance(text: string): Allowance {
  const bad = (why: string) =>
    new Error(`${JSON.stringify(text)} is not a destination to allow (${why}): give a CIDR such as 10.0.0.0/8, or an address and port such as 127.0.0.1:6445`);
  let rest = text.trim();
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(rest);
  const v4WithPort = /^([\d.]+(?:\/\d+)?):(\d+)$/.exec(rest);
  if (bracketed) [rest, port] = [bracketed[1]!, bracketed[2] === undefined ? undefined : Number(bracketed[2])];
  else if (v4WithPort) [rest, port] = [v4WithPort[1]!, Number(v4WithPort[2])];
  if (port !== undefined && !(port >= 1 && port <= 65535)) throw bad('the port must be from 1 to 65535');
  const [address = '', prefixText, ...extra] = rest.split('/');
  const version = isIP(address);
  if (version === 0 || extra.length > 0) throw bad('not an IP address or CIDR');
  const width = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? width : Number(prefixText);
  if (!/^\d*$/.test(prefixText ?? '') || !(prefix >= 0 && prefix <= width)) throw bad(`the prefix length must be from 0 to ${width}`);
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6', ...(port === undefined ? {} : { port }) };
}

/** A host and port as a URL writes them. */
function show(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The IPv4 address an IPv6 one carries in its last 32 bits, for IPv4-mapped (::ffff:0:0/96) and NAT64 (64:ff9b::/96) addresses. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const prefix = ['::ffff:', '64:ff9b::'].find((candidate) => lower.startsWith(candidate));
  if (!prefix) return undefined;
  const tail = lower.slice(prefix.length);
  if (isIP(tail) === 4) return tail;
  const words = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(tail);
  if (!words) return undefined;
  const [high, low] = [parseInt(words[1]!, 16), parseInt(words[2]!, 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Every address of this host's interfaces: the server's own, which a URL must not reach either. */
function ownAddresses(): string[] {
  return Object.values(os.networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address.replace(/%.*$/, '')));
}

export class DestinationRule {
  private readonly refused = refusedRanges.map(([address, prefix, family, what]) => {
    const list = new BlockList();
    list.addSubnet(address, prefix, family);
    return { list, what };
  });
  private readonly own = new BlockList();
  private readonly allowedRanges = new BlockList();
  private readonly allowedEndpoints: { list: BlockList; port: number }[] = [];

  constructor(allow: readonly Allowance[], own: readonly string[] = ownAddresses()) {
    for (const allowance of allow) {
      if (allowance.port === undefined) this.allowedRanges.addSubnet(allowance.address, allowance.prefix, allowance.family);
      else {
        const list = new BlockList();
        list.addSubnet(allowance.address, allowance.prefix, allowance.family);
        this.allowedEndpoints.push({ list, port: allowance.port });
      }
    }
    for (const address of own) {
      const version = isIP(address);
      if (version !== 0) this.own.addAddress(address, version === 4 ? 'ipv4' : 'ipv6');
    }
  }

  /** What refuses a connection to `address` on `port` ("a loopback address"), or undefined when it may be made. */
  refusal(address: string, port: number): string | undefined {
    const family: Family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    const candidates: [string, Family][] = [[address, family]];
    const carried = family === 'ipv6' ? embeddedIpv4(address) : undefined;
    if (carried) candidates.push([carried, 'ipv4']);
    const allowed = ([candidate, candidateFamily]: [string, Family]) =>
      this.allowedRanges.check(candidate, candidateFamily) ||
      this.allowedEndpoints.some((endpoint) => endpoint.port === port && endpoint.list.check(candidate, candidateFamily));
    if (candidates.some(allowed)) return undefined;
    for (const [candidate, candidateFamily] of candidates) {
      const range = this.refused.find((entry) => entry.list.check(candidate, candidateFamily));
      if (range) return range.what;
      if (this.own.check(candidate, candidateFamily)) return 'an address of this server';
    }
    return undefined;
  }
}

/** A download whose destination the rule refuses: retrying cannot help, the Image's URL (or where it redirects) must change, or the operator allow it. */
export class DestinationRefusedError extends TerminalError {
  override name = 'DestinationRefusedError';

  constructor(host: string, port: number, why: string) {
    super(`refused to download from ${show(host, port)}${why}; an operator may allow it with --image-download-allow`);
  }
}

/** A lookup that resolves as the socket would and keeps only the addresses the rule allows on `port`. */
function guardedLookup(rule: DestinationRule, port: number): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...(options as LookupAllOptions), all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return void callback(error, '', 0);
      const allowed = addresses.filter((entry) => rule.refusal(entry.address, port) === undefined);
      if (allowed.length === 0) {
        const why = addresses.map((entry) => `${entry.address} (${rule.refusal(entry.address, port)})`).join(', ');
        return void callback(new DestinationRefusedError(hostname, port, `: it resolves to ${why}`), '', 0);
      }
      if ((options as LookupAllOptions).all) return void (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

type ConnectionCallback = (error: Error | null, stream: Duplex) => void;
type Connect = (options: http.ClientRequestArgs, callback?: ConnectionCallback) => Duplex | null | undefined;

/**
 * `connect` with the rule applied: an address in the URL checked as it is (the socket looks
 * nothing up then), a name resolved through the guarded lookup. A refusal fails the request.
 */
function guardedConnect(rule: DestinationRule, connect: Connect, defaultPort: number): Connect {
  return (options, callback) => {
    const host = (options.host ?? options.hostname ?? 'localhost').replace(/^\[(.*)\]$/, '$1');
    const port = Number(options.port ?? options.defaultPort ?? defaultPort);
    const why = isIP(host) === 0 ? undefined : rule.refusal(host, port);
    if (why !== undefined) {
      const error = new DestinationRefusedError(host, port, `, ${why}`);
      process.nextTick(() => (callback as (error: Error) => void)(error));
      return undefined;
    }
    return connect({ ...options, lookup: guardedLookup(rule, port) }, callback);
  };
}

export interface DownloadAgents {
  http: http.Agent;
  https: https.Agent;
}

/** HTTP and HTTPS agents whose every connection (the first request's and each redirect's) passes the rule. */
export function guardedAgents(rule: DestinationRule): DownloadAgents {
  // No keep-alive: a socket is never reused for another request, so each one is checked where it connects.
  const plain = new http.Agent({ keepAlive: false });
  const secure = new https.Agent({ keepAlive: false });
  plain.createConnection = guardedConnect(rule, plain.createConnection.bind(plain), 80);
  secure.createConnection = guardedConnect(rule, secure.createConnection.bind(secure), 443);
  return { http: plain, https: secure };
}

/** A URL as it may be logged or shown in a condition: no user, password, query or fragment, which may carry credentials or signatures. */
export function redactUrl(url: string): string {
  if (!URL.canParse(url)) return '(an unparseable URL)';
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  parsed.search = '';
  parsed.hash = '';
  return parsed.href;
}

/** Any URL in a message, redacted. */
export function redactUrls(message: string): string {
  return message.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, redactUrl);
}

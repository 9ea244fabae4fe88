/**
 * The server's own PKI, kept under its data directory so restarts keep the
 * kubeconfig it handed out valid: a CA, a serving certificate for the
 * requested hosts, and an admin client certificate (CN admin, O
 * system:masters) that our client-certificate authentication maps to a
 * cluster admin. Everything is ECDSA P-256 / SHA-256, which Go's TLS stack
 * (kubectl, client-go) and Node's both accept.
 */
import './reflect-metadata.js';
import * as x509 from '@peculiar/x509';
import { createPrivateKey, randomBytes, webcrypto, X509Certificate } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import type { PeerCertificate } from 'node:tls';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export interface Pki {
  caCertPem: string;
  serverCertPem: string;
  serverKeyPem: string;
  adminCertPem: string;
  adminKeyPem: string;
}

interface Pair {
  certPem: string;
  keyPem: string;
}

const dayMs = 24 * 60 * 60 * 1000;
/** Renewing this long before expiry leaves a restart window before clients start failing. */
const renewBeforeMs = 30 * dayMs;
/** Backdating tolerates clients whose clocks run a little behind ours. */
const backdateMs = 5 * 60 * 1000;
const caLifetimeMs = 3650 * dayMs;
const leafLifetimeMs = 365 * dayMs;

const keyAlgorithm = { name: 'ECDSA', namedCurve: 'P-256' };
const signingAlgorithm = { name: 'ECDSA', hash: 'SHA-256' };

/** SANs every serving certificate carries, so local clients always verify. */
const loopbackHosts = ['localhost', '127.0.0.1', '::1'];

/**
 * Loads the PKI from `dir/pki`, creating or renewing what is missing,
 * unparsable, not chained to the CA, within 30 days of expiry or (for the
 * serving certificate) not covering every requested host. The CA is only
 * replaced when it is itself unusable; files that pass are left untouched.
 */
export async function ensurePki(dir: string, options: { serverHosts: string[] }): Promise<Pki> {
  const pkiDir = path.join(dir, 'pki');
  await mkdir(pkiDir, { recursive: true, mode: 0o700 });
  const hosts = normalizeHosts([...loopbackHosts, ...options.serverHosts]);
  const now = Date.now();

  let ca = await loadPair(pkiDir, 'ca');
  if (!ca || !isUsableCa(ca, now)) ca = await storePair(pkiDir, 'ca', await createCa(now));
  const issuer = await loadIssuer(ca);

  let server = await loadPair(pkiDir, 'apiserver');
  if (!server || !isUsableLeaf(server, issuer.cert, now) || !coversHosts(server, hosts)) {
    server = await storePair(pkiDir, 'apiserver', await createServing(issuer, hosts, now));
  }

  let admin = await loadPair(pkiDir, 'admin');
  if (!admin || !isUsableLeaf(admin, issuer.cert, now)) {
    admin = await storePair(pkiDir, 'admin', await createAdmin(issuer, now));
  }

  return {
    caCertPem: ca.certPem,
    serverCertPem: server.certPem,
    serverKeyPem: server.keyPem,
    adminCertPem: admin.certPem,
    adminKeyPem: admin.keyPem,
  };
}

/**
 * The user a verified client certificate stands for, as kube maps it:
 * CN is the user name (the last CN wins, as in Go's pkix.Name) and every O
 * is a group.
 */
export function identityFromCertificate(peer: PeerCertificate): { user: string; groups: string[] } {
  const subject = peer.subject ?? {};
  return { user: values(subject.CN).at(-1) ?? '', groups: values(subject.O) };
}

function values(field: string | string[] | undefined): string[] {
  if (field === undefined) return [];
  return Array.isArray(field) ? field : [field];
}

function normalizeHosts(hosts: string[]): string[] {
  const normalized = hosts.map((host) => {
    const bare = host.trim().replace(/^\[(.*)\]$/, '$1');
    if (!bare) throw new Error('serverHosts may not contain an empty host');
    return isIP(bare) ? bare : bare.toLowerCase();
  });
  return [...new Set(normalized)];
}

async function loadPair(dir: string, name: string): Promise<Pair | undefined> {
  try {
    const [certPem, keyPem] = await Promise.all([readFile(path.join(dir, `${name}.crt`), 'utf8'), readFile(path.join(dir, `${name}.key`), 'utf8')]);
    return { certPem, keyPem };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Key first, then certificate, each via rename: a crash leaves a mismatched pair, which is regenerated. */
async function storePair(dir: string, name: string, pair: Pair): Promise<Pair> {
  await writeAtomically(path.join(dir, `${name}.key`), pair.keyPem, 0o600);
  await writeAtomically(path.join(dir, `${name}.crt`), pair.certPem, 0o600);
  return pair;
}

async function writeAtomically(file: string, content: string, mode: number): Promise<void> {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temporary, content, { mode, flag: 'wx' });
  await rename(temporary, file);
}

/** Parses both halves; undefined when either is broken or they do not belong together. */
function parsePair(pair: Pair): X509Certificate | undefined {
  try {
    const cert = new X509Certificate(pair.certPem);
    return cert.checkPrivateKey(createPrivateKey(pair.keyPem)) ? cert : undefined;
  } catch {
    return undefined;
  }
}

function isCurrent(cert: X509Certificate, now: number): boolean {
  return Date.parse(cert.validFrom) <= now && Date.parse(cert.validTo) - now > renewBeforeMs;
}

function isUsableCa(pair: Pair, now: number): boolean {
  const cert = parsePair(pair);
  return !!cert && cert.ca && cert.verify(cert.publicKey) && isCurrent(cert, now);
}

function isUsableLeaf(pair: Pair, ca: X509Certificate, now: number): boolean {
  const cert = parsePair(pair);
  return !!cert && !cert.ca && cert.checkIssued(ca) && cert.verify(ca.publicKey) && isCurrent(cert, now);
}

function coversHosts(pair: Pair, hosts: string[]): boolean {
  const cert = new X509Certificate(pair.certPem);
  return hosts.every((host) => (isIP(host) ? cert.checkIP(host) !== undefined : cert.checkHost(host, { subject: 'never' }) !== undefined));
}

interface Issuer {
  cert: X509Certificate;
  /** Reused as the children's issuer so it matches the CA subject byte for byte (Go chains by raw name). */
  name: x509.Name;
  publicKey: x509.PublicKey;
  signingKey: CryptoKey;
}

async function loadIssuer(ca: Pair): Promise<Issuer> {
  const parsed = new x509.X509Certificate(ca.certPem);
  const der = createPrivateKey(ca.keyPem).export({ type: 'pkcs8', format: 'der' });
  const signingKey = await webcrypto.subtle.importKey('pkcs8', der, keyAlgorithm, false, ['sign']);
  return {
    cert: new X509Certificate(ca.certPem),
    name: parsed.subjectName,
    publicKey: parsed.publicKey,
    signingKey: signingKey as CryptoKey,
  };
}

async function createCa(now: number): Promise<Pair> {
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    // The timestamp tells apart CAs from successive regenerations, as client-go's self-signed certs do.
    name: `CN=capo-apiserver-ca@${Math.floor(now / 1000)}`,
    notBefore: new Date(now - backdateMs),
    notAfter: new Date(now + caLifetimeMs),
    keys,
    signingAlgorithm,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: pem(cert), keyPem: await privateKeyPem(keys.privateKey) };
}

async function createServing(issuer: Issuer, hosts: string[], now: number): Promise<Pair> {
  const names: x509.JsonGeneralName[] = hosts.map((host) => ({ type: isIP(host) ? 'ip' : 'dns', value: host }));
  return createLeaf(issuer, now, 'CN=capo-apiserver', x509.ExtendedKeyUsage.serverAuth, [new x509.SubjectAlternativeNameExtension(names)]);
}

async function createAdmin(issuer: Issuer, now: number): Promise<Pair> {
  return createLeaf(issuer, now, [{ CN: ['admin'] }, { O: ['system:masters'] }], x509.ExtendedKeyUsage.clientAuth, []);
}

async function createLeaf(
  issuer: Issuer,
  now: number,
  subject: x509.X509CertificateCreateParamsName,
  usage: x509.ExtendedKeyUsage,
  extra: x509.Extension[],
): Promise<Pair> {
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject,
    issuer: issuer.name,
    notBefore: new Date(now - backdateMs),
    notAfter: new Date(now + leafLifetimeMs),
    publicKey: keys.publicKey,
    signingKey: issuer.signingKey,
    signingAlgorithm,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([usage]),
      ...extra,
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(issuer.publicKey),
    ],
  });
  return { certPem: pem(cert), keyPem: await privateKeyPem(keys.privateKey) };
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(keyAlgorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
}

/** 128 random bits, positive and without a leading zero byte so DER stays minimal (Go rejects otherwise). */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] & 0x7f) | 0x40;
  return bytes.toString('hex');
}

function pem(cert: x509.X509Certificate): string {
  return `${cert.toString('pem')}\n`;
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key as webcrypto.CryptoKey);
  return `${x509.PemConverter.encode(der, 'PRIVATE KEY')}\n`;
}

import '../../../src/apiserver/tls/reflect-metadata.js';
import * as x509 from '@peculiar/x509';
import { createPrivateKey, webcrypto, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { PeerCertificate } from 'node:tls';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensurePki, identityFromCertificate, type Pki } from '../../../src/apiserver/tls/pki.js';
import { startHttpsFixture } from './https-fixture.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'capo-pki-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const files = ['admin.crt', 'admin.key', 'apiserver.crt', 'apiserver.key', 'ca.crt', 'ca.key'];

async function snapshot(): Promise<Record<string, string>> {
  const entries = await Promise.all(files.map(async (f) => [f, await readFile(path.join(dir, 'pki', f), 'utf8')]));
  return Object.fromEntries(entries);
}

function sans(pem: string): string[] {
  return (new X509Certificate(pem).subjectAltName ?? '').split(', ');
}

function chains(leafPem: string, caPem: string): boolean {
  const leaf = new X509Certificate(leafPem);
  const ca = new X509Certificate(caPem);
  return leaf.checkIssued(ca) && leaf.verify(ca.publicKey);
}

/** A leaf for the serving slot signed by the given CA files, for reuse checks ensurePki must reject. */
async function forgeServing(caCertPem: string, caKeyPem: string, notAfter: Date): Promise<void> {
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
  const caKey = await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(caKeyPem), algorithm, false, ['sign']);
  const cert = await x509.X509CertificateGenerator.create({
    subject: 'CN=capo-apiserver',
    issuer: new x509.X509Certificate(caCertPem).subjectName,
    notBefore: new Date(Date.now() - 60_000),
    notAfter,
    publicKey: keys.publicKey,
    signingKey: caKey as CryptoKey,
    signingAlgorithm: algorithm,
    extensions: [
      new x509.SubjectAlternativeNameExtension([
        { type: 'dns', value: 'localhost' },
        { type: 'ip', value: '127.0.0.1' },
        { type: 'ip', value: '::1' },
      ]),
    ],
  });
  const key = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey as webcrypto.CryptoKey);
  await writeFile(path.join(dir, 'pki', 'apiserver.key'), x509.PemConverter.encode(key, 'PRIVATE KEY'));
  await writeFile(path.join(dir, 'pki', 'apiserver.crt'), cert.toString('pem'));
}

describe('ensurePki', () => {
  it('creates a CA, a serving certificate and an admin client certificate', async () => {
    const pki = await ensurePki(dir, { serverHosts: ['Capo.Example.COM', '10.1.2.3', '[fd00::1]', 'localhost'] });
    expect(await readdir(path.join(dir, 'pki'))).toStrictEqual(files);
    expect(await snapshot()).toStrictEqual({
      'ca.crt': pki.caCertPem,
      'ca.key': expect.stringMatching(/^-----BEGIN PRIVATE KEY-----\n[\s\S]+\n-----END PRIVATE KEY-----\n$/),
      'apiserver.crt': pki.serverCertPem,
      'apiserver.key': pki.serverKeyPem,
      'admin.crt': pki.adminCertPem,
      'admin.key': pki.adminKeyPem,
    });
    for (const key of ['ca.key', 'apiserver.key', 'admin.key']) {
      expect((await stat(path.join(dir, 'pki', key))).mode & 0o777).toBe(0o600);
    }
    expect((await stat(path.join(dir, 'pki'))).mode & 0o777).toBe(0o700);

    const ca = new X509Certificate(pki.caCertPem);
    expect(ca.ca).toBe(true);
    expect(ca.subject).toMatch(/^CN=capo-apiserver-ca@\d+$/);
    expect(ca.verify(ca.publicKey)).toBe(true);
    expect(ca.publicKey.asymmetricKeyDetails).toStrictEqual({ namedCurve: 'prime256v1' });
    const caYears = (Date.parse(ca.validTo) - Date.now()) / (365 * 24 * 3600 * 1000);
    expect(caYears).toBeGreaterThan(9.9);
    const caParsed = new x509.X509Certificate(pki.caCertPem);
    expect(caParsed.getExtension(x509.KeyUsagesExtension)?.usages).toBe(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);
    expect(caParsed.getExtension(x509.BasicConstraintsExtension)?.ca).toBe(true);

    const serving = new X509Certificate(pki.serverCertPem);
    expect(serving.ca).toBe(false);
    expect(chains(pki.serverCertPem, pki.caCertPem)).toBe(true);
    expect(sans(pki.serverCertPem)).toStrictEqual([
      'DNS:localhost',
      'IP Address:127.0.0.1',
      'IP Address:0:0:0:0:0:0:0:1',
      'DNS:capo.example.com',
      'IP Address:10.1.2.3',
      'IP Address:FD00:0:0:0:0:0:0:1',
    ]);
    expect(serving.keyUsage).toStrictEqual(['1.3.6.1.5.5.7.3.1']);
    const servingDays = (Date.parse(serving.validTo) - Date.now()) / (24 * 3600 * 1000);
    expect(servingDays).toBeGreaterThan(364);
    expect(servingDays).toBeLessThan(366);

    const admin = new X509Certificate(pki.adminCertPem);
    expect(admin.subject).toBe('CN=admin\nO=system:masters');
    expect(admin.keyUsage).toStrictEqual(['1.3.6.1.5.5.7.3.2']);
    expect(chains(pki.adminCertPem, pki.caCertPem)).toBe(true);
  });

  it('reuses every file byte for byte when nothing changed', async () => {
    const first = await ensurePki(dir, { serverHosts: ['capo.example.com'] });
    const files1 = await snapshot();
    const mtime = (await stat(path.join(dir, 'pki', 'apiserver.crt'))).mtimeMs;
    // Requested hosts already covered (in any spelling) do not force a new certificate either.
    const second = await ensurePki(dir, { serverHosts: ['CAPO.example.com', 'localhost', '127.0.0.1'] });
    expect(second).toStrictEqual(first);
    expect(await snapshot()).toStrictEqual(files1);
    expect((await stat(path.join(dir, 'pki', 'apiserver.crt'))).mtimeMs).toBe(mtime);
    expect(await readdir(path.join(dir, 'pki'))).toStrictEqual(files);
  });

  it('reissues only the serving certificate for a new host', async () => {
    const first = await ensurePki(dir, { serverHosts: ['a.example.com'] });
    const before = await snapshot();
    const second = await ensurePki(dir, { serverHosts: ['a.example.com', '192.168.0.9'] });
    const after = await snapshot();
    for (const file of ['ca.crt', 'ca.key', 'admin.crt', 'admin.key']) expect(after[file]).toBe(before[file]);
    expect(second.caCertPem).toBe(first.caCertPem);
    expect(second.adminCertPem).toBe(first.adminCertPem);
    expect(second.adminKeyPem).toBe(first.adminKeyPem);
    expect(second.serverCertPem).not.toBe(first.serverCertPem);
    expect(second.serverKeyPem).not.toBe(first.serverKeyPem);
    expect(sans(second.serverCertPem)).toContain('IP Address:192.168.0.9');
    expect(chains(second.serverCertPem, second.caCertPem)).toBe(true);
  });

  it('reissues a leaf whose key does not match or which does not parse', async () => {
    const first = await ensurePki(dir, { serverHosts: [] });
    await writeFile(path.join(dir, 'pki', 'admin.key'), first.serverKeyPem);
    await writeFile(path.join(dir, 'pki', 'apiserver.crt'), 'garbage');
    const second = await ensurePki(dir, { serverHosts: [] });
    expect(second.caCertPem).toBe(first.caCertPem);
    expect(second.adminCertPem).not.toBe(first.adminCertPem);
    expect(second.serverCertPem).not.toBe(first.serverCertPem);
    expect(chains(second.adminCertPem, second.caCertPem)).toBe(true);
    expect(new X509Certificate(second.adminCertPem).checkPrivateKey(createPrivateKey(second.adminKeyPem))).toBe(true);
  });

  it('reissues a leaf that expires within 30 days', async () => {
    const first = await ensurePki(dir, { serverHosts: [] });
    const caKey = await readFile(path.join(dir, 'pki', 'ca.key'), 'utf8');
    await forgeServing(first.caCertPem, caKey, new Date(Date.now() + 29 * 24 * 3600 * 1000));
    const forged = await readFile(path.join(dir, 'pki', 'apiserver.crt'), 'utf8');
    expect(chains(forged, first.caCertPem)).toBe(true);
    const second = await ensurePki(dir, { serverHosts: [] });
    expect(second.serverCertPem).not.toBe(forged);
    expect(second.caCertPem).toBe(first.caCertPem);

    // One that lasts longer than 30 days is kept.
    await forgeServing(first.caCertPem, caKey, new Date(Date.now() + 31 * 24 * 3600 * 1000));
    const kept = await readFile(path.join(dir, 'pki', 'apiserver.crt'), 'utf8');
    expect((await ensurePki(dir, { serverHosts: [] })).serverCertPem).toBe(kept);
  });

  it('reissues leaves that do not chain to the CA', async () => {
    const other = await mkdtemp(path.join(os.tmpdir(), 'capo-pki-other-'));
    try {
      const foreign = await ensurePki(other, { serverHosts: [] });
      const first = await ensurePki(dir, { serverHosts: [] });
      await writeFile(path.join(dir, 'pki', 'apiserver.crt'), foreign.serverCertPem);
      await writeFile(path.join(dir, 'pki', 'apiserver.key'), foreign.serverKeyPem);
      const second = await ensurePki(dir, { serverHosts: [] });
      expect(second.serverCertPem).not.toBe(foreign.serverCertPem);
      expect(chains(second.serverCertPem, first.caCertPem)).toBe(true);
      expect(second.adminCertPem).toBe(first.adminCertPem);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  it('replaces an unusable CA and everything it signed', async () => {
    const first = await ensurePki(dir, { serverHosts: [] });
    await writeFile(path.join(dir, 'pki', 'ca.key'), first.adminKeyPem);
    const second = await ensurePki(dir, { serverHosts: [] });
    expect(second.caCertPem).not.toBe(first.caCertPem);
    expect(second.serverCertPem).not.toBe(first.serverCertPem);
    expect(second.adminCertPem).not.toBe(first.adminCertPem);
    expect(chains(second.serverCertPem, second.caCertPem)).toBe(true);
    expect(chains(second.adminCertPem, second.caCertPem)).toBe(true);
  });
});

describe('identityFromCertificate', () => {
  const peer = (subject: Record<string, string | string[]>) => ({ subject }) as unknown as PeerCertificate;

  it('maps CN to the user and O to groups', () => {
    expect(identityFromCertificate(peer({ CN: 'admin', O: 'system:masters' }))).toStrictEqual({
      user: 'admin',
      groups: ['system:masters'],
    });
    expect(identityFromCertificate(peer({ CN: 'jane', O: ['dev', 'ops'] }))).toStrictEqual({
      user: 'jane',
      groups: ['dev', 'ops'],
    });
  });

  it('takes the last CN, as Go does, and tolerates missing fields', () => {
    expect(identityFromCertificate(peer({ CN: ['first', 'last'] }))).toStrictEqual({ user: 'last', groups: [] });
    expect(identityFromCertificate(peer({}))).toStrictEqual({ user: '', groups: [] });
    expect(identityFromCertificate({} as PeerCertificate)).toStrictEqual({ user: '', groups: [] });
  });
});

describe('TLS with the generated certificates', () => {
  function get(port: number, options: https.RequestOptions): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const request = https.request({ host: '127.0.0.1', port, path: '/who', agent: false, ...options }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      request.on('error', reject);
      request.end();
    });
  }

  let pki: Pki;
  beforeEach(async () => {
    pki = await ensurePki(dir, { serverHosts: [] });
  });

  it('authenticates the admin certificate as admin in system:masters', async () => {
    const server = await startHttpsFixture(pki);
    try {
      const response = await get(server.port, { ca: pki.caCertPem, cert: pki.adminCertPem, key: pki.adminKeyPem });
      expect(response.status).toBe(200);
      expect(server.seen).toStrictEqual([{ authorized: true, path: '/who', identity: { user: 'admin', groups: ['system:masters'] } }]);
    } finally {
      await server.close();
    }
  });

  it('verifies the serving certificate for every loopback name', async () => {
    const v4 = await startHttpsFixture(pki, '127.0.0.1');
    const v6 = await startHttpsFixture(pki, '::1');
    try {
      expect((await get(v4.port, { ca: pki.caCertPem, servername: 'localhost' })).status).toBe(200);
      expect((await get(v4.port, { ca: pki.caCertPem })).status).toBe(200);
      expect((await get(v6.port, { host: '::1', ca: pki.caCertPem })).status).toBe(200);
      await expect(get(v4.port, { ca: pki.caCertPem, servername: 'elsewhere.example' })).rejects.toThrow(/does not match certificate's altnames|altnames/);
      expect(v4.seen.every((entry) => entry.authorized === false && entry.identity === undefined)).toBe(true);
    } finally {
      await v4.close();
      await v6.close();
    }
  });

  it('does not authorize a client certificate from another CA', async () => {
    const otherDir = await mkdtemp(path.join(os.tmpdir(), 'capo-pki-other-'));
    const server = await startHttpsFixture(pki);
    try {
      const other = await ensurePki(otherDir, { serverHosts: [] });
      await get(server.port, { ca: pki.caCertPem, cert: other.adminCertPem, key: other.adminKeyPem });
      expect(server.seen).toHaveLength(1);
      expect(server.seen[0].authorized).toBe(false);
    } finally {
      await server.close();
      await rm(otherDir, { recursive: true, force: true });
    }
  });
});

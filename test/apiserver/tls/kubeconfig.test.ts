import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderKubeconfig } from '../../../src/apiserver/tls/kubeconfig.js';
import { ensurePki, type Pki } from '../../../src/apiserver/tls/pki.js';
import { startHttpsFixture, type HttpsFixture } from './https-fixture.js';

const kubectlBinary = '/usr/bin/kubectl';
const run = promisify(execFile);

let dir: string;
let pki: Pki;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'capo-kubeconfig-'));
  pki = await ensurePki(dir, { serverHosts: [] });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const b64 = (text: string) => Buffer.from(text).toString('base64');

async function kubeconfigFile(server: string, name?: string): Promise<string> {
  const file = path.join(dir, `kubeconfig-${name ?? 'default'}`);
  await writeFile(file, renderKubeconfig({ server, caCertPem: pki.caCertPem, clientCertPem: pki.adminCertPem, clientKeyPem: pki.adminKeyPem, name }), {
    mode: 0o600,
  });
  return file;
}

/** kubectl with a private HOME, so its caches and any user config stay out of the test. */
async function kubectl(args: string[]): Promise<string> {
  const { stdout } = await run(kubectlBinary, args, { env: { ...process.env, HOME: dir, KUBECONFIG: '' }, timeout: 30_000 });
  return stdout;
}

describe('renderKubeconfig', () => {
  it('embeds the credentials under one cluster, user and context', () => {
    const text = renderKubeconfig({
      server: 'https://127.0.0.1:6443',
      caCertPem: 'CA',
      clientCertPem: 'CERT',
      clientKeyPem: 'KEY',
    });
    expect(parse(text)).toStrictEqual({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'capo-apiserver', cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': b64('CA') } }],
      users: [{ name: 'capo-apiserver', user: { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') } }],
      contexts: [{ name: 'capo-apiserver', context: { cluster: 'capo-apiserver', user: 'capo-apiserver' } }],
      'current-context': 'capo-apiserver',
      preferences: {},
    });
  });

  it('keeps long base64 data on one line', () => {
    const text = renderKubeconfig({ server: 'https://h', caCertPem: pki.caCertPem, clientCertPem: 'c', clientKeyPem: 'k' });
    expect(text).toContain(`certificate-authority-data: ${b64(pki.caCertPem)}\n`);
  });
});

describe.skipIf(!existsSync(kubectlBinary))('kubectl reading the kubeconfig', () => {
  it('parses it and decodes the embedded data', async () => {
    const file = await kubeconfigFile('https://127.0.0.1:6443', 'capo-dev');
    const view = (jsonpath: string) => kubectl(['config', 'view', '--kubeconfig', file, '--raw', '-o', `jsonpath=${jsonpath}`]);
    expect(await view('{.current-context}')).toBe('capo-dev');
    expect(await view('{.clusters[0].name} {.clusters[0].cluster.server}')).toBe('capo-dev https://127.0.0.1:6443');
    expect(await view('{.contexts[0].context.cluster}/{.contexts[0].context.user}')).toBe('capo-dev/capo-dev');
    expect(await view("{.clusters[0].cluster['certificate-authority-data']}")).toBe(b64(pki.caCertPem));
    expect(await view("{.users[0].user['client-certificate-data']}")).toBe(b64(pki.adminCertPem));
    expect(await view("{.users[0].user['client-key-data']}")).toBe(b64(pki.adminKeyPem));
  });

  describe('against a server using the generated certificates', () => {
    let server: HttpsFixture;
    beforeAll(async () => {
      server = await startHttpsFixture(pki);
    });
    afterAll(async () => {
      await server?.close();
    });

    for (const host of ['127.0.0.1', 'localhost']) {
      it(`verifies the server as ${host} and presents the admin certificate`, async () => {
        const file = await kubeconfigFile(`https://${host}:${server.port}`);
        const body = JSON.parse(await kubectl(['--kubeconfig', file, 'get', '--raw', '/x']));
        expect(body).toStrictEqual({
          path: '/x',
          authorized: true,
          identity: { user: 'admin', groups: ['system:masters'] },
        });
      });
    }
  });
});

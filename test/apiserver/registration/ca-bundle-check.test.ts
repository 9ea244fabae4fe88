/** caBundleProblem: whether an APIService's caBundle lets kube-apiserver verify this server's certificate. */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caBundleProblem } from '../../../src/apiserver/registration/ca-bundle-check.js';
import { ensurePki, type Pki } from '../../../src/apiserver/tls/pki.js';

let dirs: string[];
let ours: Pki;
let other: Pki;

beforeAll(async () => {
  dirs = [await mkdtemp(path.join(os.tmpdir(), 'capo-ca-')), await mkdtemp(path.join(os.tmpdir(), 'capo-ca-'))];
  ours = await ensurePki(dirs[0]!, { serverHosts: ['127.0.0.1'] });
  other = await ensurePki(dirs[1]!, { serverHosts: ['127.0.0.1'] });
});

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('caBundleProblem', () => {
  it('accepts the CA that signed the serving certificate, alone or among others', () => {
    expect(caBundleProblem(ours.caCertPem, ours.serverCertPem)).toBeUndefined();
    expect(caBundleProblem(`${other.caCertPem}\n${ours.caCertPem}`, ours.serverCertPem)).toBeUndefined();
  });

  it('names the bundle and the certificate when another CA is given', () => {
    const problem = caBundleProblem(other.caCertPem, ours.serverCertPem);
    expect(problem).toMatch(/^spec\.caBundle \(.+\) did not sign this server's certificate \(.+, issued by .+\)$/);
  });

  it('says so when the bundle is empty or holds no certificate', () => {
    expect(caBundleProblem('', ours.serverCertPem)).toBe('spec.caBundle is empty and insecureSkipTLSVerify is not set');
    expect(caBundleProblem('-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----', ours.serverCertPem)).toBe(
      'spec.caBundle holds no PEM certificate',
    );
  });
});

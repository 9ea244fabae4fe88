/**
 * Every way the capo.openstack.inventory plugin can fail ends in one
 * AnsibleParserError that names the url and the clusters asked for, as
 * ansible-inventory prints it, and never in a traceback.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensurePki, type Pki } from '../../src/apiserver/tls/pki.js';
import { startGraphqlStub, type GraphqlStub } from './graphql-stub.js';
import { createAnsibleWorkspace, requireAnsible, type AnsibleWorkspace } from './workspace.js';

const plugin = 'capo.openstack.inventory';
const token = 'fixture-token';
const validInventory = {
  revision: '7',
  groups: [{ name: 'kube_node', hosts: ['w0'], children: [], vars: {} }],
  hosts: [{ name: 'w0', vars: { ansible_host: '10.0.0.5' } }],
};

let stub: GraphqlStub;
let tlsStub: GraphqlStub;
let pkiDir: string;
let pki: Pki;
let workspace: AnsibleWorkspace;
let caCertPath: string;
let configCount = 0;

beforeAll(async () => {
  await requireAnsible();
  pkiDir = await mkdtemp(path.join(os.tmpdir(), 'capo-ansible-pki-'));
  pki = await ensurePki(pkiDir, { serverHosts: ['127.0.0.1'] });
  caCertPath = path.join(pkiDir, 'pki', 'ca.crt');
  stub = await startGraphqlStub();
  tlsStub = await startGraphqlStub({ tls: { key: pki.serverKeyPem, cert: pki.serverCertPem } });
  workspace = await createAnsibleWorkspace();
});

afterAll(async () => {
  await stub?.close();
  await tlsStub?.close();
  await workspace?.close();
  await rm(pkiDir, { recursive: true, force: true });
});

beforeEach(() => {
  for (const server of [stub, tlsStub]) {
    server.requests.length = 0;
    server.reply = () => ({ body: { data: { inventory: validInventory } } });
  }
});

async function writeCase(config: Record<string, unknown>): Promise<string> {
  return workspace.writeConfig(`case${++configCount}.capo.yml`, { plugin, ...config });
}

/** Runs --list on a configuration that must fail, and returns the one message the plugin gave. */
async function failure(config: Record<string, unknown>, env: Record<string, string | undefined> = {}): Promise<string> {
  const file = await writeCase(config);
  const result = await workspace.inventory(['-i', file, '--list'], env);
  expect(result.code).not.toBe(0);
  expect(result.stdout).toBe('');
  expect(result.messages).not.toContain('Traceback');
  const prefix = `Failed to parse ${file} with auto plugin: `;
  expect(result.messages).toContain(prefix);
  expect(result.messages.split(prefix)).toHaveLength(2);
  // What follows is the next warning, from the yaml plugin that tries the file after ours.
  return result.messages.split(prefix)[1]!.split(' [WARNING]: ')[0]!;
}

describe('connection failures', () => {
  it('names an unreachable server', async () => {
    const stopped = await startGraphqlStub();
    await stopped.close();
    const url = stopped.url;
    expect(await failure({ url, token, namespace: 'team-a', cluster: 'c1' })).toBe(
      `capo.openstack.inventory: inventory from ${url} (cluster team-a/c1): cannot reach the server: Connection refused`,
    );
  });

  it('gives up after the timeout', async () => {
    stub.reply = () => null;
    expect(await failure({ url: stub.url, token, cluster: 'c1', timeout: 1 })).toBe(
      `capo.openstack.inventory: inventory from ${stub.url} (cluster c1): the server did not answer within 1s (timeout)`,
    );
  });

  it('names a TLS failure against a CA it does not know, and works with ca_cert or validate_certs off', async () => {
    expect(await failure({ url: tlsStub.url, token, label_selector: 'env=prod' })).toBe(
      `capo.openstack.inventory: inventory from ${tlsStub.url} (label selector env=prod): TLS failure: unable to get local issuer certificate; set ca_cert to the CA that signed the server certificate`,
    );
    expect(tlsStub.requests).toHaveLength(0);
    for (const settings of [{ ca_cert: caCertPath }, { validate_certs: false }]) {
      const file = await writeCase({ url: tlsStub.url, token, ...settings });
      const result = await workspace.inventory(['-i', file, '--list']);
      expect(result.stderr).toBe('');
      expect(JSON.parse(result.stdout).kube_node).toEqual({ hosts: ['w0'] });
    }
    expect(tlsStub.requests).toHaveLength(2);
  });

  it('names a ca_cert that is missing or not a certificate', async () => {
    const missing = path.join(workspace.dir, 'missing-ca.crt');
    expect(await failure({ url: tlsStub.url, token, ca_cert: missing })).toBe(
      `capo.openstack.inventory: inventory from ${tlsStub.url} (all clusters): cannot read ca_cert ${missing}: No such file or directory`,
    );
    const garbage = path.join(workspace.dir, 'garbage.crt');
    await writeFile(garbage, 'not a certificate\n');
    expect(await failure({ url: tlsStub.url, token, ca_cert: garbage })).toBe(
      `capo.openstack.inventory: inventory from ${tlsStub.url} (all clusters): ca_cert ${garbage} holds no PEM certificate: NO_CERTIFICATE_OR_CRL_FOUND`,
    );
  });

  it('refuses to follow a redirect, which would resend the token', async () => {
    stub.reply = () => ({ status: 307, headers: { Location: 'https://elsewhere.example/graphql' }, body: '' });
    expect(await failure({ url: stub.url, token, namespace: 'team-a' })).toBe(
      `capo.openstack.inventory: inventory from ${stub.url} (namespace team-a): the server redirects to https://elsewhere.example/graphql; set url to that address`,
    );
  });
});

describe('HTTP and GraphQL errors', () => {
  const status = (code: number, reason: string, message: string) => ({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
  });

  it('reads HTTP 401 as a rejected token', async () => {
    stub.reply = () => ({ status: 401, body: status(401, 'Unauthorized', 'Unauthorized') });
    expect(await failure({ url: stub.url, token, cluster: 'c1' })).toBe(
      `capo.openstack.inventory: inventory from ${stub.url} (cluster c1): HTTP 401 Unauthorized: the server rejected the token; check token, token_file, CAPO_TOKEN or CAPO_TOKEN_FILE`,
    );
  });

  it("reads HTTP 403 as a user without access, with the server's message", async () => {
    stub.reply = () => ({ status: 403, body: status(403, 'Forbidden', 'forbidden: User "alice" cannot post path "/graphql"') });
    expect(await failure({ url: stub.url, token, cluster: 'c1' })).toBe(
      `capo.openstack.inventory: inventory from ${stub.url} (cluster c1): HTTP 403 Forbidden: the token's user may not read this inventory (forbidden: User "alice" cannot post path "/graphql")`,
    );
  });

  it.each([
    [
      'UNAUTHENTICATED',
      200,
      'invalid bearer token',
      'the server rejected the token; check token, token_file, CAPO_TOKEN or CAPO_TOKEN_FILE (UNAUTHENTICATED: invalid bearer token)',
    ],
    [
      'FORBIDDEN',
      200,
      'User "alice" cannot list openstackclusters in namespace "team-b"',
      'the token\'s user may not read this inventory (FORBIDDEN: User "alice" cannot list openstackclusters in namespace "team-b")',
    ],
    ['NOT_FOUND', 200, 'cluster "team-b/c9" not found', 'not found; check namespace and cluster (NOT_FOUND: cluster "team-b/c9" not found)'],
    [
      'BAD_USER_INPUT',
      400,
      "unable to parse requirement: found '=', expected: identifier",
      "the server rejected the request; check namespace, cluster and label_selector (BAD_USER_INPUT: unable to parse requirement: found '=', expected: identifier)",
    ],
  ])('explains GraphQL error %s', async (code, httpStatus, message, explained) => {
    stub.reply = () => ({ status: httpStatus, body: { errors: [{ message, extensions: { code } }], data: null } });
    expect(await failure({ url: stub.url, token, namespace: 'team-b', cluster: 'c9' })).toBe(
      `capo.openstack.inventory: inventory from ${stub.url} (cluster team-b/c9): ${explained}`,
    );
  });

  it('passes on other GraphQL errors with their code and every message', async () => {
    stub.reply = () => ({ body: { errors: [{ message: 'storage unavailable', extensions: { code: 'INTERNAL_SERVER_ERROR' } }, { message: 'try again' }] } });
    expect(await failure({ url: stub.url, token })).toBe(
      `capo.openstack.inventory: inventory from ${stub.url} (all clusters): GraphQL error INTERNAL_SERVER_ERROR: storage unavailable; try again`,
    );
  });

  it('names other HTTP failures with their body', async () => {
    stub.reply = () => ({ status: 502, headers: { 'Content-Type': 'text/plain' }, body: 'upstream down' });
    expect(await failure({ url: stub.url, token })).toBe(
      `capo.openstack.inventory: inventory from ${stub.url} (all clusters): HTTP 502 Bad Gateway: upstream down`,
    );
  });
});

describe('answers that cannot be used', () => {
  it.each([
    ['not JSON', '<html>oops</html>', 'the answer is not a JSON object: <html>oops</html>'],
    ['without data', { data: { inventory: null } }, 'the answer has no data.inventory: {"data":{"inventory":null}}'],
    [
      'with groups that are not a list',
      { data: { inventory: { revision: '1', groups: {}, hosts: [] } } },
      'unexpected inventory from the server: inventory.groups must be a list',
    ],
    [
      'with a nameless group',
      { data: { inventory: { revision: '1', groups: [{ hosts: [] }], hosts: [] } } },
      'unexpected inventory from the server: groups[0] must be an object with a name',
    ],
    [
      'with host names that are not strings',
      { data: { inventory: { revision: '1', groups: [{ name: 'g', hosts: [1] }], hosts: [] } } },
      'unexpected inventory from the server: groups[0].hosts must be a list of names',
    ],
    [
      'with host vars that are not an object',
      { data: { inventory: { revision: '1', groups: [], hosts: [{ name: 'h', vars: [] }] } } },
      'unexpected inventory from the server: hosts[0].vars must be an object',
    ],
    // Hostile answers: shapes a broken or impersonated server sends to crash the plugin.
    ['that is not UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]).toString('latin1'), 'the answer is not a JSON object: {\u00ff\u00fe}'],
    ['with errors that are not a list', { errors: { message: 'x' } }, 'the answer has an errors field that is not a list: {"errors":{"message":"x"}}'],
    ['that is a JSON array', [{ data: {} }], 'the answer is not a JSON object: [{"data":{}}]'],
    [
      'with hosts that are not a list',
      { data: { inventory: { revision: '1', groups: [], hosts: 'all' } } },
      'unexpected inventory from the server: inventory.hosts must be a list',
    ],
  ])('names an answer %s', async (_what, body, message) => {
    stub.reply = () => ({ body });
    expect(await failure({ url: stub.url, token })).toBe(`capo.openstack.inventory: inventory from ${stub.url} (all clusters): ${message}`);
  });

  it('names an answer nested deeper than Python parses, without a traceback', async () => {
    stub.reply = () => ({ body: `${'['.repeat(100_000)}${']'.repeat(100_000)}` });
    // Ansible wraps long words of its message: only the start is compared.
    expect(await failure({ url: stub.url, token })).toMatch(/\(all clusters\): the answer is not a JSON object: \[\[\[/);
  });

  it('stops reading an answer larger than any inventory', async () => {
    stub.reply = () => ({ body: `{"data":"${'x'.repeat(65 * 1024 * 1024)}"}` });
    expect(await failure({ url: stub.url, token })).toBe(
      `capo.openstack.inventory: inventory from ${stub.url} (all clusters): the answer is larger than 67108864 bytes; no inventory is that large`,
    );
  });

  it('names groups that contain each other', async () => {
    stub.reply = () => ({
      body: {
        data: {
          inventory: {
            revision: '1',
            groups: [
              { name: 'a', children: ['b'] },
              { name: 'b', children: ['a'] },
            ],
            hosts: [],
          },
        },
      },
    });
    expect(await failure({ url: stub.url, token })).toBe(
      `capo.openstack.inventory: inventory from ${stub.url} (all clusters): the inventory from the server cannot be used: Adding group 'a' as child to 'b' creates a recursive dependency loop.`,
    );
  });
});

describe('settings', () => {
  it('needs a url', async () => {
    const file = await writeCase({ token });
    const result = await workspace.inventory(['-i', file, '--list']);
    expect(result.code).not.toBe(0);
    expect(result.messages).toContain(`with auto plugin: capo.openstack.inventory: url is not set; set url or kubeconfig in ${file}, or CAPO_GRAPHQL_URL`);
  });

  it('needs an http or https url', async () => {
    expect(await failure({ url: 'ftp://127.0.0.1/graphql', token })).toBe(
      'capo.openstack.inventory: url ftp://127.0.0.1/graphql must start with https:// or http://',
    );
  });

  it('needs a token', async () => {
    const file = await writeCase({ url: stub.url, namespace: 'team-a' });
    const result = await workspace.inventory(['-i', file, '--list']);
    expect(result.messages).toContain(
      `with auto plugin: capo.openstack.inventory: inventory from ${stub.url} (namespace team-a): no token; set token or token_file in ${file}, or CAPO_TOKEN or CAPO_TOKEN_FILE`,
    );
    expect(stub.requests).toHaveLength(0);
  });

  it('names a token file that is missing or empty', async () => {
    const missing = path.join(workspace.dir, 'no-token');
    expect(await failure({ url: stub.url, token_file: missing })).toBe(
      `capo.openstack.inventory: inventory from ${stub.url} (all clusters): cannot read token_file ${missing}: No such file or directory`,
    );
    const empty = path.join(workspace.dir, 'empty-token');
    await writeFile(empty, '\n');
    expect(await failure({ url: stub.url }, { CAPO_TOKEN_FILE: empty })).toBe(
      `capo.openstack.inventory: inventory from ${stub.url} (all clusters): token_file ${empty} is empty`,
    );
    expect(stub.requests).toHaveLength(0);
  });

  it('refuses a token of several words or lines without showing it', async () => {
    const twoLines = path.join(workspace.dir, 'two-line-token');
    await writeFile(twoLines, 'first-secret\nsecond-secret\n');
    const message = await failure({ url: stub.url, token_file: twoLines });
    expect(message).toBe(
      `capo.openstack.inventory: inventory from ${stub.url} (all clusters): token_file ${twoLines} holds more than one word or line; a bearer token is a single word`,
    );
    expect(await failure({ url: stub.url }, { CAPO_TOKEN: 'secret with spaces' })).toBe(
      `capo.openstack.inventory: inventory from ${stub.url} (all clusters): token holds more than one word or line; a bearer token is a single word`,
    );
    expect(stub.requests).toHaveLength(0);
  });

  it('needs a positive timeout', async () => {
    expect(await failure({ url: stub.url, token, timeout: 0 })).toBe('capo.openstack.inventory: timeout must be a positive number of seconds, got 0');
  });
});

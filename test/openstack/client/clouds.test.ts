import { describe, expect, it } from 'vitest';
import { loadCloud, OpenStackError } from '../../../src/openstack/index.js';

const full = `
clouds:
  prod:
    auth:
      auth_url: https://keystone.example:5000
      username: alice
      password: 0x1e5
      project_id: 012345
      user_domain_name: Users
    region_name: RegionTwo
    interface: internal
    identity_api_version: 3
    verify: true
    cacert: /etc/ssl/cloud.pem
  appcred:
    auth_type: v3applicationcredential
    auth:
      auth_url: https://keystone.example/identity/v3/
      application_credential_id: ac-1
      application_credential_secret: shh
`;

function failure(input: Parameters<typeof loadCloud>[0]): OpenStackError {
  try {
    loadCloud(input);
  } catch (error) {
    expect(error).toBeInstanceOf(OpenStackError);
    const typed = error as OpenStackError;
    expect(typed.kind).toBe('Config');
    expect(typed.message).not.toContain('\n');
    return typed;
  }
  throw new Error('loadCloud accepted the input');
}

describe('loadCloud', () => {
  it('reads a password cloud, keeping scalars exactly as written', () => {
    expect(loadCloud({ cloudsYaml: full, cloudName: 'prod' })).toEqual({
      name: 'prod',
      authUrl: 'https://keystone.example:5000/v3',
      auth: {
        method: 'password',
        user: { name: 'alice', domain: { name: 'Users' } },
        password: '0x1e5',
        project: { id: '012345' },
      },
      region: 'RegionTwo',
      interface: 'internal',
      verify: true,
      caCertPath: '/etc/ssl/cloud.pem',
    });
  });

  it('reads an application credential cloud with defaults', () => {
    expect(loadCloud({ cloudsYaml: full, cloudName: 'appcred', caCert: 'PEM' })).toEqual({
      name: 'appcred',
      authUrl: 'https://keystone.example/identity/v3',
      auth: { method: 'application_credential', credential: { id: 'ac-1' }, secret: 'shh' },
      interface: 'public',
      verify: true,
      caCert: 'PEM',
    });
  });

  it('lets domain_name stand in for the user and project domains', () => {
    const yaml =
      'clouds:\n  c:\n    auth:\n      auth_url: http://k\n      username: u\n      password: p\n      project_name: demo\n      domain_name: Default\n';
    const cloud = loadCloud({ cloudsYaml: yaml, cloudName: 'c' });
    expect(cloud.auth).toEqual({
      method: 'password',
      user: { name: 'u', domain: { name: 'Default' } },
      password: 'p',
      project: { name: 'demo', domain: { name: 'Default' } },
    });
  });

  it('takes the identityRef region over region_name, and verify: false', () => {
    const yaml = 'clouds:\n  c:\n    auth: {auth_url: "http://k/v3", user_id: u1, password: p, project_id: p1}\n    region_name: A\n    verify: false\n';
    const cloud = loadCloud({ cloudsYaml: yaml, cloudName: 'c', region: 'B' });
    expect(cloud.region).toBe('B');
    expect(cloud.verify).toBe(false);
    expect(cloud.auth).toMatchObject({ user: { id: 'u1' }, project: { id: 'p1' } });
  });

  it('accepts an application credential by name with its user', () => {
    const yaml =
      'clouds:\n  c:\n    auth_type: v3applicationcredential\n    auth:\n      auth_url: http://k\n      application_credential_name: capi\n      application_credential_secret: s\n      username: u\n      user_domain_id: default\n';
    expect(loadCloud({ cloudsYaml: yaml, cloudName: 'c' }).auth).toEqual({
      method: 'application_credential',
      credential: { name: 'capi', user: { name: 'u', domain: { id: 'default' } } },
      secret: 's',
    });
  });

  describe('errors name their cause on one line', () => {
    it('malformed YAML, with the line, without echoing content', () => {
      const error = failure({ cloudsYaml: 'clouds:\n  c:\n    auth: {password: hunter2\n', cloudName: 'c' });
      expect(error.message).toMatch(/^clouds\.yaml is not valid YAML at line \d+, column \d+: /);
      expect(error.message).not.toContain('hunter2');
    });

    it('duplicate keys', () => {
      expect(failure({ cloudsYaml: 'clouds:\n  a: {}\n  a: {}\n', cloudName: 'a' }).message).toMatch(
        /not valid YAML at line 3, column 3: Map keys must be unique/,
      );
    });

    it('missing clouds key', () => {
      expect(failure({ cloudsYaml: 'other: 1\n', cloudName: 'c' }).message).toBe('clouds.yaml has no top-level "clouds" map');
      expect(failure({ cloudsYaml: '', cloudName: 'c' }).message).toBe('clouds.yaml has no top-level "clouds" map');
    });

    it('unknown cloud name, listing the available ones', () => {
      expect(failure({ cloudsYaml: full, cloudName: 'staging' }).message).toBe('cloud "staging" is not in clouds.yaml; available: prod, appcred');
      expect(failure({ cloudsYaml: 'clouds: {}\n', cloudName: 'x' }).message).toBe('cloud "x" is not in clouds.yaml; the file defines no clouds');
    });

    it('a field of the wrong shape', () => {
      expect(failure({ cloudsYaml: 'clouds:\n  c:\n    auth: nope\n', cloudName: 'c' }).message).toBe('cloud "c" in clouds.yaml: auth must be a map');
      expect(failure({ cloudsYaml: 'clouds:\n  c:\n    region_name: [a]\n', cloudName: 'c' }).message).toBe(
        'cloud "c" in clouds.yaml: region_name must be a string',
      );
    });

    const base = { auth_url: 'http://k', username: 'u', password: 'p', project_name: 'demo', user_domain_name: 'D', project_domain_name: 'D' };
    const yamlWith = (auth: Record<string, string | undefined>, extra = '') =>
      `clouds:\n  c:\n${extra}    auth:\n${Object.entries(auth)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `      ${k}: ${v}\n`)
        .join('')}`;
    const message = (auth: Record<string, string | undefined>, extra = '') => failure({ cloudsYaml: yamlWith(auth, extra), cloudName: 'c' }).message;

    it('missing auth fields', () => {
      expect(message({ ...base, auth_url: undefined })).toBe('cloud "c" in clouds.yaml: auth.auth_url is required');
      expect(message({ ...base, username: undefined })).toBe('cloud "c" in clouds.yaml: auth.username or auth.user_id is required');
      expect(message({ ...base, username: undefined, application_credential_secret: 's' })).toContain('set auth_type: v3applicationcredential');
      expect(message({ ...base, password: undefined })).toBe('cloud "c" in clouds.yaml: auth.password is required');
      expect(message({ ...base, password: "''" })).toBe('cloud "c" in clouds.yaml: auth.password is required');
      expect(message({ ...base, project_name: undefined })).toBe('cloud "c" in clouds.yaml: auth.project_name or auth.project_id is required');
      expect(message({ ...base, user_domain_name: undefined })).toBe(
        'cloud "c" in clouds.yaml: auth.user_domain_name or auth.user_domain_id (or domain_name/domain_id) is required with username',
      );
      expect(message({ ...base, project_domain_name: undefined })).toBe(
        'cloud "c" in clouds.yaml: auth.project_domain_name or auth.project_domain_id (or domain_name/domain_id) is required with project_name',
      );
      const appCred = '    auth_type: v3applicationcredential\n';
      expect(message({ auth_url: 'http://k', application_credential_id: 'a' }, appCred)).toBe(
        'cloud "c" in clouds.yaml: auth.application_credential_secret is required for v3applicationcredential',
      );
      expect(message({ auth_url: 'http://k', application_credential_secret: 's' }, appCred)).toBe(
        'cloud "c" in clouds.yaml: auth.application_credential_id or auth.application_credential_name is required for v3applicationcredential',
      );
      expect(message({ auth_url: 'http://k', application_credential_name: 'n', application_credential_secret: 's' }, appCred)).toBe(
        'cloud "c" in clouds.yaml: auth.username or auth.user_id is required with application_credential_name',
      );
    });

    it('unsupported auth type, identity version, interface and verify', () => {
      expect(message(base, '    auth_type: v3token\n')).toBe(
        'cloud "c" in clouds.yaml: auth_type "v3token" is not supported; use one of password, v3password, v3applicationcredential',
      );
      expect(message(base, '    identity_api_version: 2\n')).toBe('cloud "c" in clouds.yaml: identity_api_version "2" is not supported; only Keystone v3 is');
      expect(message(base, '    interface: publicURL\n')).toBe('cloud "c" in clouds.yaml: interface "publicURL" is not one of public, internal, admin');
      expect(message(base, '    verify: maybe\n')).toBe('cloud "c" in clouds.yaml: verify must be true or false, got "maybe"');
    });

    it('bad auth URLs', () => {
      expect(message({ ...base, auth_url: 'keystone:5000' })).toBe('cloud "c" in clouds.yaml: auth.auth_url must be http or https');
      expect(message({ ...base, auth_url: 'not a url' })).toBe('cloud "c" in clouds.yaml: auth.auth_url "not a url" is not a URL');
      expect(message({ ...base, auth_url: 'http://k:5000/v2.0' })).toBe(
        'cloud "c" in clouds.yaml: auth.auth_url points at Keystone v2.0; only v3 is supported',
      );
    });
  });
});

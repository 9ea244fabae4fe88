/**
 * clouds.yaml (the os-client-config format CAPO identities carry) reduced to
 * what a Keystone v3 session needs. Only the explicit file content counts:
 * unlike the CLI tools we never read OS_* environment variables or files on
 * disk here, because one process serves many tenants' identities.
 */
import YAML from 'yaml';
import { z } from 'zod';
import { OpenStackError } from './errors.js';

export type EndpointInterface = 'public' | 'internal' | 'admin';

/** Keystone accepts a domain by id or by name. */
export type DomainRef = { id: string } | { name: string };

export type UserRef = { id: string } | { name: string; domain: DomainRef };

export type ProjectRef = { id: string } | { name: string; domain: DomainRef };

export interface PasswordAuth {
  method: 'password';
  user: UserRef;
  password: string;
  /** Tokens are always project-scoped: CAPO's resources live in a project and the catalog comes with the scope. */
  project: ProjectRef;
}

export interface ApplicationCredentialAuth {
  method: 'application_credential';
  /** A credential by name is only unique per user, hence the user. */
  credential: { id: string } | { name: string; user: UserRef };
  secret: string;
}

export interface CloudConfig {
  /** The entry's key under `clouds`. */
  name: string;
  /** Keystone v3 root, e.g. `https://keystone.example:5000/v3` (normalised to end in `/v3`). */
  authUrl: string;
  auth: PasswordAuth | ApplicationCredentialAuth;
  region?: string;
  interface: EndpointInterface;
  /** false turns TLS verification off (clouds.yaml `verify: false`). */
  verify: boolean;
  /** PEM bundle to trust, from the identity secret's `cacert` key. */
  caCert?: string;
  /** clouds.yaml `cacert`: a file path, read when the session is created; `caCert` wins when both are set. */
  caCertPath?: string;
}

export interface LoadCloudInput {
  cloudsYaml: string;
  cloudName: string;
  /** PEM data from the identity secret's `cacert` key. */
  caCert?: string;
  /** `identityRef.region`, which overrides the file's `region_name`. */
  region?: string;
}

/**
 * Parsed with YAML's failsafe schema, so every scalar stays the string the
 * user wrote: a password like `0x1e5` or a project id of digits must not be
 * turned into a number and back.
 */
const text = z.string();

const authSchema = z.object({
  auth_url: text.optional(),
  username: text.optional(),
  user_id: text.optional(),
  password: text.optional(),
  project_name: text.optional(),
  project_id: text.optional(),
  project_domain_name: text.optional(),
  project_domain_id: text.optional(),
  user_domain_name: text.optional(),
  user_domain_id: text.optional(),
  domain_name: text.optional(),
  domain_id: text.optional(),
  application_credential_id: text.optional(),
  application_credential_name: text.optional(),
  application_credential_secret: text.optional(),
});

type RawAuth = z.infer<typeof authSchema>;

const cloudSchema = z.object({
  auth: authSchema.optional(),
  auth_type: text.optional(),
  region_name: text.optional(),
  interface: text.optional(),
  identity_api_version: text.optional(),
  verify: text.optional(),
  cacert: text.optional(),
});

const fileSchema = z.object({ clouds: z.record(z.string(), z.unknown()) });

const supportedAuthTypes = ['password', 'v3password', 'v3applicationcredential'] as const;
const interfaces: readonly EndpointInterface[] = ['public', 'internal', 'admin'];

export function loadCloud(input: LoadCloudInput): CloudConfig {
  const document = YAML.parseDocument(input.cloudsYaml, { schema: 'failsafe', uniqueKeys: true });
  if (document.errors.length > 0) {
    const error = document.errors[0];
    const position = error.linePos?.[0];
    const where = position === undefined ? '' : ` at line ${position.line}, column ${position.col}`;
    // The library's message ends in a source excerpt, which could show a password.
    const reason = error.message.replace(/ at line \d+, column \d+:[\s\S]*$/, '');
    throw configError(`clouds.yaml is not valid YAML${where}: ${reason}`);
  }
  const file = fileSchema.safeParse(document.toJS());
  if (!file.success) throw configError('clouds.yaml has no top-level "clouds" map');

  const clouds = file.data.clouds;
  if (!Object.hasOwn(clouds, input.cloudName)) {
    const names = Object.keys(clouds);
    const available = names.length === 0 ? 'the file defines no clouds' : `available: ${names.join(', ')}`;
    throw configError(`cloud "${input.cloudName}" is not in clouds.yaml; ${available}`);
  }
  const where = `cloud "${input.cloudName}" in clouds.yaml`;
  const parsed = cloudSchema.safeParse(clouds[input.cloudName]);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue.path.map(String).join('.');
    const expected = issue.code === 'invalid_type' && issue.expected === 'object' ? 'a map' : 'a string';
    throw configError(`${where}: ${path === '' ? 'the entry' : path} must be ${expected}`);
  }
  const cloud = blanksRemoved(parsed.data);
  const raw = blanksRemoved(cloud.auth ?? {});

  const authType = cloud.auth_type ?? 'password';
  if (!(supportedAuthTypes as readonly string[]).includes(authType)) {
    throw configError(`${where}: auth_type "${authType}" is not supported; use one of ${supportedAuthTypes.join(', ')}`);
  }
  const version = cloud.identity_api_version;
  if (version !== undefined && !/^v?3(\.\d+)?$/.test(version)) {
    throw configError(`${where}: identity_api_version "${version}" is not supported; only Keystone v3 is`);
  }
  const endpointInterface = cloud.interface ?? 'public';
  if (!(interfaces as readonly string[]).includes(endpointInterface)) {
    throw configError(`${where}: interface "${endpointInterface}" is not one of ${interfaces.join(', ')}`);
  }
  const verify = parseBoolean(cloud.verify ?? 'true');
  if (verify === undefined) throw configError(`${where}: verify must be true or false, got "${cloud.verify}"`);
  if (raw.auth_url === undefined) throw configError(`${where}: auth.auth_url is required`);

  const region = input.region !== undefined && input.region !== '' ? input.region : cloud.region_name;
  const caCert = input.caCert !== undefined && input.caCert.trim() !== '' ? input.caCert : undefined;
  return {
    name: input.cloudName,
    authUrl: keystoneV3Url(raw.auth_url, where),
    auth: authType === 'v3applicationcredential' ? applicationCredentialAuth(raw, where) : passwordAuth(raw, where),
    ...(region === undefined ? {} : { region }),
    interface: endpointInterface as EndpointInterface,
    verify,
    ...(caCert === undefined ? {} : { caCert }),
    ...(cloud.cacert === undefined ? {} : { caCertPath: cloud.cacert }),
  };
}

function passwordAuth(raw: RawAuth, where: string): PasswordAuth {
  if (raw.username === undefined && raw.user_id === undefined) {
    const hint = raw.application_credential_secret === undefined ? '' : ' (for an application credential set auth_type: v3applicationcredential)';
    throw configError(`${where}: auth.username or auth.user_id is required${hint}`);
  }
  if (raw.password === undefined) throw configError(`${where}: auth.password is required`);
  return { method: 'password', user: userRef(raw, where), password: raw.password, project: projectRef(raw, where) };
}

function applicationCredentialAuth(raw: RawAuth, where: string): ApplicationCredentialAuth {
  if (raw.application_credential_secret === undefined) {
    throw configError(`${where}: auth.application_credential_secret is required for v3applicationcredential`);
  }
  if (raw.application_credential_id !== undefined) {
    return { method: 'application_credential', credential: { id: raw.application_credential_id }, secret: raw.application_credential_secret };
  }
  if (raw.application_credential_name === undefined) {
    throw configError(`${where}: auth.application_credential_id or auth.application_credential_name is required for v3applicationcredential`);
  }
  if (raw.username === undefined && raw.user_id === undefined) {
    throw configError(`${where}: auth.username or auth.user_id is required with application_credential_name`);
  }
  return {
    method: 'application_credential',
    credential: { name: raw.application_credential_name, user: userRef(raw, where) },
    secret: raw.application_credential_secret,
  };
}

function userRef(raw: RawAuth, where: string): UserRef {
  if (raw.user_id !== undefined) return { id: raw.user_id };
  const domain = domainRef(raw.user_domain_id, raw.user_domain_name, raw);
  if (domain === undefined) throw configError(`${where}: auth.user_domain_name or auth.user_domain_id (or domain_name/domain_id) is required with username`);
  return { name: raw.username ?? '', domain };
}

function projectRef(raw: RawAuth, where: string): ProjectRef {
  if (raw.project_id !== undefined) return { id: raw.project_id };
  if (raw.project_name === undefined) throw configError(`${where}: auth.project_name or auth.project_id is required`);
  const domain = domainRef(raw.project_domain_id, raw.project_domain_name, raw);
  if (domain === undefined) {
    throw configError(`${where}: auth.project_domain_name or auth.project_domain_id (or domain_name/domain_id) is required with project_name`);
  }
  return { name: raw.project_name, domain };
}

/** As in os-client-config, `domain_id`/`domain_name` stand in for both the user's and the project's domain. */
function domainRef(id: string | undefined, name: string | undefined, raw: RawAuth): DomainRef | undefined {
  if (id !== undefined) return { id };
  if (name !== undefined) return { name };
  if (raw.domain_id !== undefined) return { id: raw.domain_id };
  if (raw.domain_name !== undefined) return { name: raw.domain_name };
  return undefined;
}

/** Users write the auth URL with or without `/v3`; tokens are always issued under `/v3`. */
function keystoneV3Url(authUrl: string, where: string): string {
  let url: URL;
  try {
    url = new URL(authUrl);
  } catch {
    throw configError(`${where}: auth.auth_url "${authUrl}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw configError(`${where}: auth.auth_url must be http or https`);
  if (url.username !== '' || url.password !== '') throw configError(`${where}: auth.auth_url must not carry credentials`);
  const path = url.pathname.replace(/\/+$/, '');
  if (/\/v2(\.0)?$/.test(path)) throw configError(`${where}: auth.auth_url points at Keystone v2.0; only v3 is supported`);
  url.pathname = /\/v3$/.test(path) ? path : `${path}/v3`;
  url.search = '';
  url.hash = '';
  return url.toString();
}

function parseBoolean(value: string): boolean | undefined {
  const lower = value.toLowerCase();
  if (['true', 'yes', 'on'].includes(lower)) return true;
  if (['false', 'no', 'off'].includes(lower)) return false;
  return undefined;
}

/** An empty value (`region_name:`) means unset, as it does for the OpenStack CLI. */
function blanksRemoved<T extends Record<string, unknown>>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== '')) as T;
}

function configError(detail: string): OpenStackError {
  return new OpenStackError({ kind: 'Config', detail });
}

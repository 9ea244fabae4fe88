/**
 * Delegated authentication settings, as k8s.io/apiserver's DelegatingAuthenticationOptions resolve
 * them: the client CA and the front-proxy (requestheader) settings come from flags when given, else
 * from the `kube-system/extension-apiserver-authentication` ConfigMap kube-apiserver publishes,
 * watched so that a rotated CA takes effect without a restart. Until the ConfigMap has been read
 * (it may be missing or unreadable, RBAC not yet granted) the flags alone are in force and the
 * `extension-apiserver-authentication` readiness check fails with the reason; once read, its
 * settings stay in force while kube-apiserver is out of reach (the check fails meanwhile).
 */
import { readFile } from 'node:fs/promises';
import { CoreV1Api, type KubeConfig, type V1ConfigMap, Watch } from '@kubernetes/client-node';
import { z } from 'zod';
import type { AuthenticationConfig, CertificateAuthorities, TokenAuthenticator } from '../authenticator.js';
import { defaultRequestHeaderNames, type RequestHeaderConfig } from '../request-header.js';
import { parsePemBundle } from '../x509-chain.js';

export const authenticationConfigMap = { namespace: 'kube-system', name: 'extension-apiserver-authentication' };

/** The flags of k8s.io/apiserver's delegated authentication; each one given overrides the ConfigMap. */
export interface DelegatedAuthenticationFlags {
  clientCaFile?: string;
  requestHeaderClientCaFile?: string;
  requestHeaderAllowedNames?: string[];
  requestHeaderUsernameHeaders?: string[];
  requestHeaderUidHeaders?: string[];
  requestHeaderGroupHeaders?: string[];
  requestHeaderExtraHeadersPrefix?: string[];
  /** Do not read the ConfigMap: the flags are all there is. */
  skipLookup?: boolean;
}

/** The ConfigMap's keys: PEM bundles, and JSON arrays of strings. */
const stringList = z.string().transform((text, context) => {
  const parsed = z.array(z.string()).safeParse(safeJson(text));
  if (!parsed.success) {
    context.addIssue({ code: 'custom', message: 'not a JSON array of strings' });
    return z.NEVER;
  }
  return parsed.data;
});
const configMapData = z.object({
  'client-ca-file': z.string().optional(),
  'requestheader-client-ca-file': z.string().optional(),
  'requestheader-allowed-names': stringList.optional(),
  'requestheader-username-headers': stringList.optional(),
  'requestheader-uid-headers': stringList.optional(),
  'requestheader-group-headers': stringList.optional(),
  'requestheader-extra-headers-prefix': stringList.optional(),
});
type ConfigMapData = z.infer<typeof configMapData>;

interface FlagFiles {
  clientCa?: string;
  requestHeaderClientCa?: string;
}

export class DelegatedAuthentication implements AuthenticationConfig {
  private authorities: CertificateAuthorities;
  private readonly listeners: (() => void)[] = [];
  private problem: string | undefined;
  /** When the ConfigMap was last applied (undefined: never). */
  private readAt: string | undefined;
  private watch: AbortController | undefined;
  private stopped = false;

  private constructor(
    private readonly flags: DelegatedAuthenticationFlags,
    private readonly files: FlagFiles,
    readonly tokens: TokenAuthenticator | undefined,
  ) {
    this.authorities = resolve(flags, files, undefined);
  }

  /**
   * Reads the CA files given as flags, then (unless skipLookup) the ConfigMap, and keeps watching it.
   * A CA file that cannot be read is a startup error; a ConfigMap that cannot be read is not.
   */
  static async start(flags: DelegatedAuthenticationFlags, kubeconfig: KubeConfig | undefined, tokens?: TokenAuthenticator): Promise<DelegatedAuthentication> {
    const files: FlagFiles = {
      clientCa: flags.clientCaFile ? await readCaFile('--client-ca-file', flags.clientCaFile) : undefined,
      requestHeaderClientCa: flags.requestHeaderClientCaFile ? await readCaFile('--requestheader-client-ca-file', flags.requestHeaderClientCaFile) : undefined,
    };
    const config = new DelegatedAuthentication(flags, files, tokens);
    if (!flags.skipLookup && kubeconfig) await config.follow(kubeconfig);
    return config;
  }

  current(): CertificateAuthorities {
    return this.authorities;
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** For the readiness check: why the ConfigMap is not in force, if it is not. */
  check(): void {
    if (this.problem) throw new Error(this.problem);
  }

  stop(): void {
    this.stopped = true;
    this.watch?.abort();
  }

  private async follow(kubeconfig: KubeConfig): Promise<void> {
    const core = kubeconfig.makeApiClient(CoreV1Api);
    const { namespace, name } = authenticationConfigMap;
    const where = `configmap ${namespace}/${name}`;
    let resourceVersion: string | undefined;
    try {
      const configMap = await core.readNamespacedConfigMap({ namespace, name });
      this.apply(configMap);
      resourceVersion = configMap.metadata?.resourceVersion;
    } catch (error) {
      this.problem = this.readAt
        ? `unable to read ${where}: ${describe(error)}; what was read at ${this.readAt} stays in force`
        : `unable to read ${where}: ${describe(error)}; only the authentication flags are in force (the server's service account needs the extension-apiserver-authentication-reader role in ${namespace})`;
    }
    const restart = (delayMs: number) => {
      if (!this.stopped) setTimeout(() => void this.follow(kubeconfig), delayMs).unref();
    };
    try {
      this.watch = await new Watch(kubeconfig).watch(
        `/api/v1/namespaces/${namespace}/configmaps`,
        { fieldSelector: `metadata.name=${name}`, resourceVersion, allowWatchBookmarks: true },
        (phase, object: V1ConfigMap) => {
          if (phase === 'ADDED' || phase === 'MODIFIED') this.apply(object);
          if (phase === 'DELETED') this.apply(undefined);
        },
        // A watch ends (timeout, network, a restarted kube-apiserver): read again and watch again.
        () => restart(1_000),
      );
    } catch (error) {
      this.problem ??= `unable to watch ${where}: ${describe(error)}`;
      restart(5_000);
    }
  }

  private apply(configMap: V1ConfigMap | undefined): void {
    const parsed = configMapData.safeParse(configMap?.data ?? {});
    if (!parsed.success) {
      this.problem = `configmap ${authenticationConfigMap.namespace}/${authenticationConfigMap.name} is malformed: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`;
      return;
    }
    try {
      this.authorities = resolve(this.flags, this.files, parsed.data);
      this.problem = undefined;
      this.readAt = new Date().toISOString();
    } catch (error) {
      this.problem = `configmap ${authenticationConfigMap.namespace}/${authenticationConfigMap.name}: ${describe(error)}`;
      return;
    }
    for (const listener of this.listeners) listener();
  }
}

/** Flags first, then the ConfigMap, then kube-apiserver's defaults for the header names. */
function resolve(flags: DelegatedAuthenticationFlags, files: FlagFiles, data: ConfigMapData | undefined): CertificateAuthorities {
  const clientCaPem = files.clientCa ?? data?.['client-ca-file'];
  // The requestheader settings travel together: a CA from the flags brings its names from the flags.
  const fromFlags = files.requestHeaderClientCa !== undefined;
  const requestHeaderCaPem = files.requestHeaderClientCa ?? data?.['requestheader-client-ca-file'];
  const pick = (flag: string[] | undefined, key: keyof ConfigMapData, fallback: string[]) => {
    const fromMap = fromFlags ? undefined : (data?.[key] as string[] | undefined);
    return flag ?? (fromMap && fromMap.length > 0 ? fromMap : fallback);
  };
  const requestHeader: RequestHeaderConfig | undefined = requestHeaderCaPem
    ? {
        clientCa: parsePemBundle(requestHeaderCaPem),
        allowedNames: flags.requestHeaderAllowedNames ?? (fromFlags ? [] : (data?.['requestheader-allowed-names'] ?? [])),
        usernameHeaders: pick(flags.requestHeaderUsernameHeaders, 'requestheader-username-headers', defaultRequestHeaderNames.usernameHeaders),
        uidHeaders: pick(flags.requestHeaderUidHeaders, 'requestheader-uid-headers', defaultRequestHeaderNames.uidHeaders),
        groupHeaders: pick(flags.requestHeaderGroupHeaders, 'requestheader-group-headers', defaultRequestHeaderNames.groupHeaders),
        extraHeaderPrefixes: pick(flags.requestHeaderExtraHeadersPrefix, 'requestheader-extra-headers-prefix', defaultRequestHeaderNames.extraHeaderPrefixes),
      }
    : undefined;
  if (requestHeader && requestHeader.clientCa.length === 0) throw new Error('the requestheader client CA holds no certificate');
  return { clientCa: clientCaPem ? parsePemBundle(clientCaPem) : [], requestHeader };
}

async function readCaFile(flag: string, file: string): Promise<string> {
  let pem: string;
  try {
    pem = await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`${flag} ${file}: ${describe(error)}`, { cause: error });
  }
  if (parsePemBundle(pem).length === 0) throw new Error(`${flag} ${file}: no PEM certificate in it`);
  return pem;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function describe(error: unknown): string {
  if (error && typeof error === 'object' && 'code' in error && 'body' in error) return `HTTP ${String(error.code)}`;
  return error instanceof Error ? error.message : String(error);
}

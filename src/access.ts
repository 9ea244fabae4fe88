/**
 * Who may do what, in each of the two modes. Embedded: the server's own CA, a token file and an
 * ABAC policy file in the data directory. Aggregated: what kube-apiserver delegates to an extension
 * API server (its extension-apiserver-authentication ConfigMap or the equivalent flags, TokenReview,
 * SubjectAccessReview), with the management cluster's kubeconfigs. Part of the composition root.
 */
import type { NamespaceLifecycle } from './apiserver/admission/namespace-lifecycle.js';
import { AbacAuthorizer } from './apiserver/auth/abac.js';
import { staticAuthentication, type AuthenticationConfig } from './apiserver/auth/authenticator.js';
import { LocalAuthorizer, UnionAuthorizer, type Authorizer } from './apiserver/auth/authorizer.js';
import type { DelegatedAuthenticationFlags } from './apiserver/auth/delegated/authentication.js';
import { ensureLocalAuthFiles } from './apiserver/auth/local-auth-files.js';
import { StaticTokenFile } from './apiserver/auth/token-file.js';

export interface Access {
  authentication: AuthenticationConfig;
  authorizer: Authorizer;
  /** Readiness checks by name, for what access follows outside the process (each throws with why it is not current). */
  checks: Record<string, () => void>;
  /** The admin bearer token file (embedded only). */
  adminTokenPath?: string;
  /** Namespaces of the management cluster, for creates (aggregated only: embedded mode has no Namespace objects). */
  namespaceLifecycle?: NamespaceLifecycle;
  close(): void;
}

/** The flags of k8s.io/apiserver's delegated authentication and authorization. */
export interface DelegatedAccessOptions extends DelegatedAuthenticationFlags {
  /** The management cluster; undefined: in-cluster configuration, else $KUBECONFIG or ~/.kube/config. */
  kubeconfig?: string;
  /** Where TokenReviews and the ConfigMap are read (default: kubeconfig). */
  authenticationKubeconfig?: string;
  /** Where SubjectAccessReviews go (default: kubeconfig). */
  authorizationKubeconfig?: string;
  /** Paths allowed without a review (default /healthz, /readyz, /livez). */
  alwaysAllowPaths?: string[];
}

export async function localAccess(dataDir: string, clientCaPem: string): Promise<Access> {
  const files = await ensureLocalAuthFiles(dataDir);
  const tokens = await StaticTokenFile.open(files.tokenFile);
  const policies = await AbacAuthorizer.open(files.policyFile);
  return {
    authentication: staticAuthentication(clientCaPem, tokens),
    authorizer: new UnionAuthorizer([new LocalAuthorizer(), policies]),
    adminTokenPath: files.adminTokenFile,
    checks: {},
    close: () => {
      tokens.close();
      policies.close();
    },
  };
}

/** Loaded only in this mode: @kubernetes/client-node, which it needs, costs about 90 MB of memory. */
export async function delegatedAccess(options: DelegatedAccessOptions): Promise<Access> {
  const [{ KubernetesNamespaceLifecycle }, { DelegatedAuthentication }, { SubjectAccessReviewAuthorizer }, { TokenReviewAuthenticator }, { loadKubeconfig }] =
    await Promise.all([
      import('./apiserver/admission/namespace-lifecycle.js'),
      import('./apiserver/auth/delegated/authentication.js'),
      import('./apiserver/auth/delegated/subject-access-review.js'),
      import('./apiserver/auth/delegated/token-review.js'),
      import('./reconcile/sources/kubeconfig.js'),
    ]);
  const authenticationConfig = loadKubeconfig(options.authenticationKubeconfig ?? options.kubeconfig);
  const authorizationConfig = loadKubeconfig(options.authorizationKubeconfig ?? options.kubeconfig);
  const authentication = await DelegatedAuthentication.start(options, authenticationConfig, new TokenReviewAuthenticator(authenticationConfig));
  const namespaces = new KubernetesNamespaceLifecycle(loadKubeconfig(options.kubeconfig));
  namespaces.start();
  return {
    authentication,
    authorizer: new SubjectAccessReviewAuthorizer(authorizationConfig, { alwaysAllowPaths: options.alwaysAllowPaths }),
    checks: {
      'extension-apiserver-authentication': () => authentication.check(),
      'namespace-informer': () => namespaces.check(),
    },
    namespaceLifecycle: namespaces,
    close: () => {
      authentication.stop();
      namespaces.stop();
    },
  };
}

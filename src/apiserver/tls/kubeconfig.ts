/**
 * A self-contained kubeconfig (credentials embedded as base64 data) so the
 * file can be copied anywhere and used with `kubectl --kubeconfig`.
 */
import { stringify } from 'yaml';

export interface KubeconfigOptions {
  server: string;
  caCertPem: string;
  clientCertPem: string;
  clientKeyPem: string;
  /** Cluster, user and context name. */
  name?: string;
}

export function renderKubeconfig(options: KubeconfigOptions): string {
  const name = options.name ?? 'capo-apiserver';
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: options.server, 'certificate-authority-data': base64(options.caCertPem) } }],
    users: [
      {
        name,
        user: {
          'client-certificate-data': base64(options.clientCertPem),
          'client-key-data': base64(options.clientKeyPem),
        },
      },
    ],
    contexts: [{ name, context: { cluster: name, user: name } }],
    'current-context': name,
    preferences: {},
  };
  // lineWidth 0: base64 blobs must stay on one line for readers that do not fold.
  return stringify(config, { lineWidth: 0 });
}

function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

/**
 * What deploy/ needs from a cluster before its pod can run, made as an operator without cert-manager
 * or a storage provisioner makes them: a PersistentVolume on a local directory for the data claim,
 * and the serving certificate's Secret (capo-apiserver-tls, naming capo-apiserver.capo-system.svc,
 * signed by the cluster's CA, which the APIServices' caBundle then holds).
 */
import { chown, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ControlPlane } from './control-plane.js';

export const installNamespace = 'capo-system';
const serviceName = `capo-apiserver.${installNamespace}.svc`;
/** The image's user, which must own the volume's directory (a hostPath volume ignores fsGroup). */
const imageUser = 65532;

/** A PersistentVolume on `directory` (created, owned by the image's user) that the data claim binds to. */
export async function createDataVolume(plane: ControlPlane, directory: string): Promise<void> {
  await mkdir(directory, { recursive: true });
  await chown(directory, imageUser, imageUser);
  const volume = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'capo-apiserver-data' },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: '',
      hostPath: { path: directory, type: 'Directory' },
    },
  };
  const applied = await plane.kubectl(['apply', '-f', '-'], JSON.stringify(volume));
  if (applied.code !== 0) throw new Error(`creating the PersistentVolume: ${applied.stderr}`);
}

/** The Secret capo-apiserver-tls in capo-system (the namespace made if missing), signed by the cluster's CA. */
export async function createServingSecret(plane: ControlPlane, workDirectory: string): Promise<void> {
  const serving = await plane.certificate(
    'capo-apiserver-serving',
    `/CN=${serviceName}`,
    `extendedKeyUsage=serverAuth\nsubjectAltName=DNS:${serviceName},DNS:capo-apiserver.${installNamespace},DNS:capo-apiserver`,
  );
  const cert = path.join(workDirectory, 'tls.crt');
  const key = path.join(workDirectory, 'tls.key');
  await writeFile(cert, serving.cert);
  await writeFile(key, serving.key, { mode: 0o600 });
  await plane.kubectl(['create', 'namespace', installNamespace]);
  const created = await plane.kubectl(['create', 'secret', 'tls', 'capo-apiserver-tls', '-n', installNamespace, `--cert=${cert}`, `--key=${key}`]);
  if (created.code !== 0) throw new Error(`creating the serving Secret: ${created.stderr}`);
}

/**
 * `npm run release [-- --out DIR] [--offline]`: capo-apiserver as a clusterctl provider release, in
 * the layout of clusterctl's local repository ({root}/{provider-label}/{version}/{file}, which
 * clusterctl v1.12 requires of a `file://` provider URL):
 *
 *   {root}/infrastructure-capo-apiserver/v{package.json version}/
 *     infrastructure-components.yaml   deploy/ (kustomize) plus deploy/cert-manager.yaml, with the image as a variable
 *     metadata.yaml                    the release series and the Cluster API contract it implements
 *     cluster-template.yaml            CAPO's own default template, unchanged
 *     cluster-template-without-lb.yaml CAPO's without-lb flavor of it
 *   {root}/clusterctl.yaml             a clusterctl configuration whose providers point at these folders
 *
 * With --offline, Cluster API's core, kubeadm bootstrap and kubeadm control plane releases (the
 * version ../shared/k8s/build.sh builds) are written beside it from the Go module cache
 * (`go mod download`, then `kubectl kustomize` of the module's config folders, as Cluster API's own
 * `make release-manifests` does), and the configuration points clusterctl at those instead of
 * GitHub, so `clusterctl init` needs no internet. cert-manager is not part of a release: clusterctl
 * init installs it from GitHub unless one is already installed (README, "Install with clusterctl").
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { type Document, isMap, isSeq, parseAllDocuments, stringify } from 'yaml';
import { z } from 'zod';
import { capoReferenceDir } from './capo-reference.js';

const run = promisify(execFile);

/** The provider's name in clusterctl (`clusterctl init --infrastructure capo-apiserver`). */
export const providerName = 'capo-apiserver';
/** What clusterctl calls an infrastructure provider named so: its folder, and its inventory entry. */
export const providerLabel = `infrastructure-${providerName}`;
/** The clusterctl variable that chooses the image; its default is the image the Dockerfile builds, tagged with the version. */
export const imageVariable = 'CAPO_APISERVER_IMAGE';
/**
 * The default image, of the version being released: the name scripts/image/build.sh gives its
 * build. clusterctl refuses an image reference that is not canonical (a registry host first:
 * "repository name must be canonical"); `localhost/` is the host podman gives a local build, and
 * the name an image keeps when imported from it into a node's containerd.
 */
const defaultImage = (version: string) => `localhost/${providerName}:${version}`;
/** The Cluster API contract the release implements: Cluster API v1.12's (its own metadata.yaml), whose labels deploy/contract-crds.yaml carries. */
export const contract = 'v1beta2';
/** The Cluster API release the offline configuration serves: the one ../shared/k8s/build.sh builds the managers and clusterctl of. */
export const clusterApiVersion = 'v1.12.5';

const repository = repositoryRoot(path.dirname(fileURLToPath(import.meta.url)));

/** The checkout's root, from the sources (scripts/) or from the build (dist/scripts/). */
function repositoryRoot(from: string): string {
  if (existsSync(path.join(from, 'package.json'))) return from;
  if (path.dirname(from) === from) throw new Error('release: no package.json above the script');
  return repositoryRoot(path.dirname(from));
}

const packageJson = z.object({ name: z.literal(providerName), version: z.string().regex(/^\d+\.\d+\.\d+$/, 'a release version: MAJOR.MINOR.PATCH') });

/** A release's files, by their path under the repository root. */
type ReleaseFiles = Map<string, string>;

/** The version being released, from package.json: `v0.1.0` and its major and minor. */
async function releaseVersion(): Promise<{ tag: string; major: number; minor: number; version: string }> {
  const { version } = packageJson.parse(JSON.parse(await readFile(path.join(repository, 'package.json'), 'utf8')));
  const [major, minor] = version.split('.').map(Number) as [number, number];
  return { tag: `v${version}`, major, minor, version };
}

/** Our provider's release folder. */
async function providerRelease(): Promise<ReleaseFiles> {
  const { tag, major, minor, version } = await releaseVersion();
  const folder = `${providerLabel}/${tag}`;
  const deploy = await kustomize(path.join(repository, 'deploy'));
  const certManager = await readFile(path.join(repository, 'deploy', 'cert-manager.yaml'), 'utf8');
  const defaultTemplate = await readFile(path.join(repository, capoReferenceDir, 'templates', 'cluster-template.yaml'), 'utf8');
  return new Map([
    [`${folder}/infrastructure-components.yaml`, infrastructureComponents(`${deploy}---\n${certManager}`, version)],
    [`${folder}/metadata.yaml`, metadata([{ major, minor, contract }])],
    // CAPO's template applies to this server unchanged: it serves CAPO's kinds as CAPO does.
    [`${folder}/cluster-template.yaml`, defaultTemplate],
    [`${folder}/cluster-template-without-lb.yaml`, withoutLoadBalancer(defaultTemplate)],
  ]);
}

const componentsHeader = `# capo-apiserver's components for clusterctl, generated by \`npm run release\` (scripts/release.ts) from
# deploy/ and deploy/cert-manager.yaml. Variables: ${imageVariable} (the image). clusterctl moves
# every namespaced object into its target namespace; keep the default, capo-system, which the
# APIServices' service references and the serving certificate's names use.
`;

/** Objects kube-apiserver keeps outside namespaces, among those deploy/ holds. */
const clusterScopedKinds = new Set(['Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'APIService']);

/**
 * deploy/ as clusterctl installs a provider: its Deployment's image a variable, and every
 * namespaced object in the one namespace. clusterctl sets every namespaced object's namespace to
 * its target namespace (fixTargetNamespace in clusterctl's components.go), so the RoleBinding that
 * lets the server read kube-system's extension-apiserver-authentication ConfigMap would land in
 * capo-system and grant nothing; the release grants that read with a ClusterRole limited to the
 * ConfigMap's name instead (a read by name and a watch with its name's field selector, what the
 * server does).
 */
function infrastructureComponents(manifests: string, version: string): string {
  const documents = parseAllDocuments(manifests).filter((document) => document.contents !== null);
  const namespaces = documents.filter((document) => document.get('kind') === 'Namespace').map((document) => String(document.getIn(['metadata', 'name'])));
  if (namespaces.length !== 1) throw new Error(`release: clusterctl wants one Namespace in a provider's components, deploy/ has ${namespaces.length}`);
  const [namespace] = namespaces;
  const out: unknown[] = [];
  for (const document of documents) {
    const kind = String(document.get('kind'));
    const name = String(document.getIn(['metadata', 'name']));
    const objectNamespace = document.getIn(['metadata', 'namespace']);
    if (kind === 'RoleBinding' && objectNamespace === 'kube-system' && document.getIn(['roleRef', 'name']) === 'extension-apiserver-authentication-reader') {
      out.push(...authenticationReader(document, name));
      continue;
    }
    if (clusterScopedKinds.has(kind) !== (objectNamespace === undefined)) {
      throw new Error(
        `release: ${kind} ${name} is in namespace ${String(objectNamespace)}: clusterctl would move it into ${namespace} (or the kind's scope is unknown to the release)`,
      );
    }
    if (objectNamespace !== undefined && objectNamespace !== namespace)
      throw new Error(`release: ${kind} ${name} is in ${String(objectNamespace)}, not ${namespace}`);
    if (kind === 'Deployment') setImage(document, providerName, `\${${imageVariable}:=${defaultImage(version)}}`);
    out.push(document.toJS());
  }
  return componentsHeader + manifestsText(out);
}

/** The ClusterRole and ClusterRoleBinding that replace the kube-system RoleBinding `binding`, for the same subjects. */
function authenticationReader(binding: Document, name: string): unknown[] {
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name },
    rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['extension-apiserver-authentication'], verbs: ['get', 'list', 'watch'] }],
  };
  const clusterBinding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: binding.toJS().subjects,
  };
  return [role, clusterBinding];
}

/** Sets the image of the Deployment's container `container`, which must exist. */
function setImage(deployment: Document, container: string, image: string, pullPolicy?: string): void {
  const containers = deployment.getIn(['spec', 'template', 'spec', 'containers']);
  const found = isSeq(containers) ? containers.items.find((item) => isMap(item) && item.get('name') === container) : undefined;
  if (!isMap(found)) throw new Error(`release: Deployment ${String(deployment.getIn(['metadata', 'name']))} has no container ${container}`);
  found.set('image', image);
  if (pullPolicy !== undefined) found.set('imagePullPolicy', pullPolicy);
}

/**
 * CAPO's without-lb flavor, made as CAPO makes it (kustomize/v1beta1/without-lb): the default
 * template without the API server's load balancer, so the control plane endpoint is a floating IP
 * on the control plane machine, and therefore one control plane machine.
 */
function withoutLoadBalancer(template: string): string {
  const documents = parseAllDocuments(template);
  const only = (kind: string) => {
    const found = documents.filter((document) => document.get('kind') === kind);
    if (found.length !== 1) throw new Error(`release: CAPO's template has ${found.length} ${kind}s, the without-lb flavor expects one`);
    return found[0]!;
  };
  const cluster = only('OpenStackCluster');
  if (!cluster.hasIn(['spec', 'apiServer', 'managedLoadBalancer']))
    throw new Error("release: CAPO's OpenStackCluster no longer asks for spec.apiServer.managedLoadBalancer");
  cluster.deleteIn(['spec', 'apiServer', 'managedLoadBalancer']);
  const apiServer = cluster.getIn(['spec', 'apiServer']);
  if (isMap(apiServer) && apiServer.items.length === 0) cluster.deleteIn(['spec', 'apiServer']);
  only('KubeadmControlPlane').setIn(['spec', 'replicas'], 1);
  // Edited in place, so that every other line stays as CAPO wrote it; each document after the first carries its own `---`.
  return documents.map((document) => document.toString({ lineWidth: 0 })).join('');
}

/** clusterctl's metadata.yaml: which Cluster API contract each release series implements. */
function metadata(releaseSeries: { major: number; minor: number; contract: string }[]): string {
  return stringify({ apiVersion: 'clusterctl.cluster.x-k8s.io/v1alpha3', kind: 'Metadata', releaseSeries });
}

const goModule = z.object({ Path: z.string(), Version: z.string(), Dir: z.string().min(1) });

/** The Go toolchain on PATH, or else the one ../shared/k8s/build.sh uses; undefined when there is neither. */
export function goToolchain(): string | undefined {
  const candidates = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), '/usr/local/go/bin'].map((dir) => path.join(dir, 'go'));
  return candidates.find((candidate) => existsSync(candidate));
}

/** A Go module's read-only directory in the module cache, downloaded through the Go module proxy when missing. */
export async function goModuleDir(module: string, version: string): Promise<string> {
  const go = goToolchain();
  if (go === undefined) throw new Error(`release: no Go toolchain on PATH or in /usr/local/go/bin, to download ${module}@${version}`);
  // Run outside any module, so that no go.mod around the working directory takes part.
  const { stdout } = await run(go, ['mod', 'download', '-json', `${module}@${version}`], { cwd: os.tmpdir(), maxBuffer: 1024 * 1024 });
  return goModule.parse(JSON.parse(stdout)).Dir;
}

/** Cluster API's three providers clusterctl installs by default, as its Makefile's release-manifests builds them. */
const clusterApiProviders = [
  {
    name: 'cluster-api',
    type: 'CoreProvider',
    label: 'cluster-api',
    kustomization: 'config/default',
    components: 'core-components.yaml',
    image: 'cluster-api-controller',
  },
  {
    name: 'kubeadm',
    type: 'BootstrapProvider',
    label: 'bootstrap-kubeadm',
    kustomization: 'bootstrap/kubeadm/config/default',
    components: 'bootstrap-components.yaml',
    image: 'kubeadm-bootstrap-controller',
  },
  {
    name: 'kubeadm',
    type: 'ControlPlaneProvider',
    label: 'control-plane-kubeadm',
    kustomization: 'controlplane/kubeadm/config/default',
    components: 'control-plane-components.yaml',
    image: 'kubeadm-control-plane-controller',
  },
] as const;

const clusterApiMetadata = z.object({
  apiVersion: z.literal('clusterctl.cluster.x-k8s.io/v1alpha3'),
  kind: z.literal('Metadata'),
  releaseSeries: z.array(z.object({ major: z.number(), minor: z.number(), contract: z.string() })),
});

/**
 * Cluster API's releases from its Go module: each provider's components (its image set to the
 * released one, pulled if not present, as `make release-manifests-all` sets them) and the module's
 * metadata.yaml, which must name the contract this release implements for the version's series.
 */
async function clusterApiReleases(moduleDir: string, version: string): Promise<ReleaseFiles> {
  const metadataText = await readFile(path.join(moduleDir, 'metadata.yaml'), 'utf8');
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  const series = clusterApiMetadata
    .parse(parseAllDocuments(metadataText)[0]?.toJS())
    .releaseSeries.find((entry) => entry.major === major && entry.minor === minor);
  if (series?.contract !== contract)
    throw new Error(`release: Cluster API ${version}'s metadata.yaml gives contract ${series?.contract ?? 'none'} for its series, not ${contract}`);
  const files: ReleaseFiles = new Map();
  for (const provider of clusterApiProviders) {
    const documents = parseAllDocuments(await kustomize(path.join(moduleDir, provider.kustomization))).filter((document) => document.contents !== null);
    for (const document of documents)
      if (document.get('kind') === 'Deployment') setImage(document, 'manager', `registry.k8s.io/cluster-api/${provider.image}:${version}`, 'IfNotPresent');
    files.set(`${provider.label}/${version}/${provider.components}`, manifestsText(documents.map((document) => document.toJS())));
    files.set(`${provider.label}/${version}/metadata.yaml`, metadataText);
  }
  return files;
}

/**
 * The clusterctl configuration: our provider, and with `offline` Cluster API's from local
 * folders too (a provider of the same name and type replaces clusterctl's built-in GitHub one),
 * without clusterctl's check for a newer clusterctl on GitHub.
 */
function clusterctlConfig(root: string, tag: string, offline: boolean): string {
  const url = (label: string, version: string, file: string) => pathToFileURL(path.join(root, label, version, file)).href;
  const providers = [
    { name: providerName, type: 'InfrastructureProvider', url: url(providerLabel, tag, 'infrastructure-components.yaml') },
    ...(offline
      ? clusterApiProviders.map((provider) => ({ name: provider.name, type: provider.type, url: url(provider.label, clusterApiVersion, provider.components) }))
      : []),
  ];
  const header = '# Written by `npm run release` (scripts/release.ts): `clusterctl init --infrastructure capo-apiserver --config <this file>`.\n';
  return header + stringify({ providers, ...(offline && { CLUSTERCTL_DISABLE_VERSIONCHECK: 'true' }) });
}

/** Writes the release under `root` (emptied first); with `offline`, Cluster API's releases too. */
export async function writeRelease(root: string, options: { offline: boolean }): Promise<void> {
  const absolute = path.resolve(root);
  const files = await providerRelease();
  if (options.offline) {
    for (const [file, text] of await clusterApiReleases(await goModuleDir('sigs.k8s.io/cluster-api', clusterApiVersion), clusterApiVersion))
      files.set(file, text);
  }
  files.set('clusterctl.yaml', clusterctlConfig(absolute, (await releaseVersion()).tag, options.offline));
  await rm(absolute, { recursive: true, force: true });
  for (const [file, text] of files) {
    await mkdir(path.dirname(path.join(absolute, file)), { recursive: true });
    await writeFile(path.join(absolute, file), text);
  }
}

/** Objects as one YAML stream, without the comments of the files they came from (which describe those files' own use). */
function manifestsText(objects: unknown[]): string {
  return objects.map((object) => stringify(object, { lineWidth: 0 })).join('---\n');
}

/** `kubectl kustomize DIR`: the manifests of a kustomization, as `kubectl apply -k` would apply them. */
async function kustomize(dir: string): Promise<string> {
  return (await run('kubectl', ['kustomize', dir], { maxBuffer: 64 * 1024 * 1024 })).stdout;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { values } = parseArgs({ options: { out: { type: 'string', default: 'dist/release' }, offline: { type: 'boolean', default: false } } });
  await writeRelease(values.out, { offline: values.offline });
  console.log(
    `wrote the release to ${path.resolve(values.out)}; clusterctl init --infrastructure ${providerName} --config ${path.join(values.out, 'clusterctl.yaml')}`,
  );
}

/**
 * CAPO's own templates, applied unchanged with the real kubectl, in both
 * versions; and every validation the CRD schema declares on their fields,
 * violated one at a time, answered with 422 and the field's path.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  infrastructureKinds,
  openStackClusterKind,
  openStackClusterTemplateKind,
  openStackMachineTemplateKind,
} from '../../../src/api/infrastructure/kinds.js';
import type { KindDefinition } from '../../../src/apiserver/registry/kind.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { request, startTestServer, type TestServer } from '../../../harness/test-server.js';
import { capoCrdVersion, capoGroup as group, capoTemplateDocuments } from '../../reference/capo.js';

const variables: Record<string, string> = {
  CLUSTER_NAME: 'capi-quickstart',
  OPENSTACK_EXTERNAL_NETWORK_ID: '5b5ac5b4-5ff1-4b0e-9a2c-8b2f3e1d7a10',
  OPENSTACK_CLOUD: 'openstack',
  OPENSTACK_DNS_NAMESERVERS: '192.0.2.53',
  OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR: 'm1.medium',
  OPENSTACK_NODE_MACHINE_FLAVOR: 'm1.small',
  OPENSTACK_IMAGE_NAME: 'ubuntu-2204-kube-v1.33.1',
  OPENSTACK_SSH_KEY_NAME: 'default',
  OPENSTACK_FAILURE_DOMAIN: 'nova',
  OPENSTACK_CLOUD_CACERT_B64: 'Cg==',
  OPENSTACK_CLOUD_YAML_B64: 'Cg==',
  KUBERNETES_VERSION: 'v1.33.1',
  CONTROL_PLANE_MACHINE_COUNT: '3',
  WORKER_MACHINE_COUNT: '3',
};

function kindOf(document: JsonObject): KindDefinition {
  return infrastructureKinds.find((k) => k.kind === document.kind)!;
}

function named(document: JsonObject, suffix: string): JsonObject {
  const copy = structuredClone(document);
  const metadata = copy.metadata as JsonObject;
  metadata.name = `${metadata.name}${suffix}`;
  metadata.namespace = 'default';
  return copy;
}

let server: TestServer;
let documents: JsonObject[];

beforeAll(async () => {
  server = await startTestServer({ kinds: infrastructureKinds });
  documents = ['cluster-template.yaml', 'clusterclass-dev-test.yaml'].flatMap((file) => capoTemplateDocuments(file, variables, group));
});

afterAll(async () => {
  await server?.stop();
});

async function kubectlOk(args: string[]): Promise<string> {
  const result = await server.kubectl(args);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

describe('reference templates', () => {
  it('holds CAPO documents of several kinds', () => {
    expect(new Set(documents.map((d) => d.kind))).toEqual(new Set(['OpenStackCluster', 'OpenStackMachineTemplate', 'OpenStackClusterTemplate']));
  });

  for (const version of ['v1beta2', 'v1beta1'] as const) {
    it(`are accepted by a server dry run, then applied, in ${version}`, async () => {
      const converted = documents.map((d) => {
        const renamed = named(d, `-${version}`);
        return version === 'v1beta2' ? renamed : kindOf(d).converter!.fromStorage(renamed, version);
      });
      expect(converted.every((d) => d.apiVersion === `${group}/${version}`)).toBe(true);
      const file = path.join(server.dataDir, `templates-${version}.yaml`);
      await writeFile(file, converted.map((d) => stringify(d)).join('---\n'));

      const dryRun = await kubectlOk(['apply', '--dry-run=server', '-f', file]);
      expect(dryRun.trim().split('\n')).toHaveLength(converted.length);
      expect(dryRun).toContain('created (server dry run)');
      expect((await kubectlOk(['get', 'cluster-api', '-o', 'name'])).includes(`-${version}`)).toBe(false);

      const applied = await kubectlOk(['apply', '-f', file]);
      expect(
        applied
          .trim()
          .split('\n')
          .every((line) => line.endsWith(' created')),
      ).toBe(true);
      const names = await kubectlOk(['get', 'cluster-api', '-o', 'name']);
      for (const d of converted) {
        expect(names).toContain(`${String(d.kind).toLowerCase()}.${group}/${(d.metadata as JsonObject).name}`);
      }
    });
  }

  it('reads a v1beta1-applied object back in v1beta2 as the template wrote it', async () => {
    const cluster = documents.find((d) => d.kind === 'OpenStackCluster')!;
    const stored = JSON.parse(await kubectlOk(['get', `openstackclusters.v1beta2.${group}`, `${(cluster.metadata as JsonObject).name}-v1beta1`, '-o', 'json']));
    expect(stored.spec).toMatchObject(cluster.spec as JsonObject);
  });

  it('prints CAPO printer columns, Endpoint only when wide', async () => {
    const table = await kubectlOk(['get', 'osc']);
    expect(table.split('\n')[0]).toMatch(/^NAME\s+CLUSTER\s+NETWORK\s+BASTION IP\s+AGE$/);
    const wide = await kubectlOk(['get', 'osc', '-o', 'wide']);
    expect(wide.split('\n')[0]).toMatch(/^NAME\s+CLUSTER\s+NETWORK\s+ENDPOINT\s+BASTION IP\s+AGE$/);
    const v1beta1 = await kubectlOk(['get', `openstackclusters.v1beta1.${group}`]);
    expect(v1beta1.split('\n')[0]).toMatch(/^NAME\s+CLUSTER\s+READY\s+NETWORK\s+BASTION IP\s+AGE$/);
  });

  it('explains both versions', async () => {
    const v1beta2 = await kubectlOk(['explain', 'openstackcluster.spec.apiServer']);
    expect(v1beta2).toContain('VERSION:    v1beta2');
    expect(v1beta2).toContain('managedLoadBalancer');
    const v1beta1 = await kubectlOk(['explain', 'openstackcluster.spec', `--api-version=${group}/v1beta1`]);
    expect(v1beta1).toContain('VERSION:    v1beta1');
    expect(v1beta1).toContain('apiServerLoadBalancer');
  });
});

interface CrdNode {
  type?: string;
  properties?: Record<string, CrdNode>;
  items?: CrdNode;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  maxLength?: number;
  minLength?: number;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  'x-kubernetes-validations'?: unknown[];
}

interface Violation {
  field: string;
  describe: string;
  mutate: (object: JsonObject) => void;
}

/** Every OpenAPI constraint the CRD declares on a field the document sets, each with a variant breaking it. */
function violations(node: CrdNode, value: unknown, at: (string | number)[], fieldPath: string): Violation[] {
  const out: Violation[] = [];
  const set = (v: unknown) => (object: JsonObject) => setAt(object, at, v);
  if (node.enum && typeof value === 'string') out.push({ field: fieldPath, describe: 'enum', mutate: set('not-a-supported-value') });
  if (node.pattern && typeof value === 'string') out.push({ field: fieldPath, describe: 'pattern', mutate: set('%%%') });
  if (node.maxLength !== undefined && typeof value === 'string')
    out.push({ field: fieldPath, describe: 'maxLength', mutate: set('x'.repeat(node.maxLength + 1)) });
  if (node.minLength && typeof value === 'string') out.push({ field: fieldPath, describe: 'minLength', mutate: set('') });
  if (node.minimum !== undefined && typeof value === 'number') out.push({ field: fieldPath, describe: 'minimum', mutate: set(node.minimum - 1) });
  if (node.maximum !== undefined && typeof value === 'number') out.push({ field: fieldPath, describe: 'maximum', mutate: set(node.maximum + 1) });
  if (node.type && value !== null && value !== undefined) {
    const wrong = node.type === 'string' ? 12345 : 'wrong-type';
    out.push({ field: fieldPath, describe: 'type', mutate: set(wrong) });
  }
  if (node.type === 'object' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const required of node.required ?? []) {
      out.push({ field: `${fieldPath}.${required}`, describe: 'required', mutate: (object) => deleteAt(object, [...at, required]) });
    }
    for (const [key, child] of Object.entries(node.properties ?? {})) {
      if (key in value) out.push(...violations(child, (value as JsonObject)[key], [...at, key], `${fieldPath}.${key}`));
    }
  }
  if (node.type === 'array' && Array.isArray(value)) {
    if (node.maxItems !== undefined && value.length > 0) {
      out.push({ field: fieldPath, describe: 'maxItems', mutate: set(Array.from({ length: node.maxItems + 1 }, (_, i) => uniqueCopy(value[0], i))) });
    }
    value.forEach((item, i) => {
      if (node.items) out.push(...violations(node.items, item, [...at, i], `${fieldPath}[${i}]`));
    });
  }
  return out;
}

function uniqueCopy(item: unknown, i: number): unknown {
  if (typeof item === 'string') return `${item}-${i}`;
  if (typeof item === 'object' && item !== null && 'name' in item) return { ...item, name: `${String((item as JsonObject).name)}-${i}` };
  return item;
}

function setAt(object: JsonObject, at: (string | number)[], value: unknown): void {
  let node: any = object;
  for (const key of at.slice(0, -1)) node = node[key];
  node[at[at.length - 1]] = value;
}

function deleteAt(object: JsonObject, at: (string | number)[]): void {
  let node: any = object;
  for (const key of at.slice(0, -1)) node = node[key];
  delete node[at[at.length - 1]];
}

describe('invalid variants', () => {
  for (const kind of [openStackClusterKind, openStackClusterTemplateKind, openStackMachineTemplateKind]) {
    it(`rejects each broken constraint of ${kind.kind} with 422 naming the field`, async () => {
      const schema = capoCrdVersion(kind.plural, 'v1beta2').openAPIV3Schema as CrdNode;
      const valid = named(documents.find((d) => d.kind === kind.kind)!, '-invalid');
      const spec = violations(schema.properties!.spec, valid.spec, ['spec'], 'spec');
      expect(spec.length).toBeGreaterThan(5);
      const failures: string[] = [];
      for (const violation of spec) {
        const object = structuredClone(valid);
        violation.mutate(object);
        const res = await request(server, 'POST', `/apis/${group}/v1beta2/namespaces/default/${kind.plural}?dryRun=All`, {
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(object),
        });
        const fields = res.status === 422 ? (res.json().details.causes ?? []).map((c: { field: string }) => c.field) : [];
        if (res.status !== 422 || !fields.includes(violation.field)) {
          failures.push(`${violation.describe} at ${violation.field}: ${res.status} ${res.body.slice(0, 300)}`);
        }
      }
      expect(failures).toEqual([]);
    });
  }
});

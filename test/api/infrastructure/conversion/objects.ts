/** Realistic objects for the conversion table tests. */
import { expect } from 'vitest';
import type { Converter } from '../../../../src/apiserver/registry/kind.js';
import { conversionDataAnnotation } from '../../../../src/api/infrastructure/conversion/index.js';
import type { JsonObject } from '../../../../src/storage/interface.js';
import { capoTemplateDocuments } from '../../../reference/capo.js';
import { deepFreeze, GROUP } from './crd-schema.js';

/** Values for the clusterctl variables of CAPO's templates. */
const variables: Record<string, string> = {
  CLUSTER_NAME: 'capo-e2e',
  OPENSTACK_CLOUD: 'openstack',
  OPENSTACK_EXTERNAL_NETWORK_ID: '9f3b6c1e-2d4a-4b8f-9c7e-5a1d2e3f4b6c',
  OPENSTACK_DNS_NAMESERVERS: '8.8.8.8',
  OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR: 'm1.medium',
  OPENSTACK_NODE_MACHINE_FLAVOR: 'm1.small',
  OPENSTACK_IMAGE_NAME: 'ubuntu-2404-kube-v1.33.1',
  OPENSTACK_SSH_KEY_NAME: 'capo-e2e-key',
  OPENSTACK_CLOUD_CACERT_B64: 'Cg==',
  OPENSTACK_CLOUD_YAML_B64: 'Y2xvdWRzOiB7fQo=',
  OPENSTACK_FAILURE_DOMAIN: 'nova',
  KUBERNETES_VERSION: 'v1.33.1',
  CONTROL_PLANE_MACHINE_COUNT: '3',
  WORKER_MACHINE_COUNT: '2',
};

/** The CAPO-group documents of one of CAPO's templates, filled in with the variables above. */
export function referenceDocuments(file: string): JsonObject[] {
  return capoTemplateDocuments(file, variables, GROUP);
}

export const T0 = '2025-03-01T10:00:00Z';
export const T1 = '2025-03-01T10:05:00Z';
export const NET_ID = '6c90b532-7ba0-418a-a276-5ae55060b5b0';
export const SUBNET_ID = 'a1b2c3d4-1111-4222-8333-444455556666';
export const IMAGE_ID = 'b7c8d9e0-2222-4333-8444-555566667777';
export const FLAVOR_ID = 'c3d4e5f6-3333-4444-8555-666677778888';
export const SERVER_ID = 'd4e5f6a7-4444-4555-8666-777788889999';

/** An object of a version; a metadata field given as undefined is left out. */
export function object(version: 'v1beta1' | 'v1beta2', kind: string, body: JsonObject, metadata: JsonObject = {}): JsonObject {
  const meta = JSON.parse(JSON.stringify({ name: 'capo-e2e', namespace: 'default', generation: 3, ...metadata })) as JsonObject;
  return deepFreeze({ apiVersion: `${GROUP}/${version}`, kind, metadata: meta, ...body });
}

/** The parsed conversion-data annotation of an object, if it has one. */
export function stashOf(value: JsonObject): unknown {
  const annotations = (value.metadata as JsonObject | undefined)?.annotations as Record<string, string> | undefined;
  const data = annotations?.[conversionDataAnnotation];
  return data === undefined ? undefined : JSON.parse(data);
}

export function withoutStash(value: JsonObject): JsonObject {
  const copy = structuredClone(value);
  const metadata = copy.metadata as JsonObject;
  const annotations = metadata.annotations as Record<string, string>;
  delete annotations[conversionDataAnnotation];
  if (Object.keys(annotations).length === 0) delete metadata.annotations;
  return copy;
}

/** The object with one more annotation (or a replaced one). */
export function annotated(value: JsonObject, key: string, data: string): JsonObject {
  const metadata = value.metadata as JsonObject;
  return deepFreeze({ ...value, metadata: { ...metadata, annotations: { ...(metadata.annotations as JsonObject), [key]: data } } });
}

/** Both directions convert exactly, with nothing left for the annotation. */
export function expectLosslessPair(converter: Converter, spoke: JsonObject, hub: JsonObject): void {
  expect(converter.toStorage(spoke)).toEqual(hub);
  expect(converter.fromStorage(hub, 'v1beta1')).toEqual(spoke);
}

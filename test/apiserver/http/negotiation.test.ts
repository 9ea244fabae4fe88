import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/apiserver/errors.js';
import { negotiate, parseContentType, type Negotiated, type Representation } from '../../../src/apiserver/http/negotiation.js';

type Kinds = Representation['kind'][];
const objectEndpoint: Kinds = ['plain', 'Table', 'PartialObjectMetadata'];
const listEndpoint: Kinds = ['plain', 'Table', 'PartialObjectMetadataList'];
const apisRoot: Kinds = ['plain', 'APIGroupDiscoveryList'];
const legacyDiscovery: Kinds = ['plain'];

// What the clients send, verbatim.
const KUBECTL_GET = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const METADATA_LIST =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const METADATA_GET =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
const DISCOVERY =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
const DISCOVERY_NOPEER = `application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer,${DISCOVERY}`;
const PROTOBUF_CLIENT = 'application/vnd.kubernetes.protobuf,application/json';

const plain: Negotiated = { representation: { kind: 'plain' }, contentType: 'application/json' };
const json = (representation: Representation): Negotiated => ({ representation, contentType: 'application/json' });
const discovery = (version: 'v2' | 'v2beta1'): Negotiated => ({
  representation: { kind: 'APIGroupDiscoveryList', version },
  contentType: `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`,
});

describe('negotiate', () => {
  it.each<[string, string | undefined, Kinds, Negotiated]>([
    ['kubectl get, list', KUBECTL_GET, listEndpoint, json({ kind: 'Table', version: 'v1' })],
    ['kubectl get, object', KUBECTL_GET, objectEndpoint, json({ kind: 'Table', version: 'v1' })],
    [
      'older kubectl (v1beta1 Table first)',
      'application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json',
      listEndpoint,
      json({ kind: 'Table', version: 'v1beta1' }),
    ],
    ['kubectl get on an endpoint without tables', KUBECTL_GET, legacyDiscovery, plain],
    ['metadata client list', METADATA_LIST, listEndpoint, json({ kind: 'PartialObjectMetadataList', version: 'v1' })],
    ['metadata client get', METADATA_GET, objectEndpoint, json({ kind: 'PartialObjectMetadata', version: 'v1' })],
    ['metadata client watch', METADATA_GET, objectEndpoint, json({ kind: 'PartialObjectMetadata', version: 'v1' })],
    [
      'PartialObjectMetadata v1beta1',
      'application/json;as=PartialObjectMetadata;v=v1beta1;g=meta.k8s.io, application/json',
      objectEndpoint,
      json({ kind: 'PartialObjectMetadata', version: 'v1beta1' }),
    ],
    ['aggregated discovery', DISCOVERY, apisRoot, discovery('v2')],
    ['aggregated discovery, nopeer profile', DISCOVERY_NOPEER, apisRoot, discovery('v2')],
    [
      'aggregated discovery, v2beta1 only',
      'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json',
      apisRoot,
      discovery('v2beta1'),
    ],
    ['aggregated discovery wins over an earlier plain clause', `application/json,${DISCOVERY}`, apisRoot, discovery('v2')],
    ['aggregated discovery Accept on /apis/G/V', DISCOVERY, legacyDiscovery, plain],
    ['aggregated discovery Accept on a resource', DISCOVERY, listEndpoint, plain],
    ['legacy discovery client on /apis', 'application/json, */*', apisRoot, plain],
    ['protobuf-preferring client', PROTOBUF_CLIENT, listEndpoint, plain],
    ['no Accept', undefined, listEndpoint, plain],
    ['empty Accept', '', apisRoot, plain],
    ['*/*', '*/*', objectEndpoint, plain],
    ['bare *', '*', objectEndpoint, plain],
    ['application/*', 'application/*', objectEndpoint, plain],
    ['a browser', 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8', objectEndpoint, plain],
    ['charset and unknown parameters are ignored', 'application/json; charset=utf-8; foo=bar', objectEndpoint, plain],
    ['Table asked through */*', '*/*;as=Table;g=meta.k8s.io;v=v1', listEndpoint, json({ kind: 'Table', version: 'v1' })],
    ['q-values reorder clauses', 'application/json;as=Table;v=v1;g=meta.k8s.io;q=0.5,application/json', listEndpoint, plain],
    ['a higher q wins', 'application/json;q=0.5,application/json;as=Table;v=v1;g=meta.k8s.io;q=0.9', listEndpoint, json({ kind: 'Table', version: 'v1' })],
    [
      'equal q keeps header order',
      'application/json;as=Table;v=v1beta1;g=meta.k8s.io;q=0.5,application/json;as=Table;v=v1;g=meta.k8s.io;q=0.5',
      listEndpoint,
      json({ kind: 'Table', version: 'v1beta1' }),
    ],
    ['specific types sort before */*', '*/*,application/json;as=Table;g=meta.k8s.io;v=v1', listEndpoint, json({ kind: 'Table', version: 'v1' })],
    ['q=0 is still served, as goautoneg does', 'application/json;q=0', objectEndpoint, plain],
    ['a malformed q counts as 0', 'application/json;as=Table;v=v1;g=meta.k8s.io;q=high,application/json;q=0.1', listEndpoint, plain],
    ['stream=watch is fine', 'application/json;stream=watch', objectEndpoint, plain],
    [
      'an unknown stream is skipped',
      'application/json;stream=other,application/json;as=Table;g=meta.k8s.io;v=v1',
      listEndpoint,
      json({ kind: 'Table', version: 'v1' }),
    ],
    ['unknown as is skipped', 'application/json;as=Pod;g=meta.k8s.io;v=v1,application/json', objectEndpoint, plain],
    ['as without g and v is skipped', 'application/json;as=Table,application/json', objectEndpoint, plain],
    ['unknown group is skipped', 'application/json;as=Table;g=example.com;v=v1,application/json', objectEndpoint, plain],
    ['unknown Table version is skipped', 'application/json;as=Table;v=v1alpha1;g=meta.k8s.io,application/json', objectEndpoint, plain],
    [
      'protobuf Table is skipped',
      'application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io',
      listEndpoint,
      json({ kind: 'Table', version: 'v1beta1' }),
    ],
    ['YAML is skipped', 'application/yaml,application/json', objectEndpoint, plain],
  ])('%s', (_, accept, allowed, expected) => {
    expect(negotiate(accept, allowed)).toStrictEqual(expected);
  });

  const notAcceptable = (accept: string | undefined, allowed: Kinds): ApiError => {
    try {
      negotiate(accept, allowed);
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      return error as ApiError;
    }
    throw new Error(`expected 406 for ${accept}`);
  };

  it.each<[string, string, Kinds]>([
    ['protobuf only', 'application/vnd.kubernetes.protobuf', listEndpoint],
    ['protobuf metadata only', 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1', listEndpoint],
    ['CBOR only', 'application/cbor', objectEndpoint],
    ['YAML only', 'application/yaml', objectEndpoint],
    ['text/html only', 'text/html', objectEndpoint],
    ['*/json is not a wildcard', '*/json', objectEndpoint],
    ['unservable Table version only', 'application/json;as=Table;v=v1alpha1;g=meta.k8s.io', objectEndpoint],
    ['Table on legacy discovery', 'application/json;as=Table;v=v1;g=meta.k8s.io', legacyDiscovery],
    ['Table on /apis', 'application/json;as=Table;v=v1;g=meta.k8s.io', apisRoot],
    ['aggregated discovery only, on a resource', 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList', objectEndpoint],
    ['unknown discovery version', 'application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList', apisRoot],
    ['garbage', ',,;', objectEndpoint],
  ])('answers 406 for %s', (_, accept, allowed) => {
    const error = notAcceptable(accept, allowed);
    expect(error.toStatus()).toStrictEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'only the following media types are accepted: application/json',
      reason: 'NotAcceptable',
      code: 406,
    });
  });

  it.each<[string, string, Kinds, string]>([
    [
      'PartialObjectMetadataList on an object',
      'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
      objectEndpoint,
      'you requested PartialObjectMetadataList, but the requested object is not a list (*unstructured.Unstructured)',
    ],
    [
      'PartialObjectMetadata on a list',
      'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1,application/json',
      listEndpoint,
      'you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)',
    ],
    [
      'metadata list Accept on a GET',
      METADATA_LIST,
      objectEndpoint,
      'you requested PartialObjectMetadataList, but the requested object is not a list (*unstructured.Unstructured)',
    ],
  ])('answers 406 for the wrong pairing: %s, even with a plain clause after it', (_, accept, allowed, message) => {
    const error = notAcceptable(accept, allowed);
    expect(error.code).toBe(406);
    expect(error.reason).toBe('NotAcceptable');
    expect(error.message).toBe(message);
  });

  it('lets an earlier servable clause win over a wrongly paired one', () => {
    const accept = 'application/json;as=Table;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
    expect(negotiate(accept, objectEndpoint)).toStrictEqual(json({ kind: 'Table', version: 'v1' }));
  });
});

describe('parseContentType', () => {
  it.each<[string | undefined, { mediaType: string; params: Record<string, string> }]>([
    [undefined, { mediaType: 'application/json', params: {} }],
    ['', { mediaType: 'application/json', params: {} }],
    ['application/json', { mediaType: 'application/json', params: {} }],
    ['application/json; charset=utf-8', { mediaType: 'application/json', params: { charset: 'utf-8' } }],
    ['Application/YAML;Charset=UTF-8', { mediaType: 'application/yaml', params: { charset: 'UTF-8' } }],
    ['application/apply-patch+yaml', { mediaType: 'application/apply-patch+yaml', params: {} }],
    ['application/merge-patch+json;', { mediaType: 'application/merge-patch+json', params: {} }],
    ['application/json; a="b; c"; d=e', { mediaType: 'application/json', params: { a: 'b; c', d: 'e' } }],
    ['application/json; a="say \\"hi\\""', { mediaType: 'application/json', params: { a: 'say "hi"' } }],
    ['  application/json  ', { mediaType: 'application/json', params: {} }],
    // malformed: nothing accepts an empty media type, so the caller answers 415 as kube does
    ['application/json; charset', { mediaType: '', params: {} }],
    ['application/json; a=1; a=2', { mediaType: '', params: {} }],
    ['application/', { mediaType: '', params: {} }],
    ['application/json/x', { mediaType: '', params: {} }],
    ['app lication/json', { mediaType: '', params: {} }],
  ])('%j', (header, expected) => {
    expect(parseContentType(header)).toStrictEqual(expected);
  });
});

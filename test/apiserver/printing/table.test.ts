import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/apiserver/errors.js';
import { humanDuration, parseIncludeObject, partialObjectMetadata, TablePrinter, type TableRequest } from '../../../src/apiserver/printing/table.js';
import type { PrinterColumn } from '../../../src/apiserver/registry/kind.js';
import type { JsonObject } from '../../../src/storage/interface.js';

const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';

// OpenStackMachine's columns as CAPO declares them, plus a wide-only one.
const machineColumns: PrinterColumn[] = [
  {
    name: 'Cluster',
    type: 'string',
    jsonPath: '.metadata.labels.cluster\\.x-k8s\\.io/cluster-name',
    description: 'Cluster to which this OpenStackMachine belongs',
  },
  { name: 'InstanceState', type: 'string', jsonPath: '.status.instanceState', description: 'OpenStack instance state' },
  { name: 'Ready', type: 'string', jsonPath: '.status.ready', description: 'OpenStackMachine ready status' },
  { name: 'ProviderID', type: 'string', jsonPath: '.spec.providerID', description: 'OpenStack instance ID' },
  {
    name: 'Machine',
    type: 'string',
    jsonPath: '.metadata.ownerReferences[?(@.kind=="Machine")].name',
    description: 'Machine object which owns with this OpenStackMachine',
  },
  { name: 'Flavor', type: 'string', jsonPath: '.spec.flavor', priority: 1 },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time duration since creation of OpenStackMachine' },
];

const now = new Date('2026-03-01T12:00:00Z');

const machine: JsonObject = {
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
  kind: 'OpenStackMachine',
  metadata: {
    name: 'capi-md-0-abcde',
    namespace: 'default',
    uid: '5f0c3c1e-0000-4000-8000-000000000001',
    resourceVersion: '42',
    generation: 2,
    creationTimestamp: '2026-03-01T11:55:00Z',
    labels: { 'cluster.x-k8s.io/cluster-name': 'capi' },
    ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Machine', name: 'capi-md-0-xyz', uid: 'u1', controller: true }],
    finalizers: ['openstackmachine.infrastructure.cluster.x-k8s.io'],
  },
  spec: { providerID: 'openstack:///d2c1', flavor: 'm1.small' },
  status: { ready: true, instanceState: 'ACTIVE' },
};

const request = (overrides: Partial<TableRequest> = {}): TableRequest => ({
  apiVersion: 'meta.k8s.io/v1',
  includeObject: 'Metadata',
  withColumnDefinitions: true,
  now,
  ...overrides,
});

describe('TablePrinter columns', () => {
  it('puts Name first and keeps the printer columns in order, with their priority', () => {
    const printer = new TablePrinter(machineColumns);
    expect(printer.columnDefinitions).toStrictEqual([
      { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 },
      { name: 'Cluster', type: 'string', format: '', description: 'Cluster to which this OpenStackMachine belongs', priority: 0 },
      { name: 'InstanceState', type: 'string', format: '', description: 'OpenStack instance state', priority: 0 },
      { name: 'Ready', type: 'string', format: '', description: 'OpenStackMachine ready status', priority: 0 },
      { name: 'ProviderID', type: 'string', format: '', description: 'OpenStack instance ID', priority: 0 },
      { name: 'Machine', type: 'string', format: '', description: 'Machine object which owns with this OpenStackMachine', priority: 0 },
      { name: 'Flavor', type: 'string', format: '', description: 'Custom resource definition column (in JSONPath format): .spec.flavor', priority: 1 },
      { name: 'Age', type: 'date', format: '', description: 'Time duration since creation of OpenStackMachine', priority: 0 },
    ]);
  });

  it('defaults to Name and Age when a kind declares no columns, as for CRDs', () => {
    const printer = new TablePrinter([]);
    expect(printer.columnDefinitions.map(({ name, type, format, priority }) => ({ name, type, format, priority }))).toStrictEqual([
      { name: 'Name', type: 'string', format: 'name', priority: 0 },
      { name: 'Age', type: 'date', format: '', priority: 0 },
    ]);
    expect(printer.columnDefinitions[1].description).toMatch(/^CreationTimestamp is a timestamp representing the server time/);
    const table = printer.toTable([machine], {}, request());
    expect((table.rows as { cells: unknown[] }[])[0].cells).toStrictEqual(['capi-md-0-abcde', '5m']);
  });

  it.each<[string, PrinterColumn, RegExp]>([
    [
      'a path not starting with a dot',
      { name: 'X', type: 'string', jsonPath: 'status.ready' },
      /printer column "X": jsonPath must be a simple json path starting with \./,
    ],
    ['an unparsable path', { name: 'X', type: 'string', jsonPath: '.status[' }, /printer column "X": invalid JSONPath "\.status\[": unterminated array/],
    [
      'an unknown format',
      { name: 'X', type: 'string', format: 'uuid', jsonPath: '.a' },
      /format must be one of int32,int64,float,double,byte,date,date-time,password/,
    ],
    ['an empty name', { name: '', type: 'string', jsonPath: '.a' }, /name is required/],
  ])('rejects %s', (_, column, message) => {
    expect(() => new TablePrinter([column])).toThrow(message);
  });
});

describe('TablePrinter.toTable', () => {
  const printer = new TablePrinter(machineColumns);

  it('renders a list as kube does (v1, includeObject=Metadata)', () => {
    const table = printer.toTable([machine], { resourceVersion: '57', continue: 'token', remainingItemCount: 3 }, request());
    expect(JSON.stringify(table)).toBe(
      JSON.stringify({
        kind: 'Table',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { resourceVersion: '57', continue: 'token', remainingItemCount: 3 },
        columnDefinitions: printer.columnDefinitions,
        rows: [
          {
            cells: ['capi-md-0-abcde', 'capi', 'ACTIVE', 'true', 'openstack:///d2c1', 'capi-md-0-xyz', 'm1.small', '5m'],
            object: {
              kind: 'PartialObjectMetadata',
              apiVersion: 'meta.k8s.io/v1',
              metadata: {
                name: 'capi-md-0-abcde',
                namespace: 'default',
                uid: '5f0c3c1e-0000-4000-8000-000000000001',
                resourceVersion: '42',
                generation: 2,
                creationTimestamp: '2026-03-01T11:55:00Z',
                labels: { 'cluster.x-k8s.io/cluster-name': 'capi' },
                ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Machine', name: 'capi-md-0-xyz', uid: 'u1', controller: true }],
                finalizers: ['openstackmachine.infrastructure.cluster.x-k8s.io'],
              },
            },
          },
        ],
      }),
    );
  });

  it.each<[TableRequest['includeObject'], TableRequest['apiVersion'], unknown]>([
    ['Metadata', 'meta.k8s.io/v1beta1', { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1beta1', metadata: machine.metadata }],
    ['Object', 'meta.k8s.io/v1', machine],
    ['Object', 'meta.k8s.io/v1beta1', machine],
    ['None', 'meta.k8s.io/v1', null],
  ])('includeObject=%s in %s', (includeObject, apiVersion, object) => {
    const table = printer.toTable([machine], { resourceVersion: '42' }, request({ includeObject, apiVersion }));
    expect(table.apiVersion).toBe(apiVersion);
    expect(table.rows).toStrictEqual([{ cells: expect.any(Array), object }]);
  });

  it('sends columnDefinitions as null when asked not to (watch events after the first)', () => {
    const table = printer.toTable([machine], { resourceVersion: '42' }, request({ withColumnDefinitions: false }));
    expect(table).toHaveProperty('columnDefinitions', null);
    expect((table.rows as unknown[]).length).toBe(1);
  });

  it('renders an empty list with an empty rows array and drops empty list metadata', () => {
    const table = printer.toTable([], { resourceVersion: '9', continue: '', selfLink: undefined }, request());
    expect(table.rows).toStrictEqual([]);
    expect(table.metadata).toStrictEqual({ resourceVersion: '9' });
  });

  it('prints null cells for missing values and keeps one cell per column', () => {
    const bare: JsonObject = { apiVersion: 'x/v1', kind: 'OpenStackMachine', metadata: { name: 'bare' } };
    const table = printer.toTable([bare], {}, request());
    expect((table.rows as { cells: unknown[] }[])[0].cells).toStrictEqual(['bare', null, null, null, null, null, null, null]);
  });

  it('forces metadata for the bookmark that ends a watch-list', () => {
    const bookmark: JsonObject = {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackMachine',
      metadata: { resourceVersion: '77', annotations: { 'k8s.io/initial-events-end': 'true' } },
    };
    const table = printer.toTable([bookmark], { resourceVersion: '77' }, request({ includeObject: 'Object' }));
    expect((table.rows as { object: unknown }[])[0].object).toStrictEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '77', annotations: { 'k8s.io/initial-events-end': 'true' } },
    });
  });
});

describe('TablePrinter cells by column type', () => {
  const cellOf = (type: PrinterColumn['type'], value: unknown): unknown => {
    const printer = new TablePrinter([{ name: 'V', type, jsonPath: '.v' }]);
    const table = printer.toTable([{ metadata: { name: 'n' }, v: value }], {}, request());
    return (table.rows as { cells: unknown[] }[])[0].cells[1];
  };

  it.each<[PrinterColumn['type'], unknown, unknown]>([
    // string columns print whatever the path found, as client-go's jsonpath printer does
    ['string', 'text', 'text'],
    ['string', true, 'true'],
    ['string', 3, '3'],
    ['string', -7, '-7'],
    ['string', 0.5, '0.5'],
    ['string', 0.0001, '0.0001'],
    ['string', 0.00001, '1e-05'],
    ['string', 123456.5, '123456.5'],
    ['string', 1234567.5, '1.2345675e+06'],
    ['string', 1e21, '1e+21'],
    ['string', null, '<no value>'],
    ['string', { b: 1, a: '<x>' }, '{"a":"\\u003cx\\u003e","b":1}'],
    ['string', ['x', 2], '["x",2]'],
    ['string', [], '[]'],
    // typed columns keep matching JSON values and drop the rest
    ['integer', 3, 3],
    ['integer', 2.9, 2],
    ['integer', -2.9, -2],
    ['integer', '3', null],
    ['integer', null, null],
    ['number', 2.5, 2.5],
    ['number', 4, 4],
    ['number', '2.5', null],
    ['boolean', true, true],
    ['boolean', false, false],
    ['boolean', 'true', null],
    ['boolean', null, null],
    ['date', '2026-03-01T11:55:00Z', '5m'],
    ['date', '2026-03-01T12:55:00+01:00', '5m'],
    ['date', '2026-03-01T11:54:58.5Z', '5m1s'],
    ['date', '2026-03-01T11:54:59,5Z', '5m'],
    ['date', '2026-03-01T8:00:00Z', '4h'],
    ['date', '2026-03-01', '<invalid>'],
    ['date', '2026-02-30T00:00:00Z', '<invalid>'],
    ['date', 'yesterday', '<invalid>'],
    ['date', '', '<unknown>'],
    ['date', 'null', '<unknown>'],
    ['date', '0001-01-01T00:00:00Z', '<unknown>'],
    ['date', '2026-03-01T12:00:05Z', '<invalid>'],
    ['date', 1234, null],
    ['date', null, null],
  ])('%s column with %j', (type, value, expected) => {
    expect(cellOf(type, value)).toStrictEqual(expected);
  });

  it('uses the first result when the path matches several values', () => {
    const printer = new TablePrinter([{ name: 'Owners', type: 'string', jsonPath: '.metadata.ownerReferences[*].name' }]);
    const object = { metadata: { name: 'n', ownerReferences: [{ name: 'first' }, { name: 'second' }] } };
    expect((printer.toTable([object], {}, request()).rows as { cells: unknown[] }[])[0].cells).toStrictEqual(['n', 'first']);
  });
});

describe('partialObjectMetadata', () => {
  it('keeps ObjectMeta fields in kube order and drops empty or unknown ones', () => {
    const object: JsonObject = {
      kind: 'X',
      metadata: {
        labels: {},
        annotations: { a: 'b' },
        name: 'n',
        generation: 0,
        deletionGracePeriodSeconds: 0,
        finalizers: [],
        unknownField: 'dropped',
        namespace: 'ns',
      },
      spec: { big: true },
    };
    const partial = partialObjectMetadata(object, 'meta.k8s.io/v1');
    expect(JSON.stringify(partial)).toBe(
      JSON.stringify({
        kind: 'PartialObjectMetadata',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { name: 'n', namespace: 'ns', deletionGracePeriodSeconds: 0, annotations: { a: 'b' } },
      }),
    );
  });
});

describe('parseIncludeObject', () => {
  it.each<[string | undefined, string]>([
    [undefined, 'Metadata'],
    ['', 'Metadata'],
    ['Metadata', 'Metadata'],
    ['Object', 'Object'],
    ['None', 'None'],
  ])('%j → %s', (value, expected) => {
    expect(parseIncludeObject(value)).toBe(expected);
  });

  it('answers other values with kube’s 400', () => {
    let caught: unknown;
    try {
      parseIncludeObject('object');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ApiError);
    expect((caught as ApiError).toStatus()).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: `Unable to convert to Table as requested: includeObject: Invalid value: "object": must be 'Metadata', 'Object', 'None', or empty`,
    });
  });
});

describe('humanDuration', () => {
  const second = 1000;
  const minute = 60 * second;
  const hour = 60 * minute;
  const day = 24 * hour;
  const year = 365 * day;
  it.each<[number, string]>([
    [-3 * second, '<invalid>'],
    [-2 * second, '<invalid>'],
    [-1999, '0s'],
    [-1 * second, '0s'],
    [0, '0s'],
    [999, '0s'],
    [59 * second, '59s'],
    [119 * second + 999, '119s'],
    [2 * minute, '2m'],
    [2 * minute + second, '2m1s'],
    [5 * minute, '5m'],
    [9 * minute + 59 * second, '9m59s'],
    [10 * minute, '10m'],
    [10 * minute + 30 * second, '10m'],
    [179 * minute + 59 * second, '179m'],
    [3 * hour, '3h'],
    [3 * hour + 2 * minute, '3h2m'],
    [7 * hour + 59 * minute, '7h59m'],
    [8 * hour, '8h'],
    [47 * hour + 59 * minute, '47h'],
    [48 * hour, '2d'],
    [3 * day + 4 * hour, '3d4h'],
    [7 * day + 23 * hour + 59 * minute, '7d23h'],
    [8 * day, '8d'],
    [2 * year - day, '729d'],
    [2 * year, '2y'],
    [2 * year + 100 * day, '2y100d'],
    [8 * year - day, '7y364d'],
    [8 * year, '8y'],
    [123 * year + 200 * day, '123y'],
  ])('%d ms → %s', (elapsed, expected) => {
    expect(humanDuration(new Date(now.getTime() - elapsed), now)).toBe(expected);
  });
});

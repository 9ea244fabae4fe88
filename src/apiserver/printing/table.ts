/**
 * meta.k8s.io Table output (`kubectl get`), built the way kube-apiserver's
 * CRD table convertor builds it from additionalPrinterColumns.
 */
import { errors, FieldError } from '../errors.js';
import type { PrinterColumn } from '../registry/kind.js';
import type { JsonObject } from '../../storage/interface.js';
import { compareCodePoints, compileJsonPath, isInt64, type CompiledJsonPath } from './jsonpath.js';
import { isJsonObject } from '../../storage/json.js';
import { initialEventsEndAnnotation } from '../store/watch.js';

export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface TableRequest {
  apiVersion: 'meta.k8s.io/v1' | 'meta.k8s.io/v1beta1';
  includeObject: 'None' | 'Metadata' | 'Object';
  /** False on every watch event after the first: kube sends `columnDefinitions: null` then. */
  withColumnDefinitions: boolean;
  now: Date;
}

/** ObjectMeta's API documentation, which kube reuses as column descriptions. */
const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
const CREATION_TIMESTAMP_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** What a CRD without additionalPrinterColumns gets. */
const DEFAULT_COLUMNS: PrinterColumn[] = [{ name: 'Age', type: 'date', description: CREATION_TIMESTAMP_DESCRIPTION, jsonPath: '.metadata.creationTimestamp' }];

export class TablePrinter {
  readonly columnDefinitions: ColumnDefinition[];
  private readonly columns: { type: PrinterColumn['type']; path: CompiledJsonPath }[];
  /** The kind places the name itself (kube's Event printer shows it last, with -o wide), so no Name column leads. */
  private readonly namePlaced: boolean;

  /** Throws on a column kube's CRD validation would reject, so bad kind definitions fail at startup. */
  constructor(columns: PrinterColumn[]) {
    const effective = columns.length > 0 ? columns : DEFAULT_COLUMNS;
    this.namePlaced = effective.some((column) => column.name === 'Name' && column.jsonPath === '.metadata.name');
    this.columnDefinitions = this.namePlaced ? [] : [{ name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 }];
    this.columns = [];
    for (const column of effective) {
      const path = compileColumn(column);
      const { value } = column;
      this.columns.push({ type: column.type, path: value ? (object) => [value(object as JsonObject)] : path });
      this.columnDefinitions.push({
        name: column.name,
        type: column.type,
        format: column.format ?? '',
        description: column.description || `Custom resource definition column (in JSONPath format): ${column.jsonPath}`,
        priority: column.priority ?? 0,
      });
    }
  }

  /**
   * `listMeta` becomes Table.metadata: the list's resourceVersion, continue and
   * remainingItemCount, or for a single object (GET, watch event) its resourceVersion.
   */
  toTable(objects: JsonObject[], listMeta: Record<string, unknown>, request: TableRequest): JsonObject {
    return {
      kind: 'Table',
      apiVersion: request.apiVersion,
      metadata: listMetadata(listMeta),
      columnDefinitions: request.withColumnDefinitions ? this.columnDefinitions : null,
      rows: objects.map((object) => this.row(object, request)),
    };
  }

  /** One object's row; a streamed list builds each piece's rows as it encodes them. */
  row(object: JsonObject, request: TableRequest): JsonObject {
    return {
      cells: [...(this.namePlaced ? [] : [nameOf(object)]), ...this.columns.map(({ type, path }) => cell(type, path(object), request.now))],
      object: rowObject(object, request),
    };
  }
}

const COLUMN_FORMATS = ['int32', 'int64', 'float', 'double', 'byte', 'date', 'date-time', 'password'];

/** The checks of kube's CRD validation for additionalPrinterColumns, plus a JSONPath that compiles. */
function compileColumn(column: PrinterColumn): CompiledJsonPath {
  const fail = (reason: string): never => {
    throw new Error(`printer column ${JSON.stringify(column.name)}: ${reason}`);
  };
  if (column.name === '') fail('name is required');
  if (column.format && !COLUMN_FORMATS.includes(column.format)) fail(`format must be one of ${COLUMN_FORMATS.join(',')}`);
  if (!column.jsonPath.startsWith('.')) fail('jsonPath must be a simple json path starting with .');
  try {
    return compileJsonPath(column.jsonPath);
  } catch (error) {
    return fail((error as Error).message);
  }
}

/** The includeObject query parameter; only consulted when a Table was negotiated, as in kube. */
export function parseIncludeObject(value: string | undefined): TableRequest['includeObject'] {
  if (value === undefined || value === '') return 'Metadata';
  if (value === 'Metadata' || value === 'Object' || value === 'None') return value;
  const error = FieldError.invalid('includeObject', value, "must be 'Metadata', 'Object', 'None', or empty");
  throw errors.badRequest(`Unable to convert to Table as requested: ${error.toString()}`);
}

/** ObjectMeta fields in kube's serialization order; PartialObjectMetadata carries only these. */
const OBJECT_META_FIELDS = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
] as const;

/** An object reduced to its ObjectMeta, as kube's PartialObjectMetadata transform does (empty fields omitted). */
export function partialObjectMetadata(object: JsonObject, apiVersion: string): JsonObject {
  const source = isJsonObject(object.metadata) ? object.metadata : {};
  const metadata: JsonObject = {};
  for (const field of OBJECT_META_FIELDS) {
    const value = source[field];
    if (field === 'deletionGracePeriodSeconds' ? typeof value === 'number' : !isEmpty(value)) metadata[field] = value;
  }
  return { kind: 'PartialObjectMetadata', apiVersion, metadata };
}

/**
 * apimachinery's duration.HumanDuration of now - from: two significant units
 * while they matter ("3m20s", "5h10m", "4d2h", "3y120d"), one after; up to 2s
 * of clock skew into the future reads "0s", more reads "<invalid>".
 */
export function humanDuration(from: Date, now: Date): string {
  const ms = now.getTime() - from.getTime();
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(ms / 3_600_000);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.floor(hours / 24) % 365;
    const years = Math.floor(hours / 24 / 365);
    return days === 0 ? `${years}y` : `${years}y${days}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

// ---- cells ---------------------------------------------------------------------

function nameOf(object: JsonObject): string {
  const metadata = object.metadata;
  return isJsonObject(metadata) && typeof metadata.name === 'string' ? metadata.name : '';
}

/** kube's CRD convertor uses the first JSONPath result only; none is a null cell. */
function cell(type: PrinterColumn['type'], results: unknown[], now: Date): unknown {
  if (results.length === 0) return null;
  const value = results[0];
  switch (type) {
    case 'string':
      return printValue(value);
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      return typeof value === 'string' ? dateCell(value, now) : null;
  }
}

/** client-go's jsonpath printing of one value, which is what string columns show. */
function printValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return goFormatNumber(value);
  if (typeof value === 'boolean') return String(value);
  if (value === null || value === undefined) return '<no value>';
  return goJson(value);
}

function dateCell(value: string, now: Date): string {
  // metav1.Time reads "" and "null" as the zero time, which prints as unknown.
  if (value === '' || value === 'null') return '<unknown>';
  const time = parseRfc3339(value);
  if (time === undefined) return '<invalid>';
  if (time === ZERO_TIME) return '<unknown>';
  return humanDuration(new Date(time), now);
}

/** Go's zero time.Time, 0001-01-01T00:00:00Z, in Unix milliseconds. */
const ZERO_TIME = -62135596800000;

/**
 * Unix milliseconds of an RFC 3339 timestamp as Go's time.Parse(time.RFC3339)
 * accepts it (one- or two-digit hour, optional fraction after '.' or ',',
 * offset hours up to 24), or undefined.
 */
function parseRfc3339(text: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (match[8]) {
    const offsetHours = Number(match[9]);
    const offsetMins = Number(match[10]);
    if (offsetHours > 24 || offsetMins > 60) return undefined;
    offsetMinutes = (match[8] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second));
  date.setUTCFullYear(year);
  const fraction = match[7] ? Number(`0.${match[7]}`) * 1000 : 0;
  return date.getTime() + fraction - offsetMinutes * 60_000;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * fmt.Print of a decoded JSON number: integers are int64 and print plainly;
 * other numbers are float64 and print with %v, which switches to exponent
 * form below 1e-4 and from 1e6 on ("1.5e+06").
 */
function goFormatNumber(value: number): string {
  if (isInt64(value)) return String(value);
  const [mantissa, exponentText] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const exponent = Number(exponentText);
  const sign = value < 0 ? '-' : '';
  if (exponent < -4 || exponent >= 6) {
    const fraction = digits.length > 1 ? `.${digits.slice(1)}` : '';
    const magnitude = String(Math.abs(exponent)).padStart(2, '0');
    return `${sign}${digits[0]}${fraction}e${exponent < 0 ? '-' : '+'}${magnitude}`;
  }
  const point = exponent + 1;
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** Go's json.Marshal: map keys sorted, <, >, & and line/paragraph separators escaped. */
function goJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`;
  if (isJsonObject(value)) {
    const keys = Object.keys(value).sort(compareCodePoints);
    return `{${keys.map((key) => `${goString(key)}:${goJson(value[key])}`).join(',')}}`;
  }
  if (typeof value === 'string') return goString(value);
  return JSON.stringify(value ?? null);
}

function goString(text: string): string {
  return JSON.stringify(text).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

// ---- rows and metadata ---------------------------------------------------------------

function rowObject(object: JsonObject, request: TableRequest): JsonObject | null {
  const annotations = isJsonObject(object.metadata) ? object.metadata.annotations : undefined;
  const endsInitialEvents = isJsonObject(annotations) && annotations[initialEventsEndAnnotation] === 'true';
  if (request.includeObject === 'Metadata' || endsInitialEvents) return partialObjectMetadata(object, request.apiVersion);
  // kube serializes an absent row object as null rather than dropping the key.
  return request.includeObject === 'Object' ? object : null;
}

/** ListMeta's fields, dropping empty ones as its omitempty tags do. */
function listMetadata(listMeta: Record<string, unknown>): JsonObject {
  const metadata: JsonObject = {};
  for (const field of ['selfLink', 'resourceVersion', 'continue']) {
    if (typeof listMeta[field] === 'string' && listMeta[field] !== '') metadata[field] = listMeta[field];
  }
  if (typeof listMeta.remainingItemCount === 'number') metadata.remainingItemCount = listMeta.remainingItemCount;
  return metadata;
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '' || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isJsonObject(value) && Object.keys(value).length === 0;
}

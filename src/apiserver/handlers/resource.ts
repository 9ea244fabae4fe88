/**
 * HTTP handling of resource requests (/apis/G/V/[namespaces/NS/]R[/name[/status]], /api/V/... for the core group):
 * query parameters, parsing request bodies, representation negotiation and
 * watch streaming. Object semantics live in store/, decoding and admission
 * of what a write sends included: a write hands the store the parsed body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonObject } from '../../storage/interface.js';
import type { UserInfo } from '../auth/user.js';
import { errors, FieldError } from '../errors.js';
import { decodeJson, decodeObjectBody, decodeYaml, readBody, type DecodedObject } from '../http/body.js';
import { negotiate, parseContentType, type Representation } from '../http/negotiation.js';
import type { ResourceRequestInfo } from '../http/request-info.js';
import { sendJson, sendJsonList, setWarnings } from '../http/respond.js';
import { applyJsonPatch } from '../patch/jsonpatch.js';
import { applyMergePatch } from '../patch/mergepatch.js';
import { applyStrategicMergePatch } from '../patch/strategic.js';
import { parseIncludeObject, partialObjectMetadata, TablePrinter } from '../printing/table.js';
import type { KindVersion, Verb } from '../registry/kind.js';
import { listKindOf, verbsOf, type Registry, type ServedResource } from '../registry/registry.js';
import { parseFieldSelector } from '../selectors/fields.js';
import { parseLabelSelector } from '../selectors/labels.js';
import { structuralSchemaOf } from '../schema/structural.js';
import { ensureMetadata } from '../store/object.js';
import { FanOutMemo } from '../store/fan-out-memo.js';
import type { Stores } from '../store/stores.js';
import type { DeleteOptions, Mutation, ResourceStore, Selection, WriteOptions, WriteResult } from '../store/resource-store.js';
import type { FieldValidation } from '../store/decode.js';
import { bookmarkObject, startWatch, type ApiEvent } from '../store/watch.js';
import { WatchStream } from './watch-stream.js';

export interface ResourceHandlerOptions {
  /** How often idle watches get a BOOKMARK (kube: about a minute). */
  bookmarkIntervalMs: number;
  /** Watches slower than this many buffered bytes are closed, as kube drops slow watchers. */
  maxWatchBufferBytes: number;
  onWatchCountChange?: (delta: number) => void;
}

type Target = { served: ServedResource; store: ResourceStore; info: ResourceRequestInfo; user: UserInfo; query: URLSearchParams };

const objectRepresentations: Representation['kind'][] = ['plain', 'Table', 'PartialObjectMetadata'];
const listRepresentations: Representation['kind'][] = ['plain', 'Table', 'PartialObjectMetadataList'];
const watchRepresentations: Representation['kind'][] = ['plain', 'Table', 'PartialObjectMetadata'];
const mediaTypesForPatch = 'application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml';
const strategicMergePatch = 'application/strategic-merge-patch+json';

export class ResourceHandler {
  private readonly printers = new Map<KindVersion, TablePrinter>();
  /**
   * One event fans out to every watcher of the kind: encode it once, to bytes, so that the same
   * buffer goes to every response instead of each response converting the text to UTF-8 again.
   */
  private readonly encodings = new FanOutMemo<Buffer>();

  constructor(
    private readonly registry: Registry,
    /** The served kinds' stores, shared with every other reader and writer of their objects. */
    private readonly stores: Stores,
    private readonly options: ResourceHandlerOptions,
  ) {
    for (const definition of registry.kinds) {
      for (const version of definition.versions) this.printers.set(version, new TablePrinter(version.printerColumns));
    }
  }

  /** Resolves the kind a request addresses, or answers 404/405 as kube-apiserver does. */
  resolve(info: ResourceRequestInfo): { served: ServedResource; store: ResourceStore } {
    const served = this.registry.lookup(info.group, info.version, info.resource);
    if (!served) throw errors.pathNotFound();
    const { definition } = served;
    if (!definition.namespaced && info.namespace !== undefined) throw errors.pathNotFound();
    const store = this.stores.storeOf(definition);
    // Like kube, the all-namespaces path of a namespaced kind only lists and watches.
    if (definition.namespaced && info.namespace === undefined && info.verb !== 'list' && info.verb !== 'watch') {
      if (info.name !== undefined) throw errors.pathNotFound();
      throw errors.methodNotAllowed(store.ref, info.verb);
    }
    if (info.subresource !== undefined && !(info.subresource === 'status' && definition.subresources.status)) throw errors.pathNotFound();
    const verbs = info.subresource ? ['get', 'patch', 'update'] : verbsOf(definition);
    if (!verbs.includes(info.verb as Verb)) throw errors.methodNotAllowed(store.ref, info.verb);
    // A collection is created into, never replaced or patched; an object is replaced, never created into.
    const named = info.name !== undefined;
    if (named ? info.verb === 'create' : info.verb === 'update' || info.verb === 'patch') throw errors.methodNotAllowed(store.ref, info.verb);
    return { served, store };
  }

  async handle(request: IncomingMessage, response: ServerResponse, info: ResourceRequestInfo, user: UserInfo, query: URLSearchParams): Promise<void> {
    const target: Target = { ...this.resolve(info), info, user, query };
    switch (info.verb) {
      case 'get':
        return this.get(request, response, target);
      case 'list':
        return this.list(request, response, target);
      case 'watch':
        return this.watch(request, response, target);
      case 'create':
        return this.create(request, response, target);
      case 'update':
        return this.replace(request, response, target);
      case 'patch':
        return this.patch(request, response, target);
      case 'delete':
        return this.delete(request, response, target);
      case 'deletecollection':
        return this.deleteCollection(request, response, target);
      default:
        throw errors.methodNotAllowed(target.store.ref, info.verb);
    }
  }

  // ---- reads ---------------------------------------------------------------

  private async get(request: IncomingMessage, response: ServerResponse, { served, store, info, query }: Target): Promise<void> {
    const negotiated = negotiate(request.headers.accept, objectRepresentations);
    const object = await store.read(info.namespace, info.name!, served.version);
    const { representation } = negotiated;
    if (representation.kind === 'Table') {
      const table = this.printers.get(served.version)!.toTable(
        [object],
        { resourceVersion: String(ensureMetadata(object).resourceVersion ?? '') },
        {
          apiVersion: `meta.k8s.io/${representation.version}`,
          includeObject: parseIncludeObject(query.get('includeObject') ?? undefined),
          withColumnDefinitions: true,
          now: new Date(),
        },
      );
      return sendJson(response, 200, table, negotiated.contentType);
    }
    if (representation.kind === 'PartialObjectMetadata') {
      return sendJson(response, 200, partialObjectMetadata(object, `meta.k8s.io/${representation.version}`), negotiated.contentType);
    }
    sendJson(response, 200, object);
  }

  private async list(request: IncomingMessage, response: ServerResponse, { served, store, info, query }: Target): Promise<void> {
    const negotiated = negotiate(request.headers.accept, listRepresentations);
    if (query.has('sendInitialEvents')) {
      throw errors.invalid('meta.k8s.io', 'ListOptions', '', [FieldError.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list')]);
    }
    const limit = parseLimit(query.get('limit'));
    const result = await store.list(info.namespace, served.version, {
      ...parseSelection(query, store),
      limit,
      continueToken: query.get('continue') || undefined,
      resourceVersion: query.get('resourceVersion') ?? undefined,
      resourceVersionMatch: parseResourceVersionMatch(query.get('resourceVersionMatch')),
    });
    const listMeta: JsonObject = { resourceVersion: result.resourceVersion };
    if (result.continueToken) listMeta.continue = result.continueToken;
    const { representation } = negotiated;
    // Rows and metadata are made piece by piece as the list is written, not all before it.
    if (representation.kind === 'Table') {
      const printer = this.printers.get(served.version)!;
      const tableRequest = {
        apiVersion: `meta.k8s.io/${representation.version}`,
        includeObject: parseIncludeObject(query.get('includeObject') ?? undefined),
        withColumnDefinitions: true,
        now: new Date(),
      } as const;
      const table = { ...printer.toTable([], listMeta, tableRequest), rows: result.items };
      return sendJsonList(response, 200, table, 'rows', negotiated.contentType, (object: JsonObject) => printer.row(object, tableRequest));
    }
    if (representation.kind === 'PartialObjectMetadataList') {
      const apiVersion = `meta.k8s.io/${representation.version}` as const;
      return sendJsonList(
        response,
        200,
        { kind: 'PartialObjectMetadataList', apiVersion, metadata: listMeta, items: result.items },
        'items',
        negotiated.contentType,
        (item: JsonObject) => partialObjectMetadata(item, apiVersion),
      );
    }
    await sendJsonList(
      response,
      200,
      { apiVersion: served.groupVersion, kind: listKindOf(served.definition), metadata: listMeta, items: result.items },
      'items',
    );
  }

  private async watch(request: IncomingMessage, response: ServerResponse, { served, store, info, query }: Target): Promise<void> {
    const negotiated = negotiate(request.headers.accept, watchRepresentations);
    const sendInitialEvents = parseBoolean(query.get('sendInitialEvents'), 'sendInitialEvents');
    const match = query.get('resourceVersionMatch');
    if (sendInitialEvents !== undefined && match !== 'NotOlderThan') {
      throw errors.invalid('meta.k8s.io', 'ListOptions', '', [
        FieldError.forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'),
      ]);
    }
    if (sendInitialEvents === undefined && match) {
      throw errors.invalid('meta.k8s.io', 'ListOptions', '', [
        FieldError.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'),
      ]);
    }
    const allowWatchBookmarks = parseBoolean(query.get('allowWatchBookmarks'), 'allowWatchBookmarks') ?? false;
    const timeoutSeconds = parseTimeoutSeconds(query.get('timeoutSeconds'));
    const selection = parseSelection(query, store);
    const { representation, contentType } = negotiated;
    const printer = this.printers.get(served.version)!;
    const includeObject = parseIncludeObject(query.get('includeObject') ?? undefined);

    let tableColumnsSent = false;
    // What, besides the object, decides an encoding: the event's type, the group-version and the representation.
    const representationKey = `${served.groupVersion}|${representation.kind}|${'version' in representation ? representation.version : ''}`;
    const forms = { ADDED: `ADDED|${representationKey}`, MODIFIED: `MODIFIED|${representationKey}`, DELETED: `DELETED|${representationKey}` };
    const encode = (event: ApiEvent): string | Buffer => {
      // Table rows carry ages and per-watcher column headers; other encodings depend only on the event.
      if (representation.kind === 'Table') {
        const table = printer.toTable(
          [event.object],
          { resourceVersion: String(ensureMetadata(event.object).resourceVersion ?? '') },
          {
            apiVersion: `meta.k8s.io/${representation.version}`,
            includeObject,
            withColumnDefinitions: !tableColumnsSent,
            now: new Date(),
          },
        );
        tableColumnsSent = true;
        return `${JSON.stringify({ type: event.type, object: table })}\n`;
      }
      const encodeEvent = () => {
        const object =
          representation.kind === 'PartialObjectMetadata' ? partialObjectMetadata(event.object, `meta.k8s.io/${representation.version}`) : event.object;
        return `${JSON.stringify({ type: event.type, object })}\n`;
      };
      // A bookmark is made for its one watcher: nothing to share.
      return event.type === 'BOOKMARK' ? encodeEvent() : this.encodings.get(event.object, forms[event.type], () => Buffer.from(encodeEvent()));
    };

    // kube bounds watches without timeoutSeconds to 30-60 minutes so load rebalances.
    const durationMs = timeoutSeconds !== undefined ? timeoutSeconds * 1000 : (1800 + Math.random() * 1800) * 1000;
    const stream = new WatchStream(request, response, {
      // Bookmarks carry only a resourceVersion; they are not turned into table rows.
      encode: (event) =>
        event.type === 'BOOKMARK' && representation.kind === 'Table' ? `${JSON.stringify({ type: 'BOOKMARK', object: event.object })}\n` : encode(event),
      bookmark: allowWatchBookmarks ? (revision) => bookmarkObject(store, served.version, revision) : undefined,
      bookmarkIntervalMs: this.options.bookmarkIntervalMs,
      durationMs,
      maxBufferBytes: this.options.maxWatchBufferBytes,
      onEnd: () => this.options.onWatchCountChange?.(-1),
    });
    const active = await startWatch(
      store,
      info.namespace,
      served.version,
      { ...selection, resourceVersion: query.get('resourceVersion') ?? undefined, sendInitialEvents: sendInitialEvents ?? false, allowWatchBookmarks },
      (event) => stream.emit(event),
      (error) => stream.fail(error),
    );
    this.options.onWatchCountChange?.(1);
    stream.start(active, contentType);
  }

  // ---- writes --------------------------------------------------------------

  private async create(request: IncomingMessage, response: ServerResponse, { served, store, info, user, query }: Target): Promise<void> {
    const body = decodeObjectBody(parseContentType(request.headers['content-type']).mediaType, await readBody(request), bodyTarget(served));
    const options = writeOptions(request, query, user, 'CreateOptions');
    const duplicates = duplicateFieldWarnings(body, options.fieldValidation);
    const result = await store.create(info.namespace, body.value, served.version, options);
    respondWrite(response, result, 201, duplicates);
  }

  private async replace(request: IncomingMessage, response: ServerResponse, { served, store, info, user, query }: Target): Promise<void> {
    const body = decodeObjectBody(parseContentType(request.headers['content-type']).mediaType, await readBody(request), bodyTarget(served));
    const options = writeOptions(request, query, user, 'UpdateOptions');
    const duplicates = duplicateFieldWarnings(body, options.fieldValidation);
    const result = await store.replace(info.namespace, info.name!, body.value, served.version, statusSubresource(info), options);
    respondWrite(response, result, 200, duplicates);
  }

  private async patch(request: IncomingMessage, response: ServerResponse, { served, store, info, user, query }: Target): Promise<void> {
    const { mediaType } = parseContentType(request.headers['content-type']);
    const body = await readBody(request);
    const options = writeOptions(request, query, user, 'PatchOptions');
    const force = parseBoolean(query.get('force'), 'force');
    const subresource = statusSubresource(info);
    if (mediaType === 'application/apply-patch+yaml') {
      if (!query.get('fieldManager')) {
        throw errors.invalid('meta.k8s.io', 'PatchOptions', '', [FieldError.required('fieldManager', 'is required for apply patch')]);
      }
      const applied = decodeYaml(body);
      const duplicates = duplicateFieldWarnings(applied, options.fieldValidation);
      const result = await store.apply(info.namespace, info.name!, applied.value, served.version, subresource, { ...options, force: force ?? false });
      return respondWrite(response, result, result.created ? 201 : 200, duplicates);
    }
    if (force !== undefined) {
      throw errors.invalid('meta.k8s.io', 'PatchOptions', '', [FieldError.forbidden('force', 'may not be specified for non-apply patch')]);
    }
    let patchFn: Mutation;
    if (mediaType === 'application/json-patch+json') {
      const operations = decodeJson(body);
      patchFn = (current) => applyJsonPatch(current, operations);
    } else if (mediaType === 'application/merge-patch+json') {
      const patch = decodeJson(body);
      // RFC 7386 would let a scalar replace the whole object; kube refuses it.
      if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) throw errors.badRequest('Invalid JSON Patch');
      patchFn = (current) => applyMergePatch(current, patch);
    } else if (mediaType === strategicMergePatch && served.definition.builtIn) {
      const patch = decodeJson(body);
      const schema = structuralSchemaOf(served.version);
      patchFn = (current) => applyStrategicMergePatch(current, patch, schema);
    } else {
      // Strategic merge patch lands here too for CRD-like kinds, which have no patch strategies, as in kube.
      const accepted = served.definition.builtIn ? `${mediaTypesForPatch}, ${strategicMergePatch}` : mediaTypesForPatch;
      throw errors.unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: ${accepted}`);
    }
    // The store decodes the patched object like a body, afresh on each attempt.
    const result = await store.patch(info.namespace, info.name!, patchFn, served.version, subresource, options);
    respondWrite(response, result, 200);
  }

  private async delete(request: IncomingMessage, response: ServerResponse, { served, store, info, user, query }: Target): Promise<void> {
    const options = await deleteOptions(request, query, user);
    const result = await store.delete(info.namespace, info.name!, served.version, options);
    sendJson(response, 200, result.object);
  }

  private async deleteCollection(request: IncomingMessage, response: ServerResponse, { served, store, info, user, query }: Target): Promise<void> {
    const options = await deleteOptions(request, query, user);
    const items = await store.deleteCollection(info.namespace, served.version, parseSelection(query, store), options);
    sendJson(response, 200, { apiVersion: served.groupVersion, kind: listKindOf(served.definition), metadata: {}, items });
  }
}

/** `parsingWarnings`: the body's duplicate fields, which precede the store's warnings (unknown fields first, then validation's). */
function respondWrite(response: ServerResponse, result: WriteResult, code: number, parsingWarnings: string[] = []): void {
  setWarnings(response, [...parsingWarnings, ...result.warnings]);
  sendJson(response, code, result.object);
}

/** kube's strict decoding: a field the body sets twice is an error under Strict and a warning under Warn. */
function duplicateFieldWarnings(decoded: DecodedObject, validation: FieldValidation): string[] {
  const messages = decoded.duplicateFields.map((field) => `duplicate field "${field}"`);
  if (validation === 'Strict' && messages.length > 0) throw errors.badRequest(`strict decoding error: ${messages.join(', ')}`);
  return validation === 'Warn' ? messages : [];
}

function statusSubresource(info: ResourceRequestInfo): 'status' | undefined {
  return info.subresource === 'status' ? 'status' : undefined;
}

function parseSelection(query: URLSearchParams, store: ResourceStore): Selection {
  const selection: Selection = {};
  const labels = query.get('labelSelector');
  const fields = query.get('fieldSelector');
  if (labels) selection.labelSelector = parseLabelSelector(labels);
  if (fields) selection.fieldSelector = parseFieldSelector(fields, { fields: store.strategy.selectableFields, builtIn: store.definition.builtIn ?? false });
  return selection;
}

function parseLimit(value: string | null): number | undefined {
  if (value === null || value === '') return undefined;
  // Decimal digits only, within int64 as kube parses it: `1e30` is no limit a client meant.
  if (!/^\d{1,18}$/.test(value)) throw errors.badRequest(`invalid limit "${value}": must be a non-negative integer`);
  const limit = Number(value);
  return limit === 0 ? undefined : limit;
}

/**
 * Node fires a timer set past 2^31-1 ms (about 24.8 days) at once, so a longer timeout would end
 * the watch immediately and send its client into a reconnect loop; kube honours any int64 count
 * of seconds, and nobody can tell 24.8 days from longer.
 */
const maxWatchTimeoutSeconds = Math.floor(0x7fffffff / 1000);

/** 0, like no value, means the server's choice, as in kube. */
function parseTimeoutSeconds(value: string | null): number | undefined {
  if (value === null || value === '') return undefined;
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 0) throw errors.badRequest(`invalid timeoutSeconds "${value}"`);
  return seconds === 0 ? undefined : Math.min(seconds, maxWatchTimeoutSeconds);
}

function parseBoolean(value: string | null, name: string): boolean | undefined {
  if (value === null || value === '') return undefined;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw errors.badRequest(`invalid value for ${name}: "${value}"`);
}

function parseResourceVersionMatch(value: string | null): 'Exact' | 'NotOlderThan' | undefined {
  if (value === null || value === '') return undefined;
  if (value === 'Exact' || value === 'NotOlderThan') return value;
  throw errors.invalid('meta.k8s.io', 'ListOptions', '', [FieldError.notSupported('resourceVersionMatch', value, ['Exact', 'NotOlderThan'])]);
}

const fieldValidations: readonly FieldValidation[] = ['Strict', 'Warn', 'Ignore'];

/** The store's write options, and how this request wants unknown fields handled while decoding. */
function writeOptions(request: IncomingMessage, query: URLSearchParams, user: UserInfo, optionsKind: string): WriteOptions {
  const dryRun = query.getAll('dryRun');
  const unsupported = dryRun.filter((v) => v !== 'All');
  if (unsupported.length > 0) {
    throw errors.invalid('meta.k8s.io', optionsKind, '', [FieldError.notSupported('dryRun', unsupported[0], ['All'])]);
  }
  const validation = query.get('fieldValidation') || 'Warn';
  if (!fieldValidations.includes(validation as FieldValidation)) {
    throw errors.invalid('meta.k8s.io', optionsKind, '', [FieldError.notSupported('fieldValidation', validation, fieldValidations)]);
  }
  return {
    dryRun: dryRun.length > 0,
    fieldManager: fieldManagerOf(request, query, optionsKind),
    fieldValidation: validation as FieldValidation,
    user,
  };
}

/** The fieldManager parameter, or kube's default: the User-Agent up to its first '/'. */
function fieldManagerOf(request: IncomingMessage, query: URLSearchParams, optionsKind: string): string {
  const explicit = query.get('fieldManager');
  if (explicit !== null && explicit !== '') {
    if (explicit.length > 128) {
      throw errors.invalid('meta.k8s.io', optionsKind, '', [FieldError.tooLong('fieldManager', explicit, 128)]);
    }
    return explicit;
  }
  const agent = request.headers['user-agent'] ?? '';
  return agent.split('/')[0].slice(0, 128) || 'unknown';
}

async function deleteOptions(request: IncomingMessage, query: URLSearchParams, user: UserInfo): Promise<DeleteOptions> {
  const raw = await readBody(request);
  let body: JsonObject = {};
  if (raw.length > 0 && raw.toString('utf8').trim() !== '') {
    const decoded = decodeJson(raw);
    if (typeof decoded !== 'object' || decoded === null || Array.isArray(decoded)) throw errors.badRequest('DeleteOptions must be a JSON object');
    body = decoded as JsonObject;
    if (body.kind !== undefined && body.kind !== 'DeleteOptions') throw errors.badRequest(`expected DeleteOptions, got ${String(body.kind)}`);
  }
  const dryRun = [...query.getAll('dryRun'), ...(Array.isArray(body.dryRun) ? (body.dryRun as string[]) : [])];
  if (dryRun.some((v) => v !== 'All')) {
    throw errors.invalid('meta.k8s.io', 'DeleteOptions', '', [
      FieldError.notSupported(
        'dryRun',
        dryRun.find((v) => v !== 'All'),
        ['All'],
      ),
    ]);
  }
  const policy = (body.propagationPolicy as string | undefined) ?? query.get('propagationPolicy') ?? undefined;
  const orphan = body.orphanDependents ?? (query.has('orphanDependents') ? query.get('orphanDependents') === 'true' : undefined);
  if (policy !== undefined && !['Background', 'Foreground', 'Orphan'].includes(policy)) {
    throw errors.invalid('meta.k8s.io', 'DeleteOptions', '', [FieldError.notSupported('propagationPolicy', policy, ['Foreground', 'Background', 'Orphan'])]);
  }
  if (policy !== undefined && orphan !== undefined) {
    throw errors.invalid('meta.k8s.io', 'DeleteOptions', '', [
      FieldError.invalid('propagationPolicy', policy, 'orphanDependents and deletionPropagation cannot be both set'),
    ]);
  }
  const preconditions = (body.preconditions ?? undefined) as DeleteOptions['preconditions'];
  return {
    dryRun: dryRun.length > 0,
    preconditions,
    propagationPolicy: (policy as DeleteOptions['propagationPolicy']) ?? (orphan === true ? 'Orphan' : undefined),
    user,
  };
}

/** What a request body must be: the served version's object, in its group-version. */
function bodyTarget(served: Target['served']) {
  return { version: served.version, kind: served.definition.kind, groupVersion: served.groupVersion };
}

/**
 * Request bodies: size limit, media type and decoding (JSON or YAML).
 * Decoding errors become 400s that quote the parser, as kube does. Every
 * decoded value is checked against the nesting limit before anything walks
 * it, and object bodies report the fields they set twice.
 */
import type { IncomingMessage } from 'node:http';
import { isPair, isScalar, isSeq, parseDocument, visit, type Document } from 'yaml';
import { type ApiError, errors } from '../errors.js';
import { maxNestingDepth, nestingDepth } from '../patch/json-value.js';
import { duplicateJsonFields } from './json-duplicates.js';
import type { KindVersion } from '../registry/kind.js';
import type { JsonObject } from '../../storage/interface.js';
import { openEnvelope } from '../protobuf/envelope.js';

export const maxRequestBodyBytes = 3 * 1024 * 1024;

/**
 * How much of a refused body is still read, and dropped, before the request is cut: a 10 MiB POST
 * three times over, or 5 s, whichever comes first (reading costs the server no memory, and TLS
 * decryption of 32 MiB some 30 ms).
 */
const drainBytes = 32 * 1024 * 1024;
const drainMs = 5_000;

/**
 * Reads the whole body, refusing it once it passes `limit`. How long the read may take is the
 * request deadline's business (server.ts); a client that goes away mid-body gets a 400 it will
 * not read, which keeps it out of the server-error counts.
 */
export function readBody(request: IncomingMessage, limit = maxRequestBodyBytes): Promise<Buffer> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(refuse(request, limit));
  // Listeners rather than an async iterator: leaving an iterator early destroys the socket before the 413 is sent.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (outcome: () => void) => {
      request.off('data', onData).off('end', onEnd).off('error', onFailure).off('close', onFailure);
      outcome();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) settle(() => reject(refuse(request, limit)));
      else chunks.push(chunk);
    };
    const onEnd = () => settle(() => resolve(Buffer.concat(chunks)));
    const onFailure = () => settle(() => reject(errors.badRequest('the request body was not received in full')));
    request.on('data', onData).on('end', onEnd).on('error', onFailure).on('close', onFailure);
  });
}

/**
 * The 413 for a body past `limit`, answered at once while the rest of the body is read and dropped
 * (up to `drainBytes` or `drainMs`, then the request is cut), as Go's server drains before it
 * closes: a client that writes its whole body before reading then reads the 413, where a
 * connection closed under it was reset and the client saw EOF. A body that ends within the bound
 * leaves the connection open for the next request.
 */
function refuse(request: IncomingMessage, limit: number): ApiError {
  let drained = 0;
  const stop = () => {
    clearTimeout(timer);
    request.off('data', onData).off('end', stop).off('close', stop);
  };
  const cut = () => {
    stop();
    request.destroy();
  };
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > drainBytes) cut();
  };
  const timer = setTimeout(cut, drainMs).unref();
  request.on('data', onData).once('end', stop).once('close', stop);
  return errors.bodyTooLarge(limit, true);
}

/** A decoded object body, with the fields it sets more than once (for fieldValidation). */
export interface DecodedObject {
  value: unknown;
  duplicateFields: string[];
}

export function decodeJson(body: Buffer): unknown {
  return parseJsonText(jsonText(body));
}

function jsonText(body: Buffer): string {
  const text = body.toString('utf8');
  if (text.trim() === '') throw errors.badRequest('the body of the request was empty');
  return text;
}

function parseJsonText(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw errors.badRequest(`error decoding request body: ${withoutExcerpt((error as Error).message)}`);
  }
  return withinNestingLimit(value);
}

function decodeJsonObject(body: Buffer): DecodedObject {
  const text = jsonText(body);
  const value = parseJsonText(text);
  return { value, duplicateFields: duplicateJsonFields(text) };
}

/** V8 quotes the text around a syntax error, which can be a Secret's data; the position is enough. */
function withoutExcerpt(message: string): string {
  return message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, ' in JSON');
}

function withinNestingLimit<T>(value: T): T {
  if (nestingDepth(value) > maxNestingDepth) throw tooDeep();
  return value;
}

function tooDeep() {
  return errors.badRequest(`error decoding request body: the object nests more than ${maxNestingDepth} levels deep`);
}

/** YAML is a superset of JSON, so this also reads JSON bodies sent as YAML. */
export function decodeYaml(body: Buffer): DecodedObject {
  const text = body.toString('utf8');
  if (text.trim() === '') throw errors.badRequest('the body of the request was empty');
  const document = parseDocument(text, { uniqueKeys: false, version: '1.2' });
  if (document.errors.length > 0) {
    // The parser recurses into flow collections and reports running out of stack as a syntax error.
    if (document.errors.some((error) => error.message.includes('Maximum call stack size exceeded'))) throw tooDeep();
    throw errors.badRequest(`error converting YAML to JSON: ${document.errors[0].message.split('\n')[0]}`);
  }
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    // The library refuses alias bombs (and anything else it cannot build) by throwing.
    throw errors.badRequest(`error converting YAML to JSON: yaml: ${(error as Error).message}`);
  }
  return { value: withinNestingLimit(value), duplicateFields: duplicateYamlFields(document) };
}

/** Runs after the nesting check, so the library's recursive visit stays shallow. */
function duplicateYamlFields(document: Document): string[] {
  const duplicates: string[] = [];
  visit(document, {
    Map(_, map, ancestors) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        if (seen.has(key)) duplicates.push(yamlPath([...ancestors, map], key));
        seen.add(key);
      }
    },
  });
  return duplicates;
}

/** `spec.ports[0].name` for a key of the map reached through `ancestors`. */
function yamlPath(ancestors: readonly unknown[], key: string): string {
  let path = '';
  for (let i = 0; i < ancestors.length; i++) {
    const node = ancestors[i];
    if (isPair(node)) {
      const name = isScalar(node.key) ? String(node.key.value) : String(node.key);
      path += path === '' ? name : `.${name}`;
    } else if (isSeq(node)) {
      path += `[${node.items.indexOf(ancestors[i + 1] as never)}]`;
    }
  }
  return path === '' ? key : `${path}.${key}`;
}

const protobufMediaType = 'application/vnd.kubernetes.protobuf';

/**
 * Decodes a POST/PUT body by its Content-Type; protobuf for a kind that has
 * a decoder for it (`target`: the served kind and version).
 */
export function decodeObjectBody(mediaType: string, body: Buffer, target: { version: KindVersion; kind: string; groupVersion: string }): DecodedObject {
  const decodeProtobuf = target.version.protobuf;
  switch (mediaType) {
    case 'application/json':
      return decodeJsonObject(body);
    case 'application/yaml':
      return decodeYaml(body);
    default:
      // Protobuf only for a kind that has a decoder: kube takes it for built-in kinds, never for CRDs.
      if (mediaType === protobufMediaType && decodeProtobuf) return { value: protobufObject(body, decodeProtobuf, target), duplicateFields: [] };
      throw errors.unsupportedMediaType(
        `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml${decodeProtobuf ? `, ${protobufMediaType}` : ''}`,
      );
  }
}

function protobufObject(body: Buffer, decode: (raw: Uint8Array) => JsonObject, target: { kind: string; groupVersion: string }): JsonObject {
  const object = openEnvelope(body);
  if (!object) throw errors.badRequest('the body is not a Kubernetes protobuf object (the k8s\\0 prefix and a runtime.Unknown message)');
  if (object.kind !== target.kind || object.apiVersion !== target.groupVersion) {
    throw errors.badRequest(`the body holds a ${object.apiVersion}, Kind=${object.kind}, not a ${target.groupVersion}, Kind=${target.kind}`);
  }
  let decoded: JsonObject;
  try {
    decoded = decode(object.raw);
  } catch (error) {
    throw errors.badRequest(`the protobuf ${object.kind} cannot be decoded: ${error instanceof Error ? error.message : String(error)}`);
  }
  // Its managedFields carry JSON of their own, held to the same depth as a JSON body.
  return withinNestingLimit({ apiVersion: object.apiVersion, kind: object.kind, ...decoded });
}

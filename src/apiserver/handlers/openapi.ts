/**
 * OpenAPI v2 and v3 documents, built once from the registry and served with
 * the caching headers kube-aggregator and kubectl rely on.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors } from '../errors.js';
import { negotiateMediaType } from '../http/negotiation.js';
import { buildOpenApiV2 } from '../openapi/v2.js';
import { encodeOpenApiV2 } from '../openapi/v2-protobuf.js';
import { buildOpenApiV3 } from '../openapi/v3.js';
import type { Registry } from '../registry/registry.js';

interface Document {
  body: string | Buffer;
  hash: string;
}

/** What kube-openapi names the protobuf form in Accept, and the Content-Type it answers with. */
const v2Protobuf = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
const v2ProtobufContentType = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

export class OpenApiHandler {
  private readonly v2: Document & { body: string };
  /** Encoded on first request: few clients ask for it. */
  private v2AsProtobuf: Document | undefined;
  private readonly v3 = new Map<string, Document>();

  constructor(registry: Registry) {
    this.v2 = document(buildOpenApiV2([...registry.kinds]));
    for (const group of registry.groups()) {
      for (const version of group.versions) {
        const kinds = registry.resourcesIn(group.name, version).map((r) => r.definition);
        const key = group.name === '' ? `api/${version}` : `apis/${group.name}/${version}`;
        this.v3.set(key, document(buildOpenApiV3(group.name, version, kinds)));
      }
    }
  }

  /** Answers /openapi/* paths; returns false for other paths. */
  handle(request: IncomingMessage, response: ServerResponse, path: string, query: URLSearchParams): boolean {
    if (path === '/openapi/v2') {
      const mediaType = negotiateMediaType(request.headers.accept, ['application/json', v2Protobuf]);
      if (mediaType === undefined) throw errors.notAcceptable(`only the following media types are accepted: application/json, ${v2Protobuf}`);
      if (mediaType === 'application/json') this.serveDocument(request, response, this.v2, false, mediaType);
      else {
        // From the served JSON, so the built document is not held for a form few clients ask for.
        this.v2AsProtobuf ??= encoded(encodeOpenApiV2(JSON.parse(this.v2.body) as Record<string, unknown>));
        this.serveDocument(request, response, this.v2AsProtobuf, false, v2ProtobufContentType);
      }
      return true;
    }
    if (path === '/openapi/v3' || path === '/openapi/v3/') {
      const paths = Object.fromEntries([...this.v3].map(([key, doc]) => [key, { serverRelativeURL: `/openapi/v3/${key}?hash=${doc.hash}` }]));
      const body = JSON.stringify({ paths });
      response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      response.end(body);
      return true;
    }
    if (path.startsWith('/openapi/v3/')) {
      const key = path.slice('/openapi/v3/'.length);
      const doc = this.v3.get(key);
      if (!doc) throw errors.pathNotFound();
      const requestedHash = query.get('hash');
      if (requestedHash && requestedHash !== doc.hash) {
        response.writeHead(301, { Location: `/openapi/v3/${key}?hash=${doc.hash}` });
        response.end();
        return true;
      }
      // The v3 documents are JSON only; a protobuf-only Accept gets 406 rather than mislabelled JSON.
      if (negotiateMediaType(request.headers.accept, ['application/json']) === undefined) throw errors.notAcceptable();
      this.serveDocument(request, response, doc, requestedHash === doc.hash, 'application/json');
      return true;
    }
    return false;
  }

  /** Serves a negotiated document: `contentType` is what the Accept header was matched to. */
  private serveDocument(request: IncomingMessage, response: ServerResponse, doc: Document, immutable: boolean, contentType: string): void {
    const etag = `"${doc.hash}"`;
    response.setHeader('ETag', etag);
    response.setHeader('Vary', 'Accept');
    if (immutable) {
      response.setHeader('Cache-Control', 'public, immutable');
      response.setHeader('Expires', new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString());
    }
    if (request.headers['if-none-match'] === etag) {
      response.writeHead(304);
      response.end();
      return;
    }
    response.writeHead(200, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(doc.body) });
    response.end(doc.body);
  }
}

function document(content: unknown): Document & { body: string } {
  return encoded(JSON.stringify(content));
}

function encoded<Body extends string | Buffer>(body: Body): Document & { body: Body } {
  return { body, hash: createHash('sha512').update(body).digest('hex').slice(0, 128).toUpperCase() };
}

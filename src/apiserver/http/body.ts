/**
 * Request bodies: size limit, media type and decoding (JSON or YAML).
 * Decoding errors become 400s that quote the parser, as kube does.
 */
import type { IncomingMessage } from 'node:http';
import { parseDocument } from 'yaml';
import { errors } from '../errors.js';

export const maxRequestBodyBytes = 3 * 1024 * 1024;

export async function readBody(request: IncomingMessage, limit = maxRequestBodyBytes): Promise<Buffer> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    request.resume();
    throw errors.tooLarge(`Request entity too large: limit is ${limit}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      request.resume();
      throw errors.tooLarge(`Request entity too large: limit is ${limit}`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export function decodeJson(body: Buffer): unknown {
  const text = body.toString('utf8');
  if (text.trim() === '') throw errors.badRequest('the body of the request was empty');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw errors.badRequest(`error decoding request body: ${withoutExcerpt((error as Error).message)}`);
  }
}

/** V8 quotes the text around a syntax error, which can be a Secret's data; the position is enough. */
function withoutExcerpt(message: string): string {
  return message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, ' in JSON');
}

/** YAML is a superset of JSON, so this also reads JSON bodies sent as YAML. */
export function decodeYaml(body: Buffer): unknown {
  const text = body.toString('utf8');
  if (text.trim() === '') throw errors.badRequest('the body of the request was empty');
  const document = parseDocument(text, { uniqueKeys: true, version: '1.2' });
  if (document.errors.length > 0) {
    throw errors.badRequest(`error converting YAML to JSON: ${document.errors[0].message.split('\n')[0]}`);
  }
  return document.toJS({ maxAliasCount: 100 });
}

/** Decodes a POST/PUT body by its Content-Type. */
export function decodeObjectBody(mediaType: string, body: Buffer): unknown {
  switch (mediaType) {
    case 'application/json':
      return decodeJson(body);
    case 'application/yaml':
      return decodeYaml(body);
    default:
      throw errors.unsupportedMediaType(
        `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`,
      );
  }
}

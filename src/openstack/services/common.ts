/**
 * What every typed service client shares: one way to send a request (so the
 * idempotency flag follows the HTTP method everywhere), link-following list
 * pagination with a hard bound, and the query encodings the services agree on.
 */
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { OpenStackError } from '../errors.js';
import type { HttpMethod, ServiceRequest, ServiceTransport, ServiceType } from '../transport.js';

export type Query = NonNullable<ServiceRequest['query']>;

interface CallOptions {
  query?: Query;
  /** Overrides the client's default microversion for one call. */
  microversion?: string;
}

/** One page of a list: its items and the service's link to the next page, if any. */
export interface Page<T> {
  items: T[];
  next?: string | undefined;
}

/**
 * A lookup that silently stopped early could report "no such resource" and
 * make the reconciler create a duplicate, so running past this many pages is
 * an error rather than a truncated answer.
 */
export const maxPages = 100;

/** Accepts any body, including none (204, or a 202 whose body nobody reads). */
export const anyBody = z.unknown();

const linksSchema = z.array(z.looseObject({ rel: z.string(), href: z.string() }));

function nextLink(links: z.infer<typeof linksSchema> | undefined): string | undefined {
  return links?.find((link) => link.rel === 'next')?.href;
}

/**
 * A list body in the convention of Neutron, Nova, Octavia and Cinder:
 * `{<key>: [...], <key>_links: [{rel: 'next', href}]}`, the links present
 * only when there is (or may be) another page.
 */
export function linkedList<T>(key: string, item: z.ZodType<T>): z.ZodType<Page<T>> {
  const links = `${key}_links`;
  return z.object({ [key]: z.array(item), [links]: linksSchema.optional() }).transform((body) => ({
    items: body[key] as T[],
    next: nextLink(body[links] as z.infer<typeof linksSchema> | undefined),
  }));
}

/** Ids, names and tags become one path segment each, whatever characters they hold. */
export function segment(value: string): string {
  return encodeURIComponent(value);
}

export class ServiceCalls {
  constructor(
    private readonly transport: ServiceTransport,
    readonly service: ServiceType,
    private readonly microversion?: string,
  ) {}

  get<T>(path: string, schema: z.ZodType<T>, options: CallOptions = {}): Promise<T> {
    return this.send('GET', path, undefined, schema, options);
  }

  /** Never repeated by the session: a POST that reached the service may already have created something. */
  post<T>(path: string, body: unknown, schema: z.ZodType<T>, options: CallOptions = {}): Promise<T> {
    return this.send('POST', path, body, schema, options);
  }

  put<T>(path: string, body: unknown, schema: z.ZodType<T>, options: CallOptions = {}): Promise<T> {
    return this.send('PUT', path, body, schema, options);
  }

  /** PATCH in a service's own JSON patch media type (Glance's); a patch of whole values, so repeatable. */
  async patch<T>(path: string, body: unknown, schema: z.ZodType<T>, contentType: string): Promise<T> {
    return (await this.transport.request(this.service, { method: 'PATCH', path, body, contentType, idempotent: true }, schema)).body;
  }

  /** PUT of raw data (image content): read once, so never repeated. */
  async upload(path: string, stream: Readable): Promise<void> {
    await this.transport.request(this.service, { method: 'PUT', path, stream, idempotent: false }, anyBody);
  }

  async delete(path: string, options: CallOptions = {}): Promise<void> {
    await this.send('DELETE', path, undefined, anyBody, options);
  }

  /**
   * Fetches every page. The next page keeps the caller's query and takes
   * whatever the service's next link carries (marker, limit, its own copy of
   * the filters), so it works for absolute links (Neutron, Nova, Octavia,
   * Cinder) and relative ones (Glance) alike, whatever prefix they repeat.
   */
  async list<T>(path: string, schema: z.ZodType<Page<T>>, options: CallOptions = {}): Promise<T[]> {
    const items: T[] = [];
    let query: Query = options.query ?? {};
    const visited = new Set<string>();
    for (let fetched = 1; ; fetched++) {
      const current = await this.get(path, schema, { ...options, query });
      items.push(...current.items);
      if (current.next === undefined || current.items.length === 0) return items;
      if (fetched >= maxPages) throw this.listError(path, `the list did not end after ${maxPages} pages; use narrower filters`);
      query = followLink(query, current.next);
      const key = JSON.stringify(query);
      if (visited.has(key)) throw this.listError(path, `the service links back to a page already read (${current.next})`);
      visited.add(key);
    }
  }

  private async send<T>(method: HttpMethod, path: string, body: unknown, schema: z.ZodType<T>, options: CallOptions): Promise<T> {
    const microversion = options.microversion ?? this.microversion;
    const request: ServiceRequest = {
      method,
      path,
      // Repeating a read, a delete by id or a PUT of a whole value cannot cause a second effect.
      idempotent: method !== 'POST',
      ...(options.query === undefined ? {} : { query: options.query }),
      ...(body === undefined ? {} : { body }),
      ...(microversion === undefined ? {} : { microversion }),
    };
    return (await this.transport.request(this.service, request, schema)).body;
  }

  private listError(path: string, detail: string): OpenStackError {
    return new OpenStackError({ kind: 'Unexpected', detail, service: this.service, method: 'GET', path });
  }
}

function followLink(query: Query, href: string): Query {
  const params = new URL(href, 'http://next.invalid').searchParams;
  const merged: Query = { ...query };
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    merged[key] = values.length === 1 ? values[0] : values;
  }
  return merged;
}

/** Tag filters of Neutron, Nova and Octavia: each a list, sent as one comma-separated parameter. */
export interface TagFilters {
  /** Resources carrying all of these. */
  tags?: readonly string[];
  /** Resources carrying at least one of these. */
  'tags-any'?: readonly string[];
  /** Resources not carrying all of these. */
  'not-tags'?: readonly string[];
  /** Resources carrying none of these. */
  'not-tags-any'?: readonly string[];
}

const tagFilterKeys = ['tags', 'tags-any', 'not-tags', 'not-tags-any'] as const;

/**
 * Encodes the tag filters. An empty list means "no filter" (an empty
 * parameter would match nothing). A tag containing a comma cannot be
 * expressed, since the service would split it into two tags.
 */
export function tagQuery(service: ServiceType, filters: TagFilters): Query {
  const query: Query = {};
  for (const key of tagFilterKeys) {
    const tags = filters[key];
    if (tags === undefined || tags.length === 0) continue;
    const withComma = tags.find((tag) => tag.includes(','));
    if (withComma !== undefined) {
      throw new OpenStackError({
        kind: 'BadRequest',
        detail: `tag filter ${key} cannot contain "${withComma}": tags in a filter are separated by commas`,
        service,
      });
    }
    query[key] = tags.join(',');
  }
  return query;
}

/** Copies the given keys of `filters` whose values are set, for use as query parameters. */
export function pick<F extends object>(filters: F, keys: readonly (keyof F & string)[]): Query {
  const query: Query = {};
  for (const key of keys) {
    const value = filters[key];
    if (value !== undefined) query[key] = value as Query[string];
  }
  return query;
}

/**
 * A map whose values are all meant to have one shape (quota usage per
 * resource). Entries of another shape are dropped instead of failing the
 * response, because services add scalar keys beside them (Cinder's `id`).
 */
export function recordOf<T>(schema: z.ZodType<T>): z.ZodType<Record<string, T>> {
  return z.record(z.string(), z.unknown()).transform((raw) => {
    const result: Record<string, T> = {};
    for (const [key, value] of Object.entries(raw)) {
      const parsed = schema.safeParse(value);
      if (parsed.success) result[key] = parsed.data;
    }
    return result;
  });
}

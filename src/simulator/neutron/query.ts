/**
 * Neutron's list semantics over rendered objects: attribute filters (values
 * of one key are ORed, keys ANDed, unknown keys rejected), the tag filters,
 * `fields`, `sort_key`/`sort_dir`, and `limit`/`marker` with page links.
 */
import { badRequest, badResourceRequest, type NeutronError, pyList } from './errors.js';
import { boolean, Invalid } from './body.js';

export type View = Record<string, unknown>;
export type Query = Record<string, string | string[] | undefined>;

const CONTROL_KEYS = new Set(['fields', 'sort_key', 'sort_dir', 'limit', 'marker', 'page_reverse']);
const TAG_KEYS = ['tags', 'tags-any', 'not-tags', 'not-tags-any'];

export interface ListSpec {
  collection: string;
  /** Attributes Neutron accepts as filters (`is_filter`), besides the tag filters. */
  filters: readonly string[];
  /** Attributes accepted as `sort_key`. */
  sortKeys: readonly string[];
  /** Filters that are not plain attribute comparisons, e.g. ports' `fixed_ips`. */
  custom?: Record<string, (view: View, values: string[]) => boolean>;
  /** The NotFound of this resource, for an unknown marker. */
  notFound(id: string): NeutronError;
}

export const values = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

function convertBoolean(v: string): boolean {
  try {
    return boolean(v);
  } catch (error) {
    if (error instanceof Invalid && error.error) throw error.error;
    throw error;
  }
}

function matches(actual: unknown, wanted: string[]): boolean {
  if (Array.isArray(actual)) return actual.some((a) => matches(a, wanted));
  if (typeof actual === 'boolean') return wanted.some((w) => convertBoolean(w) === actual);
  if (typeof actual === 'number') return wanted.some((w) => Number(w) === actual);
  if (actual === null || actual === undefined) return false;
  return wanted.includes(String(actual));
}

function tagFilter(key: string, wanted: string[]): (tags: string[]) => boolean {
  const set = wanted.flatMap((w) => w.split(',')).filter((t) => t !== '');
  switch (key) {
    case 'tags':
      return (tags) => set.every((t) => tags.includes(t));
    case 'tags-any':
      return (tags) => set.some((t) => tags.includes(t));
    case 'not-tags':
      return (tags) => !set.every((t) => tags.includes(t));
    default:
      return (tags) => !set.some((t) => tags.includes(t));
  }
}

/** Validates the query's filters and returns the predicate over views. */
function filterOf(spec: ListSpec, query: Query): (view: View) => boolean {
  const predicates: ((view: View) => boolean)[] = [];
  const invalid: string[] = [];
  for (const [key, raw] of Object.entries(query)) {
    if (CONTROL_KEYS.has(key)) continue;
    const wanted = values(raw);
    if (TAG_KEYS.includes(key)) {
      const test = tagFilter(key, wanted);
      predicates.push((view) => test((view.tags as string[] | undefined) ?? []));
    } else if (spec.custom?.[key]) {
      const custom = spec.custom[key]!;
      predicates.push((view) => custom(view, wanted));
    } else if (spec.filters.includes(key)) {
      predicates.push((view) => matches(view[key], wanted));
    } else {
      invalid.push(key);
    }
  }
  if (invalid.length) throw badRequest(`${pyList(invalid)} is invalid attribute for filtering`);
  return (view) => predicates.every((p) => p(view));
}

export function project(view: View, query: Query): View {
  const fields = values(query.fields).filter((f) => f !== '');
  if (!fields.length) return view;
  return Object.fromEntries(Object.entries(view).filter(([k]) => fields.includes(k)));
}

function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Renders a collection answer: `{<collection>: [...], <collection>_links?: [...]}`. */
export function listAnswer(spec: ListSpec, query: Query, views: View[], selfUrl: string): Record<string, unknown> {
  const keep = filterOf(spec, query);
  let items = views.filter(keep);

  const sortKeys = values(query.sort_key).filter((k) => k !== '');
  const sortDirs = values(query.sort_dir).filter((d) => d !== '');
  if (sortKeys.length !== sortDirs.length) throw badRequest('The number of sort_keys and sort_dirs must be same');
  const badKeys = sortKeys.filter((k) => !spec.sortKeys.includes(k));
  if (badKeys.length) throw badRequest(`${pyList(badKeys)} is invalid attribute for sort_keys`);
  const badDirs = sortDirs.filter((d) => d !== 'asc' && d !== 'desc');
  if (badDirs.length) throw badRequest(`${pyList(badDirs)} is invalid value for sort_dirs, valid value is 'asc' and 'desc'`);

  const rawLimit = values(query.limit)[0];
  let limit = 0;
  if (rawLimit !== undefined) {
    limit = /^\d+$/.test(rawLimit) ? Number(rawLimit) : NaN;
    if (Number.isNaN(limit)) throw badResourceRequest('limit', `Limit must be an integer 0 or greater and not '${rawLimit}'`);
  }
  const order: [string, boolean][] = sortKeys.map((k, i) => [k, sortDirs[i] === 'asc']);
  // Paging needs a total order: Neutron appends the primary key.
  if (limit > 0 && !sortKeys.includes('id')) order.push(['id', true]);
  if (order.length) {
    items = [...items].sort((x, y) => {
      for (const [key, asc] of order) {
        const c = compare(x[key], y[key]);
        if (c) return asc ? c : -c;
      }
      return 0;
    });
  }

  const pageReverse = (values(query.page_reverse)[0] ?? 'false').toLowerCase() === 'true';
  const marker = values(query.marker)[0];
  let links: { rel: string; href: string }[] | undefined;
  if (limit > 0) {
    if (pageReverse) items.reverse();
    if (marker) {
      const at = items.findIndex((v) => v.id === marker);
      if (at < 0 && !views.some((v) => v.id === marker)) throw spec.notFound(marker);
      items = items.slice(at + 1);
    }
    items = items.slice(0, limit);
    if (pageReverse) items.reverse();
    links = pageLinks(query, items, limit, pageReverse, selfUrl);
  }

  const answer: Record<string, unknown> = { [spec.collection]: items.map((v) => project(v, query)) };
  if (links) answer[`${spec.collection}_links`] = links;
  return answer;
}

function pageLinks(query: Query, items: View[], limit: number, pageReverse: boolean, selfUrl: string) {
  const href = (marker: unknown, reverse: boolean) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (k === 'marker' || k === 'page_reverse') continue;
      for (const one of values(v)) params.append(k, one);
    }
    if (marker !== undefined) params.append('marker', String(marker));
    if (reverse) params.append('page_reverse', 'True');
    return `${selfUrl}?${params.toString()}`;
  };
  const links: { rel: string; href: string }[] = [];
  if (!(items.length < limit && !pageReverse)) links.push({ rel: 'next', href: href(items.at(-1)?.id ?? values(query.marker)[0], false) });
  if (!(items.length < limit && pageReverse)) links.push({ rel: 'previous', href: href(items[0]?.id ?? values(query.marker)[0], true) });
  return links;
}

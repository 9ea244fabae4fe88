import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OpenStackError } from '../../../src/openstack/errors.js';
import { linkedList, maxPages, recordOf, ServiceCalls, tagQuery } from '../../../src/openstack/services/common.js';
import { RecordingTransport } from './recording-transport.js';

const thing = z.looseObject({ id: z.string() });
const things = linkedList('things', thing);

function page(ids: string[], next?: string) {
  return {
    things: ids.map((id) => ({ id, extra: true })),
    ...(next === undefined
      ? {}
      : {
          things_links: [
            { rel: 'next', href: next },
            { rel: 'self', href: 'x' },
          ],
        }),
  };
}

describe('ServiceCalls', () => {
  it('flags every method but POST as idempotent and passes the default microversion', async () => {
    const transport = new RecordingTransport().reply({}).reply({}).reply({}).reply(undefined);
    const calls = new ServiceCalls(transport, 'compute', '2.60');
    await calls.get('/a', z.unknown());
    await calls.post('/a', { x: 1 }, z.unknown());
    await calls.put('/a', { x: 1 }, z.unknown(), { microversion: '2.64' });
    await calls.delete('/a');
    expect(transport.calls.map((call) => [call.method, call.idempotent, call.microversion])).toEqual([
      ['GET', true, '2.60'],
      ['POST', false, '2.60'],
      ['PUT', true, '2.64'],
      ['DELETE', true, '2.60'],
    ]);
    expect(transport.calls[1]!.body).toEqual({ x: 1 });
    expect(transport.calls[0]).not.toHaveProperty('body');
  });

  it('follows next links, keeping the filters and taking the marker (absolute and relative links)', async () => {
    const transport = new RecordingTransport()
      .reply(page(['a', 'b'], 'https://neutron.example:9696/v2.0/things?limit=2&marker=b&name=web'))
      .reply(page(['c', 'd'], '/v2.0/things?limit=2&marker=d'))
      .reply(page(['e']));
    const calls = new ServiceCalls(transport, 'network');
    const items = await calls.list('/v2.0/things', things, { query: { name: 'web', tags: 'x,y' } });
    expect(items.map((item) => item.id)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(items[0]).toEqual({ id: 'a', extra: true });
    expect(transport.calls.map((call) => [call.path, call.query])).toEqual([
      ['/v2.0/things', { name: 'web', tags: 'x,y' }],
      ['/v2.0/things', { name: 'web', tags: 'x,y', limit: '2', marker: 'b' }],
      ['/v2.0/things', { name: 'web', tags: 'x,y', limit: '2', marker: 'd' }],
    ]);
  });

  it('keeps repeated parameters of a next link repeated', async () => {
    const transport = new RecordingTransport().reply(page(['a'], '/v2/things?tag=x&tag=y&marker=a')).reply(page([]));
    await new ServiceCalls(transport, 'image').list('/v2/things', things, { query: { tag: ['x', 'y'] } });
    expect(transport.calls[1]!.query).toEqual({ tag: ['x', 'y'], marker: 'a' });
  });

  it('stops at an empty page even when it carries a next link', async () => {
    const transport = new RecordingTransport().reply(page(['a'], '/t?marker=a')).reply(page([], '/t?marker=a2'));
    expect(await new ServiceCalls(transport, 'network').list('/t', things)).toEqual([{ id: 'a', extra: true }]);
    expect(transport.calls).toHaveLength(2);
  });

  it('fails rather than truncate when the pages do not end', async () => {
    const transport = new RecordingTransport();
    for (let n = 0; n < maxPages; n++) transport.reply(page([`i${n}`], `/t?marker=i${n}`));
    const error = await new ServiceCalls(transport, 'network').list('/t', things).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenStackError);
    expect((error as OpenStackError).kind).toBe('Unexpected');
    expect((error as OpenStackError).message).toContain(`${maxPages} pages`);
    expect(transport.calls).toHaveLength(maxPages);
  });

  it('fails when the service links back to a page already read', async () => {
    const transport = new RecordingTransport().reply(page(['a'], '/t?marker=a')).reply(page(['b'], '/t?marker=a'));
    const error = await new ServiceCalls(transport, 'network').list('/t', things).catch((e: unknown) => e);
    expect((error as OpenStackError).kind).toBe('Unexpected');
    expect(transport.calls).toHaveLength(2);
  });
});

describe('tagQuery', () => {
  it('joins each list with commas and leaves empty lists out', () => {
    expect(tagQuery('network', { tags: ['a', 'b'], 'tags-any': ['c'], 'not-tags': [], 'not-tags-any': ['d', 'e'] })).toEqual({
      tags: 'a,b',
      'tags-any': 'c',
      'not-tags-any': 'd,e',
    });
  });

  it('refuses a tag the comma-separated form cannot carry', () => {
    expect(() => tagQuery('network', { tags: ['a,b'] })).toThrow(OpenStackError);
  });
});

describe('recordOf', () => {
  it('keeps the entries of the expected shape and drops the rest', () => {
    const schema = recordOf(z.object({ limit: z.number() }));
    expect(schema.parse({ id: 'p1', volumes: { limit: 10, extra: 1 }, gigabytes: { limit: -1 } })).toEqual({
      volumes: { limit: 10 },
      gigabytes: { limit: -1 },
    });
  });
});

/**
 * Large lists go out as they are encoded (kube-apiserver streams its list responses too): the body a
 * client reads is the same list, in every representation and over both protocols, and a client that
 * goes away in the middle of one costs the server nothing but that response.
 */
import type { ServerResponse } from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendJsonList } from '../../../src/apiserver/http/respond.js';
import { readCredentials, request, startTestServer, type TestServer } from '../../../harness/test-server.js';

const base = '/apis/testing.capo.dev/v1/namespaces/default/widgets';
/** Many pieces of a streamed list (25 items each) and not a multiple of one, so the last piece is partial. */
const widgetCount = 260;
const tableAccept = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const metadataAccept = 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io';

const names = Array.from({ length: widgetCount }, (_, i) => `w-${String(i).padStart(4, '0')}`);

describe('list responses', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
    // Tags make each widget a few hundred bytes, so that a paused reader's buffers fill up; one of them is
    // text of several bytes a character, which the pieces must carry whole.
    const tags = [...Array.from({ length: 40 }, (_, i) => `tag-${i}-${'x'.repeat(24)}`), 'naïve-✓-🚀'];
    for (const name of names) {
      const created = await request(server, 'POST', base, {
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'testing.capo.dev/v1', kind: 'Widget', metadata: { name }, spec: { color: 'green', tags } }),
      });
      expect(created.status).toBe(201);
    }
  });

  afterAll(async () => {
    await server?.stop();
  });

  /** Every item of the list, read a page at a time: what the one large response must equal. */
  async function pagedItems(): Promise<unknown[]> {
    const items: unknown[] = [];
    let token = '';
    do {
      const page = (await request(server, 'GET', `${base}?limit=60${token && `&continue=${encodeURIComponent(token)}`}`)).json();
      items.push(...page.items);
      token = page.metadata.continue ?? '';
    } while (token);
    return items;
  }

  it('streams a large list over HTTP/1.1, chunked, as the same list a paged walk reads', async () => {
    const listed = await request(server, 'GET', base);
    expect(listed.status).toBe(200);
    expect(listed.headers['transfer-encoding']).toBe('chunked');
    expect(listed.headers['content-length']).toBeUndefined();
    const list = listed.json();
    expect(Object.keys(list)).toEqual(['apiVersion', 'kind', 'metadata', 'items']);
    expect(list).toMatchObject({ apiVersion: 'testing.capo.dev/v1', kind: 'WidgetList' });
    expect(list.items).toEqual(await pagedItems());
    expect(list.items.at(-1).spec.tags).toContain('naïve-✓-🚀');
  });

  it('streams a Table and a PartialObjectMetadataList the same way', async () => {
    const table = await request(server, 'GET', base, { headers: { Accept: tableAccept } });
    expect(table.json().kind).toBe('Table');
    const rows = table.json().rows as { cells: unknown[] }[];
    expect(rows.map((row) => row.cells[0])).toEqual(names);
    expect(table.json().columnDefinitions.length).toBeGreaterThan(0);

    const metadata = await request(server, 'GET', base, { headers: { Accept: metadataAccept } });
    const list = metadata.json();
    expect(list.kind).toBe('PartialObjectMetadataList');
    expect(list.items.map((item: { metadata: { name: string } }) => item.metadata.name)).toEqual(names);
    expect(list.items[0].spec).toBeUndefined();
  });

  it('serves kubectl a streamed list, as a table and as JSON', async () => {
    const table = await server.kubectl(['get', 'widgets', '--no-headers']);
    expect(table.code).toBe(0);
    expect(
      table.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(/\s+/)[0]),
    ).toEqual(names);
    const json = await server.kubectl(['get', 'widgets', '-o', 'json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).items).toHaveLength(widgetCount);
  });

  it('keeps a Content-Length on a list that fits in one piece', async () => {
    const small = await request(server, 'GET', `${base}?limit=20`);
    expect(small.headers['content-length']).toBe(String(Buffer.byteLength(small.body)));
    expect(small.json().items).toHaveLength(20);
  });

  it('streams a large list on an HTTP/2 stream', async () => {
    const { ca, cert, key } = await readCredentials(server);
    const session = http2.connect(server.url, { ca, cert, key });
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const stream = session.request({ ':path': base });
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        stream.on('error', reject);
      });
      expect(JSON.parse(body).items.map((item: { metadata: { name: string } }) => item.metadata.name)).toEqual(names);
    } finally {
      session.close();
    }
  });

  it('lets a client leave in the middle of a list, and serves the next one whole', async () => {
    const { ca, cert, key } = await readCredentials(server);
    // Read the first bytes, then stop reading (the server meets backpressure) and hang up.
    await new Promise<void>((resolve, reject) => {
      const req = https.get(`${server.url}${base}`, { ca, cert, key }, (res) => {
        res.once('data', () => {
          res.pause();
          req.destroy();
          resolve();
        });
      });
      req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    });
    const next = await request(server, 'GET', base);
    expect(next.status).toBe(200);
    expect(next.json().items).toHaveLength(widgetCount);
  });
});

describe('the pieces of a streamed list', () => {
  /** What sendJsonList writes, piece by piece, to a response that always takes more. */
  async function piecesOf(items: unknown[]): Promise<string[]> {
    const written: string[] = [];
    const response = {
      destroyed: false,
      writeHead: () => response,
      write: (piece: string | Buffer) => written.push(piece.toString()) > 0,
      end: (tail: string) => written.push(tail),
    };
    await sendJsonList(response as unknown as ServerResponse, 200, { kind: 'List', items }, 'items');
    return written.slice(1, -1);
  }

  it('holds one large object a piece after the first, so encoding a piece holds the thread for about one', async () => {
    const large = Array.from({ length: 40 }, (_, i) => ({ name: `large-${i}`, data: 'x'.repeat(100_000) }));
    const pieces = await piecesOf(large);
    expect(pieces).toHaveLength(1 + 15);
    expect(pieces.slice(1).every((piece) => piece.length < 110_000)).toBe(true);
    expect(JSON.parse(`[${pieces.join('').replace(/^,/, '')}]`).map((item: { name: string }) => item.name)).toEqual(large.map((item) => item.name));
  });

  it('makes each element (a Table row, say) as its piece is encoded, not all before the first', async () => {
    let made = 0;
    const madeAtWrites: number[] = [];
    const response = { destroyed: false, writeHead: () => response, write: () => madeAtWrites.push(made) > 0, end: () => {} };
    const objects = Array.from({ length: 100 }, (_, i) => ({ name: `o-${i}` }));
    await sendJsonList(response as unknown as ServerResponse, 200, { kind: 'Table', rows: objects }, 'rows', 'application/json', (object: { name: string }) => {
      made++;
      return { cells: [object.name] };
    });
    expect(madeAtWrites).toEqual([0, 25, 50, 75, 100]);
  });

  it('holds 25 small objects a piece', async () => {
    const small = Array.from({ length: 100 }, (_, i) => ({ name: `small-${i}` }));
    expect(await piecesOf(small)).toHaveLength(4);
  });
});

/**
 * /openapi/v2 in protobuf, as kubectl reads it: to validate the items of a `kind: List` (what
 * `kubectl get -o yaml` writes) before it applies them. The server serves core v1 (Secrets), as
 * `npm start` does, which kubectl needs to map a v1 List.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretKind } from '../../../src/api/embedded/kinds.js';
import { kubectlFails, kubectlOk, request, startTestServer, type TestServer } from '../../../harness/test-server.js';
import { widgetKind } from '../../../harness/widget-kind.js';

const protobufAccept = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ kinds: [widgetKind, secretKind] });
});

afterAll(async () => {
  await server?.stop();
});

function list(spec: Record<string, unknown>): string {
  const items = ['listed-1', 'listed-2'].map((name) => ({ apiVersion: 'testing.capo.dev/v1', kind: 'Widget', metadata: { name, namespace: 'default' }, spec }));
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
}

describe('OpenAPI v2 in protobuf', () => {
  it('is what a protobuf-only Accept gets, with kube-openapi Content-Type; JSON stays the default', async () => {
    const asProtobuf = await request(server, 'GET', '/openapi/v2', { headers: { Accept: protobufAccept } });
    expect(asProtobuf.status).toBe(200);
    expect(asProtobuf.headers['content-type']).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    const asJson = await request(server, 'GET', '/openapi/v2', { headers: { Accept: `${protobufAccept};q=0.5, application/json` } });
    expect(asJson.headers['content-type']).toBe('application/json');
    expect(JSON.parse(asJson.body).swagger).toBe('2.0');
    expect((await request(server, 'GET', '/openapi/v2', { headers: { Accept: 'application/yaml' } })).status).toBe(406);
  });

  it('lets kubectl apply a kind: List, client-side and server-side', async () => {
    const file = path.join(server.dataDir, 'list.json');
    await writeFile(file, list({ color: 'red' }));
    const created = await kubectlOk(server, ['apply', '-f', file]);
    expect(created).toContain('widget.testing.capo.dev/listed-1 created');
    expect(created).toContain('widget.testing.capo.dev/listed-2 created');
    expect(await kubectlOk(server, ['apply', '--server-side', '-f', file])).toContain('widget.testing.capo.dev/listed-2 serverside-applied');
  });

  it("gives kubectl the item schemas it validates a List's items against", async () => {
    const file = path.join(server.dataDir, 'wrong-list.json');
    await writeFile(file, list({ color: 'blue', colour: 'blue' }));
    // kubectl's own message: it refused the List from our definitions before sending any item.
    expect(await kubectlFails(server, ['apply', '-f', file])).toContain(
      'ValidationError(Widget.spec): unknown field "colour" in dev.capo.testing.v1.Widget.spec',
    );
    expect(await kubectlOk(server, ['get', 'widget', 'listed-1', '-o', 'jsonpath={.spec.color}'])).toBe('red');
  });
});

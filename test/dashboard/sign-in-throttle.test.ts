/**
 * Sign-ins to the dashboard are limited, over HTTP against the embedded server: one user signing in
 * again and again is refused with 429 and Retry-After after five (so nobody can fill the session
 * table and push the others out), and one address guessing tokens after twenty attempts, before its
 * token is even checked, right or wrong.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startTestServer, type TestServer } from '../../harness/test-server.js';
import { servedKinds } from '../../src/served-kinds.js';

let server: TestServer;
let adminToken: string;

const signIn = (token: string) =>
  request(server, 'POST', '/dashboard/api/session', { anonymous: true, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token }) });

beforeAll(async () => {
  server = await startTestServer({ kinds: servedKinds });
  adminToken = (await readFile(server.tokenPath, 'utf8')).trim();
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

describe('dashboard sign-in', () => {
  it('lets a user sign in five times at once, then answers 429 with Retry-After', async () => {
    for (let i = 0; i < 5; i++) expect((await signIn(adminToken)).status).toBe(200);
    const refused = await signIn(adminToken);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.json()).toMatchObject({
      kind: 'Status',
      reason: 'TooManyRequests',
      message: expect.stringMatching(/^too many sign-ins as admin; try again in \d+ s$/),
    });
  });

  it('lets one address make twenty attempts, then refuses any, a right token too', async () => {
    // Six were made above.
    for (let i = 6; i < 20; i++) expect((await signIn(`wrong-${i}`)).status).toBe(401);
    for (const token of ['wrong-20', adminToken]) {
      const refused = await signIn(token);
      expect(refused.status).toBe(429);
      expect(refused.json().message).toMatch(/^too many sign-in attempts from this address; try again in \d+ s$/);
    }
  });
});

/**
 * Keypairs. They belong to a user, not a project, and their wire format
 * changed with 2.2 (type, 201/204), 2.10 (user_id for admins), 2.35
 * (paging) and 2.92 (generation removed, wider name charset).
 */
import { createHash, generateKeyPairSync, X509Certificate } from 'node:crypto';
import type { Router } from 'express';
import { z } from 'zod';
import type { SimulatorContext } from '../framework.js';
import { badRequest, conflict, forbidden, invalidName, notFound, parseBody, policyForbidden } from './errors.js';
import { callerOf, naiveTime, pageOf, queryOne, quotaOf, type Caller, type Keypair, type NovaStore } from './model.js';
import { knownFields } from './schemas.js';

const sshKeyTypes = new Set(['ssh-rsa', 'ssh-dss', 'ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521']);

const colonHex = (digest: Buffer) => [...digest].map((b) => b.toString(16).padStart(2, '0')).join(':');

/** Nova's fingerprint of an OpenSSH public key: MD5 of the key blob. */
function sshFingerprint(publicKey: string): string | undefined {
  const [type, data] = publicKey.trim().split(/\s+/);
  if (!type || !data || !sshKeyTypes.has(type) || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) return undefined;
  const blob = Buffer.from(data, 'base64');
  const nameLength = blob.length >= 4 ? blob.readUInt32BE(0) : -1;
  if (nameLength < 0 || blob.subarray(4, 4 + nameLength).toString('latin1') !== type) return undefined;
  return colonHex(createHash('md5').update(blob).digest());
}

function x509Fingerprint(pem: string): string | undefined {
  try {
    return new X509Certificate(pem).fingerprint.toLowerCase();
  } catch {
    return undefined;
  }
}

function sshString(data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  return Buffer.concat([length, data]);
}

/** An SSH mpint: big-endian, with a leading zero byte when the top bit is set. */
const mpint = (unsigned: Buffer) => sshString(unsigned[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), unsigned]) : unsigned);

/** What nova-api does for a keypair without public_key (until 2.91): a fresh RSA key. */
function generateRsaKeypair(): { publicKey: string; privateKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' });
  const blob = Buffer.concat([sshString(Buffer.from('ssh-rsa')), mpint(Buffer.from(jwk.e!, 'base64url')), mpint(Buffer.from(jwk.n!, 'base64url'))]);
  return {
    publicKey: `ssh-rsa ${blob.toString('base64')} Generated-by-Nova`,
    privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
  };
}

const legacyNameChars = /^[A-Za-z0-9_\- ]+$/;
const nameChars292 = /^[A-Za-z0-9@._\- ]+$/;

function createSchema(minor: number) {
  const name = z
    .string()
    .min(1)
    .max(255)
    .refine((n) => n.trim() === n, invalidName('printable characters. Can not start or end with whitespace.'))
    .refine(
      (n) => (minor >= 92 ? nameChars292 : legacyNameChars).test(n),
      invalidName(`Only expected characters: [${minor >= 92 ? '@._- ' : '_- '}0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ]`),
    );
  return z
    .object({
      keypair: z
        .object({
          name,
          public_key: minor >= 92 ? z.string() : z.string().optional(),
          type: z.enum(['ssh', 'x509']).optional(),
          user_id: z.string().optional(),
        })
        .strict()
        .superRefine(knownFields(minor, { type: (m) => m >= 2, user_id: (m) => m >= 10 })),
    })
    .strict();
}

export function keypairRoutes(api: Router, store: NovaStore, ctx: SimulatorContext): void {
  /** Admins may act for another user from 2.10 on (`user_id`), as Nova's policy allows. */
  const targetUser = (caller: Caller, requested: string | undefined, action: 'create' | 'index' | 'show' | 'delete') => {
    if (requested === undefined || requested === caller.userId || caller.minor < 10) return caller.userId;
    if (!caller.admin) throw policyForbidden(`os_compute_api:os-keypairs:${action}`);
    return requested;
  };

  const find = (userId: string, name: string) => {
    const keypair = store.keypairs.find((k) => k.userId === userId && k.name === name);
    if (!keypair) throw notFound(`Keypair ${name} not found for user ${userId}`);
    return keypair;
  };

  const summary = (k: Keypair, minor: number) => ({
    name: k.name,
    public_key: k.publicKey,
    fingerprint: k.fingerprint,
    ...(minor >= 2 ? { type: k.type } : {}),
  });

  api.post('/os-keypairs', (req, res) => {
    const caller = callerOf(res);
    const body = parseBody(createSchema(caller.minor), req.body).keypair;
    const userId = targetUser(caller, body.user_id, 'create');
    const type = body.type ?? 'ssh';
    const owned = store.keypairs.filter((k) => k.userId === userId).length;
    if (owned + 1 > quotaOf(ctx, caller.projectId, 'key_pairs')) throw forbidden('Quota exceeded, too many key pairs.');
    if (store.keypairs.some((k) => k.userId === userId && k.name === body.name)) throw conflict(`Key pair '${body.name}' already exists.`);

    let publicKey = body.public_key;
    let privateKey: string | undefined;
    if (publicKey === undefined) {
      if (type === 'x509') throw badRequest('Keypair data is invalid: Keypair type x509 can only be imported');
      ({ publicKey, privateKey } = generateRsaKeypair());
    }
    const fingerprint = type === 'x509' ? x509Fingerprint(publicKey) : sshFingerprint(publicKey);
    if (!fingerprint) throw badRequest('Keypair data is invalid: failed to generate fingerprint');

    const keypair: Keypair = {
      id: store.nextKeypairId++,
      name: body.name,
      userId,
      publicKey,
      fingerprint,
      type,
      createdAt: ctx.clock.now(),
    };
    store.keypairs.push(keypair);
    res.status(caller.minor >= 2 ? 201 : 200).json({
      keypair: { ...summary(keypair, caller.minor), user_id: userId, ...(privateKey ? { private_key: privateKey } : {}) },
    });
  });

  api.get('/os-keypairs', (req, res) => {
    const caller = callerOf(res);
    const userId = targetUser(caller, queryOne(req.query, 'user_id'), 'index');
    const mine = store.keypairs.filter((k) => k.userId === userId).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const paged = caller.minor >= 35 ? pageOf(mine, req.query, (k) => k.name) : { page: mine, limit: Infinity };
    const body: Record<string, unknown> = { keypairs: paged.page.map((k) => ({ keypair: summary(k, caller.minor) })) };
    if (caller.minor >= 35 && paged.page.length > 0 && paged.page.length === paged.limit) {
      const last = paged.page.at(-1)!;
      body.keypairs_links = [{ rel: 'next', href: `${ctx.baseUrl()}/compute/v2.1/os-keypairs?limit=${paged.limit}&marker=${encodeURIComponent(last.name)}` }];
    }
    res.json(body);
  });

  api.get('/os-keypairs/:name', (req, res) => {
    const caller = callerOf(res);
    const keypair = find(targetUser(caller, queryOne(req.query, 'user_id'), 'show'), req.params.name);
    res.json({
      keypair: {
        ...summary(keypair, caller.minor),
        user_id: keypair.userId,
        created_at: naiveTime(keypair.createdAt),
        deleted: false,
        deleted_at: null,
        id: keypair.id,
        updated_at: null,
      },
    });
  });

  api.delete('/os-keypairs/:name', (req, res) => {
    const caller = callerOf(res);
    const keypair = find(targetUser(caller, queryOne(req.query, 'user_id'), 'delete'), req.params.name);
    store.keypairs.splice(store.keypairs.indexOf(keypair), 1);
    res.status(caller.minor >= 2 ? 204 : 202).end();
  });
}

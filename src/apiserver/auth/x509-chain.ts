/**
 * Client certificate chains verified against one pool of roots at a time. Node's TLS reports a
 * single verdict against the union of every CA it was given, but a client CA and the front-proxy
 * (requestheader) CA mean different things: a certificate from the first names a user, one from the
 * second only vouches for headers. So the server accepts any certificate during the handshake and
 * each authenticator verifies the presented chain against its own roots, as kube's x509
 * authenticator does: every link signed by the next, each within its validity period, the leaf
 * usable for client authentication, intermediates marked as CAs.
 */
import { X509Certificate } from 'node:crypto';
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';

const clientAuthUsage = '1.3.6.1.5.5.7.3.2';
const anyExtendedKeyUsage = '2.5.29.37.0';
/** Longer chains are not something a client presents; bounding the walk bounds the work. */
const maxChainLength = 8;

export type ChainVerdict = { verified: true; leaf: X509Certificate } | { verified: false; reason: string };

/** The certificates of a PEM bundle (a CA file may hold several). */
export function parsePemBundle(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => new X509Certificate(block));
}

/** The chain a TLS client presented, leaf first; empty when it presented none. */
export function presentedChain(socket: TLSSocket): X509Certificate[] {
  const peer = socket.getPeerCertificate?.(true) as DetailedPeerCertificate | undefined;
  if (!peer?.raw) return [];
  const chain: X509Certificate[] = [];
  let current: DetailedPeerCertificate | undefined = peer;
  while (current?.raw && chain.length < maxChainLength) {
    chain.push(new X509Certificate(current.raw));
    // Node links a self-signed certificate to itself.
    if (current.issuerCertificate === current) break;
    current = current.issuerCertificate;
  }
  return chain;
}

/** Whether `presented` (leaf first, then any intermediates) leads to one of `roots`, at `now`. */
export function verifyClientChain(presented: readonly X509Certificate[], roots: readonly X509Certificate[], now = new Date()): ChainVerdict {
  const [leaf, ...intermediates] = presented;
  if (!leaf) return { verified: false, reason: 'no client certificate' };
  if (roots.length === 0) return { verified: false, reason: 'no certificate authority configured' };
  const usages = leaf.keyUsage;
  if (usages && !usages.includes(clientAuthUsage) && !usages.includes(anyExtendedKeyUsage)) {
    return { verified: false, reason: 'x509: certificate specifies an incompatible key usage' };
  }
  let current = leaf;
  for (let depth = 0; depth < maxChainLength; depth++) {
    const expired = outsideValidity(current, now);
    if (expired) return { verified: false, reason: expired };
    const root = roots.find((candidate) => issuedBy(current, candidate));
    if (root) {
      const rootExpired = outsideValidity(root, now);
      return rootExpired ? { verified: false, reason: rootExpired } : { verified: true, leaf };
    }
    const next = intermediates.find((candidate) => candidate.ca && candidate !== current && issuedBy(current, candidate));
    if (!next) break;
    current = next;
  }
  return { verified: false, reason: 'x509: certificate signed by unknown authority' };
}

function issuedBy(certificate: X509Certificate, issuer: X509Certificate): boolean {
  return certificate.checkIssued(issuer) && certificate.verify(issuer.publicKey);
}

function outsideValidity(certificate: X509Certificate, now: Date): string | undefined {
  if (now < certificate.validFromDate || now > certificate.validToDate) {
    return `x509: certificate has expired or is not yet valid: current time ${now.toISOString()} is outside ${certificate.validFromDate.toISOString()} to ${certificate.validToDate.toISOString()}`;
  }
  return undefined;
}

/**
 * Attribute-based policies in kube-apiserver's --authorization-policy-file
 * format: one `abac.authorization.kubernetes.io/v1beta1` Policy per line,
 * matched the way kube matches them. This is how a user is confined to its
 * namespaces; the file is re-read when it changes.
 */
import { z } from 'zod';
import type { Authorizer, Decision, RequestAttributes } from './authorizer.js';
import type { UserInfo } from './user.js';
import { WatchedFile, type WatchedFileOptions } from './watched-file.js';

const policySchema = z
  .object({
    apiVersion: z.literal('abac.authorization.kubernetes.io/v1beta1'),
    kind: z.literal('Policy'),
    spec: z
      .object({
        /** A user name, or "*" for every authenticated or anonymous user. */
        user: z.string().optional(),
        /** A group name, or "*" for every group. */
        group: z.string().optional(),
        /** Only get, list and watch are granted. */
        readonly: z.boolean().optional(),
        apiGroup: z.string().optional(),
        /** A namespace, or "*"; cluster-scoped requests have namespace "". */
        namespace: z.string().optional(),
        resource: z.string().optional(),
        /** A path, "*", or a prefix ending in "*". */
        nonResourcePath: z.string().optional(),
      })
      .strict()
      .refine((spec) => Boolean(spec.user || spec.group), 'spec needs a user or a group'),
  })
  .strict();

export type AbacPolicy = z.infer<typeof policySchema>['spec'];

export class AbacAuthorizer implements Authorizer {
  private constructor(private readonly file: WatchedFile<AbacPolicy[]>) {}

  static async open(filePath: string, options: WatchedFileOptions = {}): Promise<AbacAuthorizer> {
    return new AbacAuthorizer(await WatchedFile.open(filePath, parsePolicyFile, options));
  }

  get path(): string {
    return this.file.path;
  }

  async authorize(attributes: RequestAttributes): Promise<Decision> {
    if (this.file.current.some((policy) => matches(policy, attributes))) return { allowed: true };
    return { allowed: false, reason: `no policy in ${this.file.path} matches` };
  }

  /** Re-reads the file now instead of waiting for the change notification. */
  reload(): Promise<void> {
    return this.file.reload();
  }

  close(): void {
    this.file.close();
  }
}

/** Blank lines and lines starting with # are skipped; any other line that is not a valid Policy rejects the file. */
export function parsePolicyFile(text: string): AbacPolicy[] {
  const policies: AbacPolicy[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      throw new Error(`line ${index + 1}: not JSON: ${(error as Error).message}`);
    }
    const parsed = policySchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      throw new Error(`line ${index + 1}: not an ${policySchema.shape.apiVersion.value} Policy: ${where}${issue.message}`);
    }
    policies.push(parsed.data.spec);
  });
  return policies;
}

const readOnlyVerbs = new Set(['get', 'list', 'watch']);

function matches(policy: AbacPolicy, attributes: RequestAttributes): boolean {
  if (!subjectMatches(policy, attributes.user)) return false;
  const verb = 'resource' in attributes ? attributes.resource.verb : attributes.nonResource.verb;
  if (policy.readonly && !readOnlyVerbs.has(verb)) return false;
  if ('resource' in attributes) {
    const { namespace = '', resource, group } = attributes.resource;
    return wildcardOr(policy.namespace, namespace) && wildcardOr(policy.resource, resource) && wildcardOr(policy.apiGroup, group);
  }
  const pattern = policy.nonResourcePath ?? '';
  const { path } = attributes.nonResource;
  return pattern === '*' || pattern === path || (pattern.endsWith('*') && path.startsWith(pattern.replace(/\*+$/, '')));
}

/** Both user and group, when given, must match. */
function subjectMatches(policy: AbacPolicy, user: UserInfo): boolean {
  if (policy.user && policy.user !== '*' && policy.user !== user.name) return false;
  if (policy.group && policy.group !== '*' && !user.groups.includes(policy.group)) return false;
  return true;
}

function wildcardOr(pattern: string | undefined, value: string): boolean {
  const wanted = pattern ?? '';
  return wanted === '*' || wanted === value;
}

/**
 * Hosts every simulated service on one express app, each under its prefix,
 * with the cross-cutting behaviour of a real cloud's API layer in front:
 * request ids, injected latency and faults, and keystonemiddleware-style
 * token validation.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import express, { type NextFunction, type Request, type Response } from 'express';
import { stringify } from 'yaml';
import { z } from 'zod';
import { createCinderSimulator } from './cinder/index.js';
import {
  SimulatorError,
  type FaultRule,
  type SimulatedService,
  type SimulatedServiceFactory,
  type SimulatedServiceType,
  type SimulatorContext,
  type SimulatorPeers,
} from './framework.js';
import { createGlanceSimulator } from './glance/index.js';
import { createKeystoneSimulator, seedUsers, type KeystoneSimulator } from './keystone/index.js';
import { createNeutronSimulator } from './neutron/index.js';
import { createNovaSimulator } from './nova/index.js';
import { createOctaviaSimulator } from './octavia/index.js';
import { downloadsRouter } from './downloads.js';
import { freshSeed, seededRandom } from './seeded-random.js';
import { refillEntries } from './snapshots.js';
import { blobDirOf, StateFile } from './state-file.js';
import { BlobFiles } from './blob-files.js';

const serviceTypes = ['identity', 'network', 'compute', 'load-balancer', 'image', 'block-storage'] as const;

const latencyRuleSchema = z.object({
  service: z.enum([...serviceTypes, '*']),
  method: z.string().optional(),
  path: z.string().optional(),
  ms: z.number().nonnegative(),
});
export type LatencyRule = z.infer<typeof latencyRuleSchema>;

const faultRuleSchema = z.object({
  service: z.enum([...serviceTypes, '*']),
  method: z.string().optional(),
  path: z.string().optional(),
  rate: z.number().min(0).max(1).optional(),
  status: z.number().int().min(400).max(599).optional(),
  message: z.string().optional(),
  retryAfterSeconds: z.number().int().nonnegative().optional(),
  latencyMs: z.number().nonnegative().optional(),
  times: z.number().int().positive().optional(),
}) satisfies z.ZodType<FaultRule>;

export interface SimulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Delay of asynchronous status transitions; default 200 ms (real clouds take seconds). */
  transitionDelayMs?: number;
  /** Availability zones, each with one compute host; default ministack's one, `nova`. */
  availabilityZones?: string[];
  /** Token lifetime; default 1 h. */
  tokenLifetimeMs?: number;
  /** Fixed latency per service/operation, applied to every matching request. */
  latency?: LatencyRule[];
  /** The services besides Keystone (always present: the host validates tokens through it); default all five. */
  services?: SimulatedServiceFactory[];
  /** Seed of the rolls that decide which requests a fault with a `rate` hits; default a fresh one, printed when such a fault is added. */
  faultSeed?: number;
  /** Told of every request once its response is sent (a 429 or injected fault too), e.g. to count a client's calls at the cloud. */
  onRequest?: (request: ServedRequest) => void;
  /**
   * Keeps the cloud across restarts in this file (created if missing; image data in `<name>-images/`
   * beside it): restored at start, every service with its ids and what was in transition going on,
   * and written shortly after every change and on close. Tokens are not kept. A file that cannot be
   * read fails the start.
   */
  stateFile?: string;
  /** With stateFile: start seeded, as if the file did not exist, and write over it. */
  freshState?: boolean;
  /** Glance's image_size_cap: default 1 GiB, lowered from Glance's 1 TiB to what a test machine's disk can spare. */
  imageSizeCap?: number;
}

/** One request as the cloud served it; `path` is relative to the service's endpoint, query included. */
export interface ServedRequest {
  service: SimulatedServiceType;
  method: string;
  path: string;
  status: number;
  /** performance.now() when it arrived and when its response was sent. */
  startMs: number;
  endMs: number;
}

export interface Simulator {
  /** Base URL, e.g. http://127.0.0.1:41234 (Keystone is at `${url}/identity`). */
  url: string;
  /** clouds.yaml with `<cloudName>` (user demo, project demo) and `<cloudName>-admin` (user admin, project admin). */
  cloudsYaml(cloudName?: string): string;
  faults: { add(rule: FaultRule): void; clear(): void };
  /** The seed of the fault rolls: the same seed and requests give the same faults. */
  faultSeed: number;
  /** The largest image data Glance stores (its image_size_cap); a larger upload is refused with 413. */
  imageSizeCap: number;
  /** Makes every token issued so far expired; later requests with them get 401. */
  expireTokens(): void;
  /** `limit` Infinity = unlimited. Throws for an unknown project. */
  setQuota(project: string, resource: string, limit: number): void;
  /** Live resource counts by service type, seed data included. */
  inventory(): Partial<Record<SimulatedServiceType, Record<string, number>>>;
  close(): Promise<void>;
}

export const defaultServices: SimulatedServiceFactory[] = [
  createNeutronSimulator,
  createNovaSimulator,
  createOctaviaSimulator,
  createGlanceSimulator,
  createCinderSimulator,
];

/** ministack's up.sh raises the demo project's quotas; the simulator starts from the same cloud. */
const ministackDemoQuotas: Record<string, number> = {
  instances: 100,
  cores: 400,
  ram: 1_024_000,
  network: 200,
  subnet: 200,
  port: 1000,
  router: 100,
  floatingip: 200,
  security_group: 200,
  security_group_rule: 2000,
  volumes: 100,
  gigabytes: 10_000,
  snapshots: 100,
};

const authFailureBody = {
  error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' },
};

interface ActiveFault {
  rule: FaultRule;
  pattern?: RegExp;
  remaining: number;
}

function matches(rule: { service: string; method?: string; path?: string }, pattern: RegExp | undefined, type: SimulatedServiceType, req: Request): boolean {
  if (rule.service !== '*' && rule.service !== type) return false;
  if (rule.method && rule.method !== '*' && rule.method.toUpperCase() !== req.method) return false;
  return !pattern || pattern.test(req.path);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The state file of a cloud kept across restarts, the cloud restored from it first if it exists:
 * every hosted service's snapshot (Keystone first, whose seeded ids the others' seeds used) and the
 * quotas, replacing the seeds; then what was in transition resumes, the services Nova and Octavia
 * call first, so that a transition one of theirs waits on (a volume creating) is scheduled, and so
 * ends, before theirs.
 */
async function restoredCloud(
  file: string,
  fresh: boolean,
  services: readonly SimulatedService[],
  quotas: Map<string, number>,
  blobs: BlobFiles,
): Promise<StateFile> {
  const stateFile = new StateFile(file, blobs, (sink) => ({
    quotas,
    services: Object.fromEntries(services.flatMap((service) => (service.state ? [[service.type, service.state.snapshot(sink)]] : []))),
  }));
  const saved = await stateFile.load(fresh);
  if (saved) {
    try {
      for (const service of services) {
        const snapshot = saved.state.services[service.type];
        if (snapshot !== undefined) service.state?.restore(snapshot, saved.blobs);
      }
      refillEntries(quotas, [...saved.state.quotas]);
    } catch (error) {
      throw stateFile.failure(error);
    }
    const callers: readonly SimulatedServiceType[] = ['compute', 'load-balancer'];
    const resumeOrder = [...services.filter((s) => !callers.includes(s.type)), ...services.filter((s) => callers.includes(s.type))];
    for (const service of resumeOrder) service.state?.resume?.();
  }
  stateFile.changed();
  return stateFile;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const latency = z
    .array(latencyRuleSchema)
    .parse(options.latency ?? [])
    .map((rule) => ({ rule, pattern: rule.path ? new RegExp(rule.path) : undefined }));
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;
  let baseUrl = '';
  const quotas = new Map<string, number>();
  const peers: SimulatorPeers = {};
  const services: SimulatedService[] = [];
  /** Set once the services exist (and the cloud is restored); told of every change from then on. */
  let stateFile: StateFile | undefined;
  const blobs = options.stateFile === undefined ? BlobFiles.temporary() : BlobFiles.kept(blobDirOf(options.stateFile));

  const ctx: SimulatorContext = {
    clock: {
      now: () => Date.now(),
      after(ms, fn) {
        if (closed) return;
        const timer = setTimeout(() => {
          timers.delete(timer);
          fn();
          stateFile?.changed();
        }, ms);
        timers.add(timer);
      },
    },
    baseUrl: () => baseUrl,
    newId: () => randomUUID(),
    quota: (projectId, resource, defaultLimit = Infinity) => quotas.get(`${projectId}/${resource}`) ?? defaultLimit,
    setQuota: (projectId, resource, limit) => {
      quotas.set(`${projectId}/${resource}`, limit);
      stateFile?.changed();
    },
    // Keystone's factory never calls this, so `keystone` is initialised by the time anything does.
    projectIdByName: (name) => keystone.projectId(name),
    transitionDelayMs: options.transitionDelayMs ?? 200,
    availabilityZones: options.availabilityZones && options.availabilityZones.length > 0 ? [...options.availabilityZones] : ['nova'],
    peers,
    blobs,
    imageSizeCap: options.imageSizeCap ?? 1024 ** 3,
  };

  const keystone: KeystoneSimulator = createKeystoneSimulator(ctx, { tokenLifetimeMs: options.tokenLifetimeMs ?? 3_600_000, services: () => services });
  services.push(keystone);
  const demo = keystone.projectId('demo')!;
  for (const [resource, limit] of Object.entries(ministackDemoQuotas)) ctx.setQuota(demo, resource, limit);
  for (const factory of options.services ?? defaultServices) services.push(factory(ctx));
  stateFile = options.stateFile === undefined ? undefined : await restoredCloud(options.stateFile, options.freshState ?? false, services, quotas, blobs);
  const persisted = stateFile;

  const faults: ActiveFault[] = [];
  const faultSeed = options.faultSeed ?? freshSeed();
  const faultRoll = seededRandom(faultSeed);
  let seedPrinted = false;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const computePrefix = services.find((s) => s.type === 'compute')?.prefix;
  app.use((req, res, next) => {
    const id = `req-${randomUUID()}`;
    res.setHeader('x-openstack-request-id', id);
    if (computePrefix && (req.path === computePrefix || req.path.startsWith(`${computePrefix}/`))) res.setHeader('x-compute-request-id', id);
    next();
  });

  for (const service of services) {
    const stack = express.Router();
    const { onRequest } = options;
    if (onRequest) {
      stack.use((req, res, next) => {
        const startMs = performance.now();
        const path = req.url;
        res.once('finish', () => onRequest({ service: service.type, method: req.method, path, status: res.statusCode, startMs, endMs: performance.now() }));
        next();
      });
    }
    stack.use(async (req, res, next) => {
      let delay = 0;
      for (const { rule, pattern } of latency) if (matches(rule, pattern, service.type, req)) delay += rule.ms;
      let failure: FaultRule | undefined;
      for (const fault of faults) {
        if (fault.remaining <= 0 || !matches(fault.rule, fault.pattern, service.type, req)) continue;
        if (fault.rule.rate !== undefined && faultRoll() >= fault.rule.rate) continue;
        fault.remaining -= 1;
        delay += fault.rule.latencyMs ?? 0;
        if (fault.rule.status !== undefined && !failure) failure = fault.rule;
      }
      if (delay > 0) await sleep(delay);
      if (!failure?.status) return next();
      if (failure.status === 429) res.setHeader('Retry-After', String(failure.retryAfterSeconds ?? 1));
      if (failure.status === 401) {
        res.setHeader('WWW-Authenticate', `Keystone uri="${baseUrl}/identity"`);
        res.status(401).json(authFailureBody);
        return;
      }
      res.status(failure.status).json(service.formatError(failure.status, failure.message));
    });
    if (persisted) {
      // Any write may change the cloud; issuing and checking tokens does not (they are not kept).
      stack.use((req, res, next) => {
        const write = req.method !== 'GET' && req.method !== 'HEAD';
        if (write && !(service.type === 'identity' && req.path.startsWith('/v3/auth/'))) res.once('finish', () => persisted.changed());
        next();
      });
    }
    if (service.type !== 'identity') {
      stack.use((req, res, next) => {
        const isPublic = (req.method === 'GET' || req.method === 'HEAD') && service.publicPaths?.some((p) => p.test(req.path));
        if (isPublic) return next();
        const token = req.get('x-auth-token');
        const scope = token ? keystone.validate(token) : undefined;
        if (!scope) {
          res.setHeader('WWW-Authenticate', `Keystone uri="${baseUrl}/identity"`);
          res.status(401).json(authFailureBody);
          return;
        }
        res.locals.auth = scope;
        next();
      });
    }
    stack.use(express.json({ type: (req) => /json/i.test(req.headers['content-type'] ?? ''), limit: '10mb' }));
    stack.use(service.router());
    stack.use((_req: Request, res: Response) => {
      res.status(404).json(service.formatError(404));
    });
    stack.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
      if (res.headersSent) return;
      if (err instanceof SimulatorError) {
        res.status(err.status).json(service.formatError(err.status, err.message));
        return;
      }
      const parseFailure = z.object({ type: z.literal('entity.parse.failed') }).safeParse(err);
      if (parseFailure.success) {
        res.status(400).json(service.formatError(400, 'Malformed request body'));
        return;
      }
      // The client broke the upload off (as a failed hash check does): there is no one left to answer.
      if (z.object({ type: z.literal('request.aborted') }).safeParse(err).success) return;
      const tooLarge = z.object({ type: z.literal('entity.too.large') }).safeParse(err);
      if (tooLarge.success) {
        res.status(413).json(service.formatError(413, 'Request is too large.'));
        return;
      }
      process.stderr.write(`simulator ${service.name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      res.status(500).json(service.formatError(500));
    });
    app.use(service.prefix, stack);
  }
  app.use('/downloads', downloadsRouter());
  app.use((_req, res) => {
    res.status(404).json({ error: { code: 404, title: 'Not Found', message: 'No simulated service at this path.' } });
  });

  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(options.port ?? 0, options.host ?? '127.0.0.1', (error?: Error) => (error ? reject(error) : resolve(s)));
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  baseUrl = `http://${host}:${address.port}`;

  const cloud = (user: { name: string; password: string; project: string }) => ({
    auth: {
      auth_url: `${baseUrl}/identity/v3`,
      username: user.name,
      password: user.password,
      project_name: user.project,
      user_domain_name: 'Default',
      project_domain_name: 'Default',
    },
    region_name: 'RegionOne',
    interface: 'public',
    identity_api_version: 3,
  });

  return {
    url: baseUrl,
    cloudsYaml(cloudName = 'simulator') {
      return stringify({
        clouds: {
          [cloudName]: cloud(seedUsers.demo),
          [`${cloudName}-admin`]: cloud(seedUsers.admin),
        },
      });
    },
    faults: {
      add(rule) {
        const parsed = faultRuleSchema.parse(rule);
        // A run whose faults depend on chance says how to replay it.
        if (parsed.rate !== undefined && options.faultSeed === undefined && !seedPrinted) {
          seedPrinted = true;
          process.stderr.write(`simulated cloud: injecting faults by chance with seed ${faultSeed} (faultSeed ${faultSeed} replays them)\n`);
        }
        faults.push({ rule: parsed, pattern: parsed.path ? new RegExp(parsed.path) : undefined, remaining: parsed.times ?? Infinity });
      },
      clear: () => void faults.splice(0),
    },
    faultSeed,
    imageSizeCap: ctx.imageSizeCap,
    expireTokens: () => keystone.expireTokens(),
    setQuota(project, resource, limit) {
      const projectId = keystone.resolveProject(project);
      if (!projectId) throw new Error(`unknown project ${project}`);
      ctx.setQuota(projectId, resource, limit);
    },
    inventory() {
      const result: Partial<Record<SimulatedServiceType, Record<string, number>>> = {};
      for (const service of services) result[service.type] = service.inventory();
      return result;
    },
    async close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      // What is in transition now is saved as it stands, and goes on when the cloud is restored.
      await stateFile?.close();
      await blobs.close();
    },
  };
}

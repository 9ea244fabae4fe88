/**
 * Preflight: before a cluster creates anything, whether its cloud can hold
 * it. Authentication comes first (nothing else can be asked without it);
 * the other checks are independent and run at once, one call each where
 * the APIs allow, the flavor list shared by the flavor and quota checks.
 */
import { OpenStackError, type OpenStackSession, type ServiceClients, type SessionScope } from '../openstack/index.js';
import type { CheckContext } from './context.js';
import { checkFlavors } from './flavors.js';
import { checkImage } from './images.js';
import { checkExternalNetwork } from './network.js';
import { failedCall, outcome } from './outcome.js';
import { blockStorageQuota, computeQuota, loadBalancerQuota, networkQuota } from './quota.js';
import { reportOf, type PreflightCheck, type PreflightReport } from './report.js';
import type { PreflightRequirements } from './requirements.js';

export async function runPreflight(clients: ServiceClients, session: OpenStackSession, requirements: PreflightRequirements): Promise<PreflightReport> {
  let scope: SessionScope;
  try {
    scope = await session.authenticate();
  } catch (error) {
    if (!(error instanceof OpenStackError)) throw error;
    return reportOf([authenticationFailure(error)]);
  }
  const context: CheckContext = { clients, scope, project: scope.projectName ?? scope.projectId };
  const flavorList = outcome(requirements.flavors.length === 0 ? Promise.resolve([]) : clients.nova.listFlavors());
  const externalNetwork = checkExternalNetwork(context, requirements.externalNetwork);
  const groups = await Promise.all([
    ...requirements.images.map(async (image) => [await checkImage(context, image)]),
    checkFlavors(context, requirements.flavors, flavorList),
    externalNetwork.then((verdict) => [verdict.check]),
    loadBalancing(context, requirements),
    computeQuota(context, requirements.flavors, flavorList, requirements.demand),
    networkQuota(context, requirements.demand),
    blockStorageQuota(context, requirements.demand),
  ]);
  const authenticated: PreflightCheck = { name: 'authentication', status: 'pass', message: `authenticated to project ${context.project} (${scope.projectId})` };
  // Resources first, then quotas: the load balancer's quota goes with the others.
  const checks = [authenticated, ...groups.flat()];
  const found = (await externalNetwork).network;
  const report = reportOf([...checks.filter((check) => !isQuota(check)), ...checks.filter(isQuota)]);
  return found === undefined ? report : { ...report, externalNetwork: { id: found.id, name: found.name } };
}

function isQuota(check: PreflightCheck): boolean {
  return check.name.startsWith('quota ');
}

function authenticationFailure(error: OpenStackError): PreflightCheck {
  const failure = (message: string): PreflightCheck => ({ name: 'authentication', status: 'fail', message });
  const message = `authentication failed: ${error.message}`;
  switch (error.kind) {
    case 'Unreachable':
    case 'NotFound':
      return failure(`${message} — check auth.auth_url in clouds.yaml`);
    case 'Transient':
    case 'RateLimited':
      return { ...failure(`${message} — run the check again when Keystone answers`), undecided: true };
    default:
      // Keystone's refusals and TLS and catalog errors already say what to fix.
      return failure(message);
  }
}

/** The quota is only worth reading from an Octavia that answers. */
async function loadBalancing(context: CheckContext, requirements: PreflightRequirements): Promise<PreflightCheck[]> {
  const name = 'load balancer service';
  if (!requirements.loadBalancer) return [{ name, status: 'pass', message: 'not needed: the cluster has no managed API server load balancer' }];
  const [providers, quota] = await Promise.all([outcome(context.clients.octavia.listProviders()), loadBalancerQuota(context, requirements.demand)]);
  if (providers.ok) {
    const names = providers.value.map((provider) => provider.name).join(', ');
    return [{ name, status: 'pass', message: `Octavia answers; providers: ${names === '' ? 'none listed' : names}` }, ...quota];
  }
  const error = providers.error;
  if (error.kind === 'Config' && error.service === 'load-balancer') {
    return [
      {
        name,
        status: 'fail',
        message: `no Octavia for project ${context.project}: ${error.detail} — use a cloud with Octavia, or remove spec.apiServer.managedLoadBalancer`,
      },
    ];
  }
  return [failedCall(name, 'asking Octavia for its providers', error)];
}

/** Preflight checks of a cluster against its cloud, for the cluster reconciler and `npm run preflight`. */
export { runPreflight } from './checks.js';
export { formatReport, summarizeFailures } from './report.js';
export type { CheckStatus, PreflightCheck, PreflightReport } from './report.js';
export { requirementsOf } from './requirements.js';
export type { Demand, FlavorReference, FlavorRequirement, ImageRequirement, PreflightRequirements } from './requirements.js';

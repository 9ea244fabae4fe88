/** Preflight checks of a cluster against its cloud, for the cluster reconciler and `npm run preflight`. */
export { runPreflight } from './checks.js';
export { failedOnlyUndecided, formatReport, summarizeFailures } from './report.js';
export type { PreflightReport } from './report.js';
export { requirementsOf } from './requirements.js';
export type { PreflightRequirements } from './requirements.js';

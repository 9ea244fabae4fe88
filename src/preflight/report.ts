/**
 * The outcome of a preflight run and its two renderings: the text the CLI
 * prints and the one-line summary a condition message carries.
 */

/** warn: the check could not decide (e.g. a quota the cloud does not report); it does not fail the run. */
export type CheckStatus = 'pass' | 'fail' | 'warn';

export interface PreflightCheck {
  /** Stable and short, e.g. `image ubuntu-22.04`, `quota cores`. */
  name: string;
  status: CheckStatus;
  /** On failure, what is wrong and what to do about it. */
  message: string;
  /** Set on a failure where the cloud did not answer (5xx, 429, 409, unreachable): the same run may pass in a moment. */
  undecided?: true;
}

export interface PreflightReport {
  passed: boolean;
  checks: PreflightCheck[];
  /** The one external network the checks found, so the cluster's reconciler need not look it up again. */
  externalNetwork?: { id: string; name: string };
}

export function reportOf(checks: PreflightCheck[]): PreflightReport {
  return { passed: checks.every((check) => check.status !== 'fail'), checks };
}

/** True when the run failed only because the cloud did not answer some checks, so it is worth running again soon. */
export function failedOnlyUndecided(report: PreflightReport): boolean {
  const failed = report.checks.filter((check) => check.status === 'fail');
  return failed.length > 0 && failed.every((check) => check.undecided === true);
}

/** One condition message summarising failed checks, e.g. for PreflightChecksPassed=False. */
export function summarizeFailures(report: PreflightReport): string {
  const failed = report.checks.filter((check) => check.status === 'fail');
  if (failed.length === 0) return `all ${report.checks.length} preflight checks passed`;
  const count = failed.length === 1 ? '1 preflight check failed' : `${failed.length} preflight checks failed`;
  return `${count}: ${failed.map((check) => check.message).join('; ')}`;
}

const statusLabels: Record<CheckStatus, string> = { pass: 'PASS', fail: 'FAIL', warn: 'WARN' };

/** One line per check, names aligned, then a verdict line. */
export function formatReport(report: PreflightReport): string {
  const width = Math.max(0, ...report.checks.map((check) => check.name.length));
  const lines = report.checks.map((check) => `${statusLabels[check.status]}  ${check.name.padEnd(width)}  ${check.message}`);
  const count = (status: CheckStatus) => report.checks.filter((check) => check.status === status).length;
  const warnings = count('warn') === 0 ? '' : `, ${plural(count('warn'), 'warning')}`;
  const verdict = report.passed
    ? `Preflight passed: ${plural(count('pass'), 'check')} passed${warnings}.`
    : `Preflight failed: ${count('fail')} of ${plural(report.checks.length, 'check')} failed${warnings}.`;
  return `${lines.join('\n')}\n\n${verdict}\n`;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

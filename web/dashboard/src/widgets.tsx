/** Small pieces the pages share. */
import type { ComponentChildren } from 'preact';

export function Badge({ tone, children }: { tone: 'ok' | 'bad' | 'warn' | 'neutral'; children: ComponentChildren }) {
  return <span class={`badge ${tone}`}>{children}</span>;
}

/** The tone of a state as OpenStack or a Ready condition words it. */
export function toneOf(state: string | undefined, ready: boolean | undefined): 'ok' | 'bad' | 'warn' | 'neutral' {
  if (state === 'ERROR' || state === 'DELETED') return 'bad';
  if (ready === true || state === 'ACTIVE' || state === 'Ready' || state === 'Provisioned') return 'ok';
  if (ready === false || state === 'BUILD' || (state?.startsWith('PENDING') ?? false)) return 'warn';
  return 'neutral';
}

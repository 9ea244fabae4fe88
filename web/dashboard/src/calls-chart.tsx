/**
 * OpenStack calls per service over the last 15 minutes: one row of bars per
 * service, one bar per 10-second interval, all on one scale, so a burst (a
 * cluster being built, a retry storm) shows where it hit. SVG, within the CSP.
 */
import { useEffect, useState } from 'preact/hooks';
import { call } from './api';

interface CallsHistory {
  intervalSeconds: number;
  samples: { at: string; calls: Record<string, number> }[];
}

const barWidth = 6;
const rowHeight = 28;
const labelWidth = 120;

export function CallsChart({ revision }: { revision: number }) {
  const [history, setHistory] = useState<CallsHistory | undefined>();
  const [error, setError] = useState<string | undefined>();
  // Samples arrive on their own clock, not with object changes: look again every interval too.
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((current) => current + 1), 10_000);
    return () => clearInterval(timer);
  }, []);
  useEffect(() => {
    call<CallsHistory>('GET', '/calls').then(setHistory, (thrown: Error) => setError(thrown.message));
  }, [revision, tick]);
  if (error) return <p class="muted">{error}</p>;
  if (!history) return null;
  const services = [...new Set(history.samples.flatMap((sample) => Object.keys(sample.calls)))].sort();
  if (services.length === 0) return <p class="muted">No OpenStack calls recorded yet (sampled every {history.intervalSeconds} s).</p>;
  const peak = Math.max(1, ...history.samples.flatMap((sample) => Object.values(sample.calls)));
  return (
    <svg
      class="calls"
      data-testid="calls"
      width={labelWidth + history.samples.length * barWidth + 80}
      height={services.length * rowHeight + 8}
      role="img"
      aria-label="OpenStack calls per service"
    >
      {services.map((service, row) => {
        const total = history.samples.reduce((sum, sample) => sum + (sample.calls[service] ?? 0), 0);
        const base = row * rowHeight + rowHeight - 4;
        return (
          <g key={service} data-service={service}>
            <text x={0} y={base} class="label">
              {service}
            </text>
            {history.samples.map((sample, index) => {
              const height = ((sample.calls[service] ?? 0) / peak) * (rowHeight - 8);
              return <rect key={sample.at} x={labelWidth + index * barWidth} y={base - height} width={barWidth - 1} height={height} />;
            })}
            <text x={labelWidth + history.samples.length * barWidth + 6} y={base} class="total">
              {total}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

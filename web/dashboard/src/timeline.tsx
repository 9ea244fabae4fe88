/**
 * The provisioning timeline: one bar per object from its creation to Ready,
 * on one time axis, so the span that decides when the cluster is Ready shows
 * as the bar ending last. The axis ends at the last thing that happened to the
 * cluster's objects, not at the moment the page is drawn, so the bars keep
 * their length as time passes; an object not Ready yet runs to that end.
 * Drawn in SVG: its geometry is attributes, which the page's
 * Content-Security-Policy allows where inline styles are not.
 */
import type { EventView, TimelineSpan } from './api';

const rowHeight = 20;
const labelWidth = 260;
const chartWidth = 640;

export function Timeline({ spans, endsAt, events = [] }: { spans: TimelineSpan[]; endsAt: string | undefined; events?: EventView[] }) {
  if (spans.length === 0) return null;
  const start = Math.min(...spans.map((span) => Date.parse(span.createdAt)));
  const end = Math.max(endsAt ? Date.parse(endsAt) : start, ...spans.map((span) => Date.parse(span.readyAt ?? span.createdAt)));
  const scale = chartWidth / Math.max(1, end - start);
  const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`;
  return (
    <svg
      class="timeline"
      data-testid="timeline"
      width={labelWidth + chartWidth + 60}
      height={spans.length * rowHeight + 24}
      role="img"
      aria-label="creation to Ready of each object"
    >
      {spans.map((span, row) => {
        const created = Date.parse(span.createdAt);
        const finished = span.readyAt ? Date.parse(span.readyAt) : end;
        const y = row * rowHeight;
        return (
          <g key={span.object} data-object={span.object}>
            <text x={0} y={y + 14} class="label">
              {span.object}
            </text>
            <rect
              x={labelWidth + (created - start) * scale}
              y={y + 4}
              width={Math.max(2, (finished - created) * scale)}
              height={rowHeight - 8}
              class={span.readyAt ? 'ready' : 'pending'}
            />
            <text x={labelWidth + (finished - start) * scale + 4} y={y + 14} class="duration">
              {span.readyAt ? seconds(finished - created) : 'not Ready'}
            </text>
            {events
              .filter((event) => event.object === span.object)
              .map((event) => (
                <circle
                  key={`${event.reason}/${event.lastAt}/${event.message}`}
                  cx={labelWidth + (Date.parse(event.lastAt) - start) * scale}
                  cy={y + 10}
                  r={3}
                  class={`event ${event.type.toLowerCase()}`}
                  data-reason={event.reason}
                >
                  <title>{`${event.type} ${event.reason}: ${event.message}`}</title>
                </circle>
              ))}
          </g>
        );
      })}
      <text x={labelWidth} y={spans.length * rowHeight + 18} class="axis">
        0 s
      </text>
      <text x={labelWidth + chartWidth} y={spans.length * rowHeight + 18} class="axis" text-anchor="end">
        {seconds(end - start)}
      </text>
    </svg>
  );
}

/**
 * Structured, levelled logs on pino: JSON lines on stderr, one field per fact (component,
 * controller, object key, request id) so request and reconcile lines can be joined. Verbosity is
 * klog's `-v`: 0 info, 1 to 3 debug (request lines, reconcile outcomes), 4 and up trace.
 */
import { pino, type DestinationStream, type Level, type LevelWithSilent, type Logger } from 'pino';

export type { Logger } from 'pino';

export function levelForVerbosity(verbosity: number): Level {
  return verbosity >= 4 ? 'trace' : verbosity >= 1 ? 'debug' : 'info';
}

export interface LoggerOptions {
  /** klog's -v (default 0); `level` wins when both are given. */
  verbosity?: number;
  level?: LevelWithSilent;
  /** Default stderr, written synchronously so the last lines before an exit are not lost. */
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    { level: options.level ?? levelForVerbosity(options.verbosity ?? 0), timestamp: pino.stdTimeFunctions.isoTime },
    options.destination ?? pino.destination({ fd: 2, sync: true }),
  );
}

/**
 * Where components send what no caller can be told (a failed background compaction, a throwing
 * listener) when the composition root gave them no logger of their own: errors still reach stderr.
 */
export const fallbackLogger: Logger = createLogger();

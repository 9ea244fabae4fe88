/**
 * The reconciler's OpenStack requests as its sessions log them, kept to
 * explain a failure: which creates ran, which failed, and in what order.
 */
import { collectionPaths, type Duplicate } from '../../../harness/census.js';

export class RequestTrace {
  private readonly lines: string[] = [];

  /** For SessionOptions.logger. */
  readonly logger = (line: string): void => void this.lines.push(`${new Date().toISOString()} ${line}`);

  /** Every request that changed (or tried to change) the duplicated kinds, in order. */
  explain(duplicates: readonly Duplicate[]): string {
    if (duplicates.length === 0) return '';
    const paths = [...new Set(duplicates.map((duplicate) => collectionPaths[duplicate.kind]))];
    const relevant = this.lines.filter((line) => / (POST|PUT|DELETE) /.test(line) && paths.some((collection) => line.includes(collection)));
    return `requests for ${paths.join(', ')}:\n${relevant.join('\n')}`;
  }
}

import { vi } from 'vitest';

/**
 * Retries an assertion until it holds. The bound only keeps a broken source
 * from hanging the suite; it is generous so a loaded machine never trips it.
 */
export function eventually<T>(assertion: () => T | Promise<T>): Promise<T> {
  return vi.waitFor(assertion, { timeout: 15_000, interval: 5 });
}

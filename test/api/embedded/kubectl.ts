/** kubectl calls that must succeed or must fail, for the embedded kinds' tests. */
import { expect } from 'vitest';
import type { TestServer } from '../../../harness/test-server.js';

export function kubectlExpectations(server: () => TestServer) {
  return {
    /** stdout of a kubectl call that must succeed. */
    async ok(args: string[], input?: string, env?: Record<string, string>): Promise<string> {
      const result = await server().kubectl(args, { input, env });
      if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
      return result.stdout;
    },
    /** stderr of a kubectl call that must fail. */
    async fails(args: string[], input?: string): Promise<string> {
      const result = await server().kubectl(args, { input });
      expect(result.code, `kubectl ${args.join(' ')} should fail; stdout: ${result.stdout}`).not.toBe(0);
      return result.stderr;
    },
  };
}

/**
 * Waiting for a state of something outside the test process that offers no event to wait on (a
 * process that has exited, a readiness endpoint): asks `probe` again every `intervalMs` until it
 * answers something other than undefined, or fails after `timeoutMs` naming `what`.
 */
export async function pollUntil<T>(what: string, probe: () => Promise<T | undefined>, options: { timeoutMs?: number; intervalMs?: number } = {}): Promise<T> {
  const { timeoutMs = 5000, intervalMs = 20 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * A deadline on a call to the management cluster (k8s.io/apiserver gives its delegated reviews
 * 10 s): past it the request being authenticated or authorized fails instead of waiting on a
 * kube-apiserver that does not answer.
 */
export const reviewTimeoutMs = 10_000;

export async function withDeadline<T>(call: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([call, expired]);
  } finally {
    clearTimeout(timer);
  }
}

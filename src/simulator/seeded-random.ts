/**
 * A seeded pseudo-random sequence (mulberry32: small, fast, uniform enough for fault injection and
 * test generators), so a run that failed can be replayed from its seed. The simulator draws its
 * fault rolls from it; tests and benchmarks use the same one.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seed for a run that was given none: random, and meant to be printed. */
export function freshSeed(): number {
  return Math.floor(Math.random() * 2 ** 31);
}

/** Key ranges as both backends scan them: keys compare bytewise in UTF-8, in SQLite as in etcd. */

/**
 * An exclusive upper bound for the keys starting with `prefix`: the prefix with
 * its last code point incremented. UTF-8 preserves code point order, so this
 * holds bytewise too. Undefined when no bound exists (empty prefix).
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const codePoints = Array.from(prefix);
  while (codePoints.length > 0) {
    const last = codePoints.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) {
      // Surrogates are not code points UTF-8 can encode.
      const next = last === 0xd7ff ? 0xe000 : last + 1;
      return codePoints.join('') + String.fromCodePoint(next);
    }
  }
  return undefined;
}

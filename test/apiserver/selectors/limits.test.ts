/**
 * What one selector may ask (selectors/limits.ts): 100 requirements or terms, 100 values in a set;
 * one more is a 400 BadRequest naming the limit, whatever the syntax around it.
 */
import { describe, expect, it } from 'vitest';
import { parseFieldSelector } from '../../../src/apiserver/selectors/fields.js';
import { parseLabelSelector } from '../../../src/apiserver/selectors/labels.js';

const terms = (count: number, term: (i: number) => string) => Array.from({ length: count }, (_, i) => term(i)).join(',');

function refusal(parse: () => unknown): { code: number; reason: string; message: string } {
  try {
    parse();
  } catch (error) {
    const { code, reason, message } = error as { code: number; reason: string; message: string };
    return { code, reason, message };
  }
  throw new Error('the selector was accepted');
}

describe('selector limits', () => {
  it('takes a label selector of 100 requirements and refuses one of 101', () => {
    expect(parseLabelSelector(terms(100, (i) => `k${i}=v`)).requiredLabels).toHaveLength(100);
    expect(refusal(() => parseLabelSelector(terms(101, (i) => `!k${i}`)))).toEqual({
      code: 400,
      reason: 'BadRequest',
      message: 'the label selector has 101 requirements: at most 100 are allowed',
    });
  });

  it('takes a set of 100 values and refuses one of 101, counting repeated values once', () => {
    expect(parseLabelSelector(`k in (${terms(100, (i) => `v${i}`)})`).toString()).toContain('v99');
    expect(parseLabelSelector(`k in (${terms(200, (i) => `v${i % 100}`)})`).empty).toBe(false);
    expect(refusal(() => parseLabelSelector(`k notin (${terms(101, (i) => `v${i}`)})`)).message).toBe(
      'the label selector\'s set for "k" has 101 values: at most 100 are allowed',
    );
  });

  it('takes a field selector of 100 terms and refuses one of 101, empty terms not counted', () => {
    expect(parseFieldSelector(`${terms(100, (i) => `metadata.name!=n${i}`)},,`).empty).toBe(false);
    expect(refusal(() => parseFieldSelector(terms(101, (i) => `metadata.name!=n${i}`))).message).toBe(
      'the field selector has 101 terms: at most 100 are allowed',
    );
  });
});

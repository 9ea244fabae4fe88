import { describe, expect, it } from 'vitest';
import { labelSelectorFromObject, parseLabelSelector } from '../../../src/apiserver/selectors/labels.js';
import { LABEL_VALUE, NAME_PART, TOO_MANY_SLASHES, badRequest } from '../kube-messages.js';

const INT_ONLY = "for 'Gt', 'Lt' operators, the value must be an integer";
const OPERATORS = 'in, notin, =, ==, !=, gt, lt';

describe('parseLabelSelector: syntax', () => {
  it.each([
    ['', ''],
    ['   ', ''],
    ['a=b', 'a=b'],
    ['a==b', 'a==b'],
    ['a!=b', 'a!=b'],
    ['a in (b,c)', 'a in (b,c)'],
    ['a in (c,b,c)', 'a in (b,c)'],
    ['a notin (b)', 'a notin (b)'],
    ['a', 'a'],
    ['!a', '!a'],
    ['a>5', 'a>5'],
    ['a<05', 'a<05'],
    ['x=y,a=b', 'a=b,x=y'],
    ['x=y,a', 'a,x=y'],
    ['  a  =  b  ,\tc\n', 'a=b,c'],
    ['a in(b ,c )', 'a in (b,c)'],
    ['! a', '!a'],
    ['a=', 'a='],
    ['a==', 'a=='],
    ['a=,b', 'a=,b'],
    ['a in ()', 'a in ()'],
    ['a in (,b)', 'a in (,b)'],
    ['a in (b,)', 'a in (,b)'],
    ['a in (b,,c)', 'a in (,b,c)'],
    ['in=notin', 'in=notin'],
    ['a in (in,notin)', 'a in (in,notin)'],
    ['notin notin (in)', 'notin notin (in)'],
    ['!example.com/skip,example.com/role in (control-plane)', 'example.com/role in (control-plane),!example.com/skip'],
    ['b=1,a=2,b=3', 'a=2,b=1,b=3'],
  ])('%j → %j', (text, canonical) => {
    const selector = parseLabelSelector(text);
    expect(selector.toString()).toBe(canonical);
    expect(selector.empty).toBe(canonical === '');
  });

  it('round-trips its canonical form', () => {
    const canonical = parseLabelSelector('z notin (b,a), y, !x, w>3, v=1').toString();
    expect(parseLabelSelector(canonical).toString()).toBe(canonical);
  });
});

describe('parseLabelSelector: matching', () => {
  const labels = { a: '1', b: 'x', e: '' };
  it.each([
    ['', true],
    ['a=1', true],
    ['a==1', true],
    ['a=2', false],
    ['c=1', false],
    ['e=', true],
    ['c=', false],
    ['a!=2', true],
    ['a!=1', false],
    ['c!=1', true],
    ['a in (1,2)', true],
    ['a in (2,3)', false],
    ['c in (1)', false],
    ['e in ()', true],
    ['a notin (2)', true],
    ['a notin (1,2)', false],
    ['c notin (1)', true],
    ['a', true],
    ['e', true],
    ['c', false],
    ['!c', true],
    ['!a', false],
    ['a>0', true],
    ['a>1', false],
    ['a<2', true],
    ['a<1', false],
    ['b>0', false],
    ['b<0', false],
    ['c>0', false],
    ['a=1,b=x', true],
    ['a=1,b=y', false],
    ['a=1,!c,b notin (y)', true],
  ])('%j on {a:1,b:x,e:""} → %s', (text, expected) => {
    expect(parseLabelSelector(text).matches(labels)).toBe(expected);
  });

  it.each([
    ['', true],
    ['!a', true],
    ['a!=1', true],
    ['a notin (1)', true],
    ['a', false],
    ['a=', false],
    ['a in ()', false],
  ])('%j on no labels → %s', (text, expected) => {
    expect(parseLabelSelector(text).matches(undefined)).toBe(expected);
    expect(parseLabelSelector(text).matches({})).toBe(expected);
  });

  it('does not see inherited properties as labels', () => {
    expect(parseLabelSelector('toString').matches({})).toBe(false);
    expect(parseLabelSelector('!constructor').matches({})).toBe(true);
  });

  it('compares gt/lt as 64-bit integers', () => {
    expect(parseLabelSelector('a>9007199254740992').matches({ a: '9007199254740993' })).toBe(true);
    expect(parseLabelSelector('a<9223372036854775807').matches({ a: '9223372036854775808' })).toBe(false);
  });

  it('names the labels every object it selects carries: its equalities and single-value sets, nothing it only excludes', () => {
    expect(parseLabelSelector('e,a=1,b==2,c in (3),d in (4,5),f!=6,g notin (7),!h,i>8').requiredLabels).toEqual([
      ['a', '1'],
      ['b', '2'],
      ['c', '3'],
    ]);
    expect(parseLabelSelector('').requiredLabels).toEqual([]);
    expect(labelSelectorFromObject({ matchLabels: { z: '1' }, matchExpressions: [{ key: 'y', operator: 'In', values: ['2'] }] }).requiredLabels).toEqual([
      ['y', '2'],
      ['z', '1'],
    ]);
  });
});

describe('parseLabelSelector: errors', () => {
  it.each([
    ['a b', `unable to parse requirement: found 'b', expected: ${OPERATORS}`],
    ['a!!b', `unable to parse requirement: found '!', expected: ${OPERATORS}`],
    ['a=b,', "found '', expected: identifier after ','"],
    ['a=b,,c', "found ',', expected: identifier after ','"],
    [',a', "found ',', expected: !, identifier, or 'end of string'"],
    ['=a', "found '=', expected: !, identifier, or 'end of string'"],
    ['(a)', "found '(', expected: !, identifier, or 'end of string'"],
    ['a=b c', "found 'c', expected: ',' or 'end of string'"],
    ['a=b=c', "found '=', expected: ',' or 'end of string'"],
    ['!a=b', "found '=', expected: ',' or 'end of string'"],
    ['a in b', "unable to parse requirement: found 'b' expected: '('"],
    ['a in', "unable to parse requirement: found '' expected: '('"],
    ['a in (b', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['a in (b c)', "unable to parse requirement: found 'c', expected: ',' or ')'"],
    ['a in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
    ['a in (b,=)', "unable to parse requirement: found '=', expected: ',', or identifier"],
    ['a in (b,', "unable to parse requirement: found '', expected: ',', or identifier"],
    ['a=(', "unable to parse requirement: found '(', expected: identifier"],
    ['a===b', "unable to parse requirement: found '=', expected: identifier"],
    ['!', "unable to parse requirement: found '', expected: identifier"],
    ['!=a', "found '!=', expected: !, identifier, or 'end of string'"],
    ['!!a', "unable to parse requirement: found '!', expected: identifier"],
    ['a/b/c=d', `unable to parse requirement: <nil>: Invalid value: "a/b/c": ${TOO_MANY_SLASHES}`],
    ['-a', `unable to parse requirement: <nil>: Invalid value: "-a": ${NAME_PART}`],
    ['a/', `unable to parse requirement: <nil>: Invalid value: "a/": name part must be non-empty; ${NAME_PART}`],
    ['a=-b', `unable to parse requirement: values[0][a]: Invalid value: "-b": ${LABEL_VALUE}`],
    ['a in (x,-b)', `unable to parse requirement: values[0][a]: Invalid value: "-b": ${LABEL_VALUE}`],
    [`a=${'v'.repeat(64)}`, `unable to parse requirement: values[0][a]: Invalid value: "${'v'.repeat(64)}": must be no more than 63 bytes`],
    ['a>x', `unable to parse requirement: values[0]: Invalid value: "x": ${INT_ONLY}`],
    ['a>', `unable to parse requirement: values[0]: Invalid value: "": ${INT_ONLY}`],
    ['a<9223372036854775808', `unable to parse requirement: values[0]: Invalid value: "9223372036854775808": ${INT_ONLY}`],
    ['a>-1', `unable to parse requirement: values[0][a]: Invalid value: "-1": ${LABEL_VALUE}`],
    ['a>x_', `unable to parse requirement: [values[0]: Invalid value: "x_": ${INT_ONLY}, values[0][a]: Invalid value: "x_": ${LABEL_VALUE}]`],
  ])('%j', (text, message) => {
    expect(badRequest(() => parseLabelSelector(text))).toBe(message);
  });

  // kube's lexer takes a NUL byte for the end of input where a token starts, and swallows it right after a token.
  it.each([
    ['a=b \0,c', 'a=b'],
    ['a=b,\0c=d', 'a=b,c=d'],
    ['a=b\0,c', 'a=b,c'],
  ])('treats NUL in %j as kube does', (text, canonical) => {
    expect(parseLabelSelector(text).toString()).toBe(canonical);
  });
});

describe('labelSelectorFromObject', () => {
  it.each([null, undefined])('%s selects nothing', (sel) => {
    const selector = labelSelectorFromObject(sel);
    expect(selector.empty).toBe(false);
    expect(selector.matches({})).toBe(false);
    expect(selector.matches({ a: 'b' })).toBe(false);
  });

  it.each([{}, { matchLabels: {}, matchExpressions: [] }, { matchLabels: null, matchExpressions: null }])('%j selects everything', (sel) => {
    const selector = labelSelectorFromObject(sel);
    expect(selector.empty).toBe(true);
    expect(selector.matches(undefined)).toBe(true);
    expect(selector.toString()).toBe('');
  });

  it('combines matchLabels and every operator', () => {
    const selector = labelSelectorFromObject({
      matchLabels: { 'cluster.x-k8s.io/cluster-name': 'c1' },
      matchExpressions: [
        { key: 'role', operator: 'In', values: ['worker', 'control-plane'] },
        { key: 'zone', operator: 'NotIn', values: ['z3'] },
        { key: 'ready', operator: 'Exists' },
        { key: 'paused', operator: 'DoesNotExist', values: [] },
      ],
    });
    expect(selector.empty).toBe(false);
    expect(selector.toString()).toBe('cluster.x-k8s.io/cluster-name=c1,!paused,ready,role in (control-plane,worker),zone notin (z3)');
    const base = { 'cluster.x-k8s.io/cluster-name': 'c1', role: 'worker', ready: '' };
    expect(selector.matches(base)).toBe(true);
    expect(selector.matches({ ...base, zone: 'z1' })).toBe(true);
    expect(selector.matches({ ...base, zone: 'z3' })).toBe(false);
    expect(selector.matches({ ...base, paused: 'true' })).toBe(false);
    expect(selector.matches({ ...base, role: 'other' })).toBe(false);
    expect(selector.matches({ role: 'worker', ready: '' })).toBe(false);
  });

  it.each([
    [{ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }, '"Gt" is not a valid label selector operator'],
    [{ matchExpressions: [{ key: 'a', operator: 'in', values: ['1'] }] }, '"in" is not a valid label selector operator'],
    [{ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }, "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"],
    [{ matchExpressions: [{ key: 'a', operator: 'NotIn' }] }, "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"],
    [
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
      'values: Invalid value: ["x"]: values set must be empty for exists and does not exist',
    ],
    [{ matchLabels: { '-a': 'b' } }, `key: Invalid value: "-a": ${NAME_PART}`],
    [{ matchLabels: { a: '-' } }, `values[0][a]: Invalid value: "-": ${LABEL_VALUE}`],
    [{ matchExpressions: [{ key: 'a', operator: 'In', values: ['ok', 'b-'] }] }, `values[1][a]: Invalid value: "b-": ${LABEL_VALUE}`],
    [
      { matchExpressions: [{ key: 'a/b/c', operator: 'DoesNotExist', values: ['-'] }] },
      `[key: Invalid value: "a/b/c": ${TOO_MANY_SLASHES}, values: Invalid value: ["-"]: values set must be empty for exists and does not exist, values[0][a/b/c]: Invalid value: "-": ${LABEL_VALUE}]`,
    ],
  ])('rejects %j', (sel, message) => {
    expect(badRequest(() => labelSelectorFromObject(sel))).toBe(message);
  });
});

import { describe, expect, it } from 'vitest';
import { duplicateJsonFields } from '../../../src/apiserver/http/json-duplicates.js';

describe('duplicateJsonFields', () => {
  it('finds none in a body without duplicates, whatever its strings hold', () => {
    expect(duplicateJsonFields('{"a":"{\\"a\\":1,\\"a\\":2}","b":["a","a"],"c":{"a":1},"d":{"a":1}}')).toEqual([]);
  });

  it('names each duplicate by its path through objects and arrays', () => {
    const text = '{"spec":{"ports":[{"name":"a"},{"name":"b","port":1,"name":"c"}],"x":1,"x":2},"spec2":0}';
    expect(duplicateJsonFields(text)).toEqual(['spec.ports[1].name', 'spec.x']);
  });

  it('compares keys after unescaping, and reports a top-level duplicate by its name', () => {
    expect(duplicateJsonFields('{"ab":1,"a\\u0062":2}')).toEqual(['ab']);
  });

  it('keeps counting indices after nested containers and escaped quotes', () => {
    expect(duplicateJsonFields('[{"k":"\\\\"},[1,2],{"k":[],"k":{}}]')).toEqual(['[2].k']);
  });

  it('stops after twenty', () => {
    const text = `{${Array.from({ length: 50 }, () => '"k":1').join(',')}}`;
    expect(duplicateJsonFields(text)).toHaveLength(20);
  });
});

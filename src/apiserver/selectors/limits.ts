/**
 * How much one selector may ask of the server. A selector is evaluated against every object a list
 * or watch walks, so its cost is its terms times the objects. kube-apiserver bounds a label key
 * (253-character prefix, 63-character name) and value (63 characters) but not the number of terms
 * or of a set's values: only its 1 MiB of request headers does. Here the 16 KiB URL still allows
 * some 5,000 terms, and four LISTs of 3,000 Secrets with them held the one thread for seconds.
 * Selectors clients write name a handful of labels (a cluster, a role, a pool); 100 terms, and 100
 * values in one set, leave them ten times that and bound a LIST's matching to 100 checks an object.
 */
import { errors, type ApiError } from '../errors.js';

export const maxSelectorTerms = 100;
export const maxSetValues = 100;

export function tooManyTerms(selector: 'label' | 'field', count: number): ApiError {
  const terms = selector === 'label' ? 'requirements' : 'terms';
  return errors.badRequest(`the ${selector} selector has ${count} ${terms}: at most ${maxSelectorTerms} are allowed`);
}

export function tooManyValues(key: string, count: number): ApiError {
  return errors.badRequest(`the label selector's set for ${JSON.stringify(key)} has ${count} values: at most ${maxSetValues} are allowed`);
}

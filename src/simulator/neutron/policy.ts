/**
 * Attribute-level policy checks with Neutron's failure message. Neutron
 * builds one AND rule from the action and every explicitly set attribute
 * that has its own policy (`create_network:shared`, ...) and reports that
 * whole rule: "(rule:create_network and rule:create_network:shared) is
 * disallowed by policy". Admins pass everything (legacy defaults).
 */
import { policyDenied } from './errors.js';
import type { Caller } from './model.js';

export interface AttributeCheck {
  attribute: string;
  allowed: boolean;
  /** Sub-attribute policies (`create_port:fixed_ips:ip_address`), in request order. */
  sub?: { name: string; allowed: boolean }[];
}

export function enforce(caller: Caller, action: string, actionAllowed: boolean, checks: AttributeCheck[] = []): void {
  if (caller.isAdmin) return;
  let rule = `rule:${action}`;
  let allowed = actionAllowed;
  for (const check of checks) {
    let attrRule = `rule:${action}:${check.attribute}`;
    allowed &&= check.allowed;
    if (check.sub?.length) {
      attrRule = `(${attrRule} and (${check.sub.map((s) => `rule:${action}:${check.attribute}:${s.name}`).join(' and ')}))`;
      allowed &&= check.sub.every((s) => s.allowed);
    }
    rule = `(${rule} and ${attrRule})`;
  }
  if (!allowed) throw policyDenied(rule);
}

/** The sub-attribute names of a list of dicts, each key once per element, as Neutron walks them. */
export const listSubAttributes = (items: readonly object[], allowed: (key: string) => boolean) =>
  items.flatMap((item) => Object.keys(item).map((name) => ({ name, allowed: allowed(name) })));

/**
 * @peculiar/x509 registers its algorithms through tsyringe, which refuses to
 * load unless a Reflect metadata API exists, and no polyfill package is a
 * dependency here. tsyringe only needs define/get(Own)Metadata, so this
 * side-effect module supplies those (when nothing else has) and must be
 * imported before @peculiar/x509.
 */

type PropertyKeyOrNone = string | symbol | undefined;

const metadata = new WeakMap<object, Map<PropertyKeyOrNone, Map<unknown, unknown>>>();

function ownMap(target: object, property: PropertyKeyOrNone, create: boolean): Map<unknown, unknown> | undefined {
  let byProperty = metadata.get(target);
  if (!byProperty && create) {
    byProperty = new Map();
    metadata.set(target, byProperty);
  }
  let entries = byProperty?.get(property);
  if (!entries && create && byProperty) {
    entries = new Map();
    byProperty.set(property, entries);
  }
  return entries;
}

const api = {
  defineMetadata(key: unknown, value: unknown, target: object, property?: string | symbol): void {
    ownMap(target, property, true)!.set(key, value);
  },
  getOwnMetadata(key: unknown, target: object, property?: string | symbol): unknown {
    return ownMap(target, property, false)?.get(key);
  },
  getMetadata(key: unknown, target: object, property?: string | symbol): unknown {
    for (let current: object | null = target; current; current = Object.getPrototypeOf(current)) {
      const entries = ownMap(current, property, false);
      if (entries?.has(key)) return entries.get(key);
    }
    return undefined;
  },
};

const reflect = Reflect as unknown as Record<string, unknown>;
if (typeof reflect.getMetadata !== 'function') {
  for (const [name, fn] of Object.entries(api)) reflect[name] = fn;
}

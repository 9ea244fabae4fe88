/**
 * What is derived from the object a watch event is fanning out (its conversions, its encodings),
 * by key. A storage event reaches every watcher in one synchronous pass, and watchers are handed
 * the very object the cache holds, so remembering the last object alone lets all of them share one
 * derivation: nothing is kept once the next object comes.
 */
export class FanOutMemo<V> {
  private object: object | undefined;
  private readonly byKey = new Map<string, V>();

  get(object: object, key: string, derive: () => V): V {
    if (object !== this.object) {
      this.object = object;
      this.byKey.clear();
    }
    let value = this.byKey.get(key);
    if (value === undefined) {
      value = derive();
      this.byKey.set(key, value);
    }
    return value;
  }
}

/** Events into this server's own storage, as the embedded mode serves them (core v1 Event kind). */
import type { JsonObject } from '../../storage/interface.js';
import { metaOf, type KindClient } from '../objects.js';
import type { EventSink } from './recorder.js';

export function storageEventSink(events: KindClient): EventSink {
  return {
    create: (namespace, event) => events.create(namespace, event),
    list: (namespace) => events.list(namespace),
    async update(namespace, event) {
      const meta = metaOf(event);
      const written = await events.update({ namespace, name: meta.name, uid: meta.uid }, (current: JsonObject) => {
        current.count = event.count;
        current.lastTimestamp = event.lastTimestamp;
      });
      if (!written) throw new Error(`event ${namespace}/${meta.name} is gone`);
      return written;
    },
  };
}

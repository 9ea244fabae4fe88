/** What every check works with once the credentials are known to work. */
import type { ServiceClients, SessionScope } from '../openstack/index.js';

export interface CheckContext {
  clients: ServiceClients;
  scope: SessionScope;
  /** The project as messages name it: its name, else its id. */
  project: string;
}

export { openStackClusterIdentityV1alpha1 } from './openstackclusteridentity.js';
export { openStackFloatingIPPoolV1alpha1 } from './openstackfloatingippool.js';
export { openStackServerV1alpha1 } from './openstackserver.js';

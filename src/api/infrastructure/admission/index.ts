/**
 * Admission rules of the CAPO kinds: ports of CAPO's validating webhooks
 * (pkg/webhooks) and of the CRD validation rules that compare with the old
 * object. OpenStackClusterIdentity has neither.
 */
export { openStackClusterAdmission } from './openstackcluster.js';
export { openStackClusterTemplateAdmission } from './openstackclustertemplate.js';
export { openStackFloatingIPPoolAdmission } from './openstackfloatingippool.js';
export { openStackMachineAdmission } from './openstackmachine.js';
export { openStackMachineTemplateAdmission } from './openstackmachinetemplate.js';
export { openStackServerAdmission } from './openstackserver.js';

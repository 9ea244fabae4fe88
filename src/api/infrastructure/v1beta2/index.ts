export { openStackClusterV1beta2 } from './openstackcluster.js';
export { openStackClusterTemplateV1beta2 } from './openstackclustertemplate.js';
export { openStackMachineV1beta2 } from './openstackmachine.js';
export { openStackMachineTemplateV1beta2 } from './openstackmachinetemplate.js';

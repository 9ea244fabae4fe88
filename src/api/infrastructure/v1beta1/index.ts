export { openStackClusterV1beta1 } from './openstackcluster.js';
export { openStackClusterTemplateV1beta1 } from './openstackclustertemplate.js';
export { openStackMachineV1beta1 } from './openstackmachine.js';
export { openStackMachineTemplateV1beta1 } from './openstackmachinetemplate.js';

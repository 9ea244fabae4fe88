/**
 * ORC's Image (openstack.k-orc.cloud/v1alpha1, as ORC v2.4 serves it): a
 * Glance image that ORC either manages (creates, uploads from a URL, deletes)
 * or imports (by ID or filter) without touching. CAPO's `image.imageRef`
 * points at one. The schema is ORC's CRD node for node, rules included, so
 * that manifests written for ORC apply unchanged.
 */
import { z } from 'zod';
import type { KindVersion } from '../../apiserver/registry/kind.js';
import { atomicListOf, boundedInt32, condition, mapListOf, setOf, withRules } from '../infrastructure/v1beta2/common.js';

/** ORC's OpenStackName: no commas, since OpenStack filters join values with them. */
const openStackName = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[^,]+$/);
const imageTag = z.string().min(1).max(255);
const visibility = z.enum(['public', 'private', 'shared', 'community']);
const hashAlgorithm = z.enum(['md5', 'sha1', 'sha256', 'sha512']);
const hardwareBus = z.enum(['scsi', 'virtio', 'uml', 'xen', 'ide', 'usb', 'lxc']);

const immutable = (what: string) => ({ rule: 'self == oldSelf', message: `${what} is immutable` });

export const imageHash = z
  .object({
    algorithm: hashAlgorithm.describe('The hash algorithm of value.'),
    value: z
      .string()
      .min(1)
      .max(1024)
      .regex(/^[0-9a-f]+$/)
      .describe('The hash of the data, hex encoded in lowercase.'),
  })
  .describe('A hash of image data.');

const hardware = z
  .object({
    cpuSockets: boundedInt32(1).optional().describe('Preferred number of sockets exposed to the guest (hw_cpu_sockets).'),
    cpuCores: boundedInt32(1).optional().describe('Preferred number of cores exposed to the guest (hw_cpu_cores).'),
    cpuThreads: boundedInt32(1).optional().describe('Preferred number of threads exposed to the guest (hw_cpu_threads).'),
    cpuPolicy: z.enum(['shared', 'dedicated']).optional().describe('Whether guest vCPUs float or are pinned to host CPUs (hw_cpu_policy).'),
    cpuThreadPolicy: z.enum(['prefer', 'isolate', 'require']).optional().describe('How pinned vCPUs use SMT siblings (hw_cpu_thread_policy).'),
    cdromBus: hardwareBus.optional().describe('Disk controller for CD-ROM devices (hw_cdrom_bus).'),
    diskBus: hardwareBus.optional().describe('Disk controller for disk devices (hw_disk_bus).'),
    scsiModel: z.enum(['virtio-scsi']).optional().describe('Use VirtIO SCSI for block devices (hw_scsi_model).'),
    vifModel: z
      .enum(['e1000', 'e1000e', 'ne2k_pci', 'pcnet', 'rtl8139', 'virtio', 'vmxnet3'])
      .optional()
      .describe('Model of the virtual network interface (hw_vif_model).'),
    rngModel: z.string().max(255).optional().describe('Random-number generator device of the instances (hw_rng_model).'),
    qemuGuestAgent: z.boolean().optional().describe('Enables the QEMU guest agent (hw_qemu_guest_agent).'),
  })
  .describe('Properties of the virtual hardware Nova creates.');

const properties = z
  .object({
    architecture: z
      .enum([
        'aarch64',
        'alpha',
        'armv7l',
        'cris',
        'i686',
        'ia64',
        'lm32',
        'm68k',
        'microblaze',
        'microblazeel',
        'mips',
        'mipsel',
        'mips64',
        'mips64el',
        'openrisc',
        'parisc',
        'parisc64',
        'ppc',
        'ppc64',
        'ppcemb',
        's390',
        's390x',
        'sh4',
        'sh4eb',
        'sparc',
        'sparc64',
        'unicore32',
        'x86_64',
        'xtensa',
        'xtensaeb',
      ])
      .optional()
      .describe('CPU architecture the hypervisor must support.'),
    hypervisorType: z.enum(['hyperv', 'ironic', 'lxc', 'qemu', 'uml', 'vmware', 'xen']).optional().describe('The hypervisor type.'),
    minDiskGB: boundedInt32(1).optional().describe('Disk space in GB the image needs to boot.'),
    minMemoryMB: boundedInt32(1).optional().describe('RAM in MB the image needs to boot.'),
    hardware: hardware.optional(),
    operatingSystem: z
      .object({
        distro: z
          .enum([
            'arch',
            'centos',
            'debian',
            'fedora',
            'freebsd',
            'gentoo',
            'mandrake',
            'mandriva',
            'mes',
            'msdos',
            'netbsd',
            'netware',
            'openbsd',
            'opensolaris',
            'opensuse',
            'rocky',
            'rhel',
            'sled',
            'ubuntu',
            'windows',
          ])
          .optional()
          .describe('Common name of the distribution, in lowercase (os_distro).'),
        version: z.string().max(255).optional().describe('Version as the distributor names it (os_version).'),
      })
      .optional()
      .describe('The operating system within the image.'),
  })
  .meta({ 'x-kubernetes-validations': [immutable('properties')] })
  .describe('Metadata for consumers of the image.');

const download = z
  .object({
    url: z.url().max(2048).meta({ format: 'uri' }).describe('URL of the image data.'),
    decompress: z.enum(['xz', 'gz', 'bz2']).optional().describe('Decompress the data with this algorithm before storing it.'),
    hash: imageHash
      .meta({ 'x-kubernetes-validations': [immutable('hash')] })
      .optional()
      .describe('Verifies the downloaded data, before any decompression.'),
  })
  .describe('Obtain the image data by downloading it from a URL.');

const content = z
  .object({
    containerFormat: z
      .enum(['ami', 'ari', 'aki', 'bare', 'ovf', 'ova', 'docker', 'compressed'])
      .default('bare')
      .describe('Format of the image container; bare (the default) for qcow2 and raw images.'),
    diskFormat: z.enum(['ami', 'ari', 'aki', 'vhd', 'vhdx', 'vmdk', 'raw', 'qcow2', 'vdi', 'ploop', 'iso']).describe('Format of the disk image.'),
    download,
  })
  .meta({ 'x-kubernetes-validations': [immutable('content')] })
  .describe('How to obtain the image content.');

export const imageResourceSpec = z
  .object({
    name: openStackName.optional().describe('Name of the Glance image; the object name when omitted.'),
    protected: z.boolean().optional().describe('Protects the image from deletion.'),
    tags: setOf(imageTag).max(64).optional().describe('Tags applied to the image.'),
    visibility: visibility.optional().describe('Visibility of the image.'),
    properties: properties.optional(),
    content: content.optional(),
  })
  .describe('The Glance image to create; not allowed when the policy is unmanaged, required when it is managed.');

const imageFilter = z
  .object({
    name: openStackName.optional().describe('Name of the Glance image.'),
    visibility: visibility.optional().describe('Visibility of the Glance image.'),
    tags: setOf(imageTag).max(64).optional().describe('Tags the image carries.'),
  })
  .meta({ minProperties: 1 })
  .describe('A query expected to return exactly one image; retried while it returns none.');

const managementPolicy = z
  .enum(['managed', 'unmanaged'])
  .default('managed')
  .meta({ 'x-kubernetes-validations': [immutable('managementPolicy')] })
  .describe('managed: created, updated and deleted here; unmanaged: imported, never changed or deleted.');

type ImageSpecInput = { managementPolicy: string; resource?: unknown; import?: unknown; managedOptions?: unknown };

export const imageSpec = withRules(
  z.object({
    import: z
      .object({
        id: z.guid().optional().describe('ID of an existing Glance image.'),
        filter: imageFilter.optional(),
      })
      .meta({ minProperties: 1, maxProperties: 1 })
      .optional()
      .describe('An existing image to import instead of creating one; only with the unmanaged policy.'),
    resource: imageResourceSpec.optional(),
    managementPolicy,
    managedOptions: z
      .object({
        onDelete: z.enum(['delete', 'detach']).default('delete').describe('delete: delete the image with the object; detach: leave it in Glance.'),
      })
      .optional()
      .describe('Options of the managed policy.'),
    cloudCredentialsRef: z
      .object({
        secretName: z.string().min(1).max(253).describe('Secret in the object namespace holding clouds.yaml.'),
        cloudName: z.string().min(1).max(256).describe('The entry of clouds.yaml to use.'),
      })
      .describe('Credentials of the cloud.'),
  }),
  [
    {
      rule: "self.managementPolicy == 'managed' ? has(self.resource) : true",
      message: 'resource must be specified when policy is managed',
      holds: (spec: ImageSpecInput) => spec.managementPolicy !== 'managed' || spec.resource !== undefined,
    },
    {
      rule: "self.managementPolicy == 'managed' ? !has(self.__import__) : true",
      message: 'import may not be specified when policy is managed',
      holds: (spec: ImageSpecInput) => spec.managementPolicy !== 'managed' || spec.import === undefined,
    },
    {
      rule: "self.managementPolicy == 'unmanaged' ? !has(self.resource) : true",
      message: 'resource may not be specified when policy is unmanaged',
      holds: (spec: ImageSpecInput) => spec.managementPolicy !== 'unmanaged' || spec.resource === undefined,
    },
    {
      rule: "self.managementPolicy == 'unmanaged' ? has(self.__import__) : true",
      message: 'import must be specified when policy is unmanaged',
      holds: (spec: ImageSpecInput) => spec.managementPolicy !== 'unmanaged' || spec.import !== undefined,
    },
    {
      rule: "has(self.managedOptions) ? self.managementPolicy == 'managed' : true",
      message: 'managedOptions may only be provided when policy is managed',
      holds: (spec: ImageSpecInput) => spec.managedOptions === undefined || spec.managementPolicy === 'managed',
    },
  ],
).describe('The desired state of the image.');

const imageStatus = z
  .object({
    conditions: mapListOf(condition, 'type')
      .max(32)
      .optional()
      .describe('Available: the image can be used; Progressing: the controller is still working on it.'),
    id: z.string().optional().describe('ID of the Glance image.'),
    resource: z
      .object({
        name: z.string().max(1024).optional().describe('Name of the image.'),
        status: z.string().max(1024).optional().describe('Status Glance reports.'),
        protected: z.boolean().optional().describe('Whether the image is protected from deletion.'),
        visibility: z.string().max(1024).optional().describe('Visibility of the image.'),
        hash: imageHash.optional().describe("Glance's hash of the data it stores; usually not the download hash."),
        sizeB: z.int().meta({ format: 'int64' }).optional().describe('Size of the image data in bytes.'),
        virtualSizeB: z.int().meta({ format: 'int64' }).optional().describe('Size of the disk the data represents, in bytes.'),
        tags: atomicListOf(z.string().max(1024)).max(64).optional().describe('Tags of the image.'),
      })
      .optional()
      .describe('The image as Glance reports it.'),
    downloadAttempts: z.int32().optional().describe('How many times the content download was attempted.'),
  })
  .describe('Observed state of the image.');

export const imageV1alpha1: KindVersion = {
  name: 'v1alpha1',
  served: true,
  storage: true,
  schema: z.object({ spec: imageSpec.optional(), status: imageStatus.optional() }).describe('A Glance image, managed or imported.'),
  printerColumns: [
    { name: 'ID', type: 'string', jsonPath: '.status.id', description: 'Resource ID' },
    { name: 'Available', type: 'string', jsonPath: ".status.conditions[?(@.type=='Available')].status", description: 'Availability status of resource' },
    {
      name: 'Message',
      type: 'string',
      jsonPath: ".status.conditions[?(@.type=='Progressing')].message",
      description: 'Message describing current progress status',
    },
  ],
};

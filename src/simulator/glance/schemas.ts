/** The simulated Glance's version documents and the JSON schemas clients read (image, images, member). */
import type { Router } from 'express';
import type { SimulatorContext } from '../framework.js';
import { containerFormats, diskFormats } from './model.js';

const schemaProperties = {
  id: {
    type: 'string',
    pattern: '^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){12}$',
    description: 'An identifier for the image',
  },
  name: { type: ['null', 'string'], maxLength: 255, description: 'Descriptive name for the image' },
  status: {
    type: 'string',
    readOnly: true,
    enum: ['queued', 'saving', 'active', 'killed', 'deleted', 'uploading', 'importing', 'pending_delete', 'deactivated'],
    description: 'Status of the image',
  },
  visibility: { type: 'string', enum: ['community', 'public', 'private', 'shared'], description: 'Scope of image accessibility' },
  protected: { type: 'boolean', description: 'If true, image will not be deletable.' },
  os_hidden: { type: 'boolean', description: 'If true, image will not appear in default image list response.' },
  checksum: { type: ['null', 'string'], readOnly: true, maxLength: 32, description: 'md5 hash of image contents.' },
  os_hash_algo: { type: ['null', 'string'], readOnly: true, maxLength: 64, description: 'Algorithm to calculate the os_hash_value' },
  os_hash_value: {
    type: ['null', 'string'],
    readOnly: true,
    maxLength: 128,
    description: 'Hexdigest of the image contents using the algorithm specified by the os_hash_algo',
  },
  owner: { type: ['null', 'string'], maxLength: 255, description: 'Owner of the image' },
  size: { type: ['null', 'integer'], readOnly: true, description: 'Size of image file in bytes' },
  virtual_size: { type: ['null', 'integer'], readOnly: true, description: 'Virtual size of image in bytes' },
  container_format: { type: ['null', 'string'], enum: [null, ...containerFormats], description: 'Format of the container' },
  disk_format: { type: ['null', 'string'], enum: [null, ...diskFormats], description: 'Format of the disk' },
  created_at: { type: 'string', readOnly: true, description: 'Date and time of image registration' },
  updated_at: { type: 'string', readOnly: true, description: 'Date and time of the last image modification' },
  tags: { type: 'array', items: { type: 'string', maxLength: 255 }, description: 'List of strings related to the image' },
  direct_url: { type: 'string', readOnly: true, description: 'URL to access the image file kept in external store' },
  min_ram: { type: 'integer', description: 'Amount of ram (in MB) required to boot image.' },
  min_disk: { type: 'integer', description: 'Amount of disk space (in GB) required to boot image.' },
  self: { type: 'string', readOnly: true, description: 'An image self url' },
  file: { type: 'string', readOnly: true, description: 'An image file url' },
  stores: { type: 'string', readOnly: true, description: 'Store in which image data resides.  Only present when the operator has enabled multiple stores.' },
  schema: { type: 'string', readOnly: true, description: 'An image schema url' },
  locations: {
    type: 'array',
    items: { type: 'object', properties: { url: { type: 'string', maxLength: 255 }, metadata: { type: 'object' } }, required: ['url', 'metadata'] },
    description: 'A set of URLs to access the image file kept in external store',
  },
  os_distro: {
    type: 'string',
    is_base: false,
    description: 'Common name of operating system distribution as specified in https://docs.openstack.org/python-glanceclient/latest/cli/property-keys.html',
  },
  os_version: { type: 'string', is_base: false, description: 'Operating system version as specified by the distributor' },
};
const imageSchema = {
  name: 'image',
  properties: schemaProperties,
  additionalProperties: { type: 'string' },
  links: [
    { rel: 'self', href: '{self}' },
    { rel: 'enclosure', href: '{file}' },
    { rel: 'describedby', href: '{schema}' },
  ],
};

const versions = (ctx: SimulatorContext) => {
  const href = `${ctx.baseUrl()}/image/v2/`;
  const ids: [string, string][] = [
    ['v2.16', 'CURRENT'],
    ...['2.15', '2.14', '2.13', '2.12', '2.11', '2.10', '2.9', '2.8', '2.7', '2.6', '2.5', '2.4', '2.3', '2.2', '2.1', '2.0'].map((v): [string, string] => [
      `v${v}`,
      'SUPPORTED',
    ]),
  ];
  return { versions: ids.map(([id, status]) => ({ id, status, links: [{ rel: 'self', href }] })) };
};

export function schemaRoutes(router: Router, ctx: SimulatorContext): void {
  router.get('/', (_req, res) => {
    res.status(300).json(versions(ctx));
  });
  router.get('/versions', (_req, res) => {
    res.json(versions(ctx));
  });
  router.get('/v2/schemas/image', (_req, res) => {
    res.json(imageSchema);
  });
  router.get('/v2/schemas/images', (_req, res) => {
    res.json({
      name: 'images',
      properties: {
        images: { type: 'array', items: imageSchema },
        schema: { type: 'string' },
        first: { type: 'string' },
        next: { type: 'string' },
      },
      links: [
        { rel: 'first', href: '{first}' },
        { rel: 'next', href: '{next}' },
        { rel: 'describedby', href: '{schema}' },
      ],
    });
  });
  router.get('/v2/schemas/member', (_req, res) => {
    res.json({
      name: 'member',
      properties: {
        created_at: { type: 'string', description: 'Date and time of image member creation' },
        image_id: { type: 'string', description: 'An identifier for the image' },
        member_id: { type: 'string', description: 'An identifier for the image member (tenantId)' },
        schema: { type: 'string', readOnly: true },
        status: { type: 'string', enum: ['pending', 'accepted', 'rejected'], description: 'The status of this image member' },
        updated_at: { type: 'string', description: 'Date and time of last modification of image member' },
      },
    });
  });
}

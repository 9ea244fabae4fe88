/** Request bodies of the server APIs, per microversion, after Nova's JSON schemas. */
import { isIP } from 'node:net';
import { z } from 'zod';
import { invalidName } from './errors.js';

/**
 * Nova has one JSON schema per microversion range; a field a version does not
 * know is an unexpected property there. `since` maps such fields to the
 * versions that accept them.
 */
export function knownFields(minor: number, since: Record<string, (minor: number) => boolean>) {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx) => {
    const unexpected = Object.keys(since).filter((key) => value[key] !== undefined && !since[key]!(minor));
    if (unexpected.length > 0) ctx.addIssue({ code: 'unrecognized_keys', keys: unexpected, input: value });
  };
}

const truthy = ['True', 'TRUE', 'true', '1', 'ON', 'On', 'on', 'YES', 'Yes', 'yes'] as const;
const falsy = ['False', 'FALSE', 'false', '0', 'OFF', 'Off', 'off', 'NO', 'No', 'no'] as const;

/** Nova's parameter_types.boolean: JSON booleans or their usual spellings. */
const novaBoolean = z
  .union([z.boolean(), z.enum([...truthy, ...falsy])])
  .transform((value) => (typeof value === 'boolean' ? value : (truthy as readonly string[]).includes(value)));

export const name = z
  .string()
  .min(1)
  .max(255)
  .refine((n) => n.trim() === n, invalidName('printable characters. Can not start or end with whitespace.'));

const description = z.string().max(255).nullable();

const positiveInteger = z
  .union([z.number().int(), z.string().regex(/^[0-9]+$/)])
  .transform(Number)
  .refine((n) => n >= 1, { message: 'Must be at least 1' });

export const tag = z
  .string()
  .min(1)
  .max(60)
  .regex(/^[^,/]*$/);

const ipAddress = z.string().refine((ip) => isIP(ip) !== 0, { message: 'is not a valid IP address' });

export const metadata = z.record(z.string().regex(/^[a-zA-Z0-9-_:. ]{1,255}$/), z.string().max(255));

const base64 = z
  .string()
  .max(65535)
  .refine((value) => /^[A-Za-z0-9+/\r\n]*={0,2}$/.test(value) && value.replace(/[\r\n]/g, '').length % 4 === 0, { message: "is not a 'base64'" });

const bootIndex = z.union([z.number().int(), z.string().regex(/^-?[0-9]+$/), z.null()]).transform((v) => (v === null ? null : Number(v)));

const volumeSize = z.union([z.number().int().min(0), z.string().regex(/^[0-9]+$/)]).transform(Number);

function blockDeviceMapping(minor: number) {
  return z
    .object({
      source_type: z.enum(['volume', 'image', 'snapshot', 'blank']).optional(),
      destination_type: z.enum(['local', 'volume']).optional(),
      uuid: z
        .string()
        .min(1)
        .max(255)
        .regex(/^[a-zA-Z0-9._-]*$/)
        .optional(),
      image_id: z.guid().optional(),
      volume_id: z.guid().optional(),
      snapshot_id: z.guid().optional(),
      volume_size: volumeSize.optional(),
      boot_index: bootIndex.optional(),
      delete_on_termination: novaBoolean.optional(),
      device_name: z.string().min(1).max(255).optional(),
      guest_format: z.string().max(255).optional(),
      device_type: z.string().max(255).optional(),
      disk_bus: z.string().max(255).optional(),
      virtual_name: z.string().max(255).optional(),
      no_device: z.unknown().optional(),
      connection_info: z.string().optional(),
      tag: tag.optional(),
      volume_type: z.string().max(255).nullable().optional(),
    })
    .strict()
    .superRefine(knownFields(minor, { tag: (m) => m === 32 || m >= 42, volume_type: (m) => m >= 67 }));
}

const legacyBlockDeviceMapping = z
  .object({
    volume_id: z.guid().optional(),
    snapshot_id: z.guid().optional(),
    volume_size: volumeSize.optional(),
    device_name: z.string().min(1).max(255).optional(),
    delete_on_termination: novaBoolean.optional(),
    virtual_name: z.string().max(255).optional(),
    no_device: z.unknown().optional(),
    connection_info: z.string().optional(),
  })
  .strict();

function networks(minor: number) {
  // Tags on NICs existed in 2.32-2.36 and came back in 2.42.
  const tagged = (minor >= 32 && minor <= 36) || minor >= 42;
  const item = z
    .object({
      fixed_ip: ipAddress.optional(),
      port: z.guid().nullable().optional(),
      uuid: minor >= 37 ? z.guid().optional() : z.string().optional(),
      tag: tag.optional(),
    })
    .strict()
    .superRefine(knownFields(minor, { tag: () => tagged }));
  return minor >= 37 ? z.union([z.array(item), z.enum(['none', 'auto'])]) : z.array(item);
}

const schedulerHints = z.object({ group: z.guid().optional() }).loose();

export function serverCreateSchema(minor: number) {
  const server = z
    .object({
      name,
      imageRef: z.union([z.guid(), z.literal('')]).optional(),
      flavorRef: z.union([z.string().min(1), z.number().int()]).transform(String),
      adminPass: z.string().optional(),
      metadata: metadata.optional(),
      networks: minor >= 37 ? networks(minor) : networks(minor).optional(),
      'OS-DCF:diskConfig': z.enum(['AUTO', 'MANUAL']).optional(),
      accessIPv4: z
        .string()
        .refine((ip) => ip === '' || isIP(ip) === 4)
        .optional(),
      accessIPv6: z
        .string()
        .refine((ip) => ip === '' || isIP(ip) === 6)
        .optional(),
      availability_zone: z.string().min(1).max(255).optional(),
      block_device_mapping: z.array(legacyBlockDeviceMapping).optional(),
      block_device_mapping_v2: z.array(blockDeviceMapping(minor)).optional(),
      config_drive: novaBoolean.optional(),
      key_name: name.optional(),
      min_count: positiveInteger.optional(),
      max_count: positiveInteger.optional(),
      return_reservation_id: novaBoolean.optional(),
      security_groups: z.array(z.object({ name }).strict()).optional(),
      user_data: base64.optional(),
      personality: z.array(z.object({ path: z.string().max(255), contents: z.string() }).strict()).optional(),
      description: description.optional(),
      tags: z.array(tag).max(50).optional(),
      trusted_image_certificates: z.array(z.string().min(1)).min(1).max(50).nullable().optional(),
      host: z.string().min(1).max(255).optional(),
      hypervisor_hostname: z.string().min(1).max(255).optional(),
      hostname: z.string().min(1).max(255).optional(),
    })
    .strict()
    .superRefine(
      knownFields(minor, {
        personality: (m) => m < 57,
        description: (m) => m >= 19,
        tags: (m) => m >= 52,
        trusted_image_certificates: (m) => m >= 63,
        host: (m) => m >= 74,
        hypervisor_hostname: (m) => m >= 74,
        hostname: (m) => m >= 90,
      }),
    );
  return z
    .object({
      server,
      'os:scheduler_hints': schedulerHints.optional(),
      'OS-SCH-HNT:scheduler_hints': schedulerHints.optional(),
    })
    .strict();
}
export type ServerCreateBody = z.infer<ReturnType<typeof serverCreateSchema>>;

export function serverUpdateSchema(minor: number) {
  return z
    .object({
      server: z
        .object({
          name: name.optional(),
          accessIPv4: z.string().optional(),
          accessIPv6: z.string().optional(),
          'OS-DCF:diskConfig': z.enum(['AUTO', 'MANUAL']).optional(),
          description: description.optional(),
          hostname: z.string().min(1).max(255).optional(),
        })
        .strict()
        .superRefine(knownFields(minor, { description: (m) => m >= 19, hostname: (m) => m >= 90 })),
    })
    .strict();
}

/** Nova's reset_state schema: only these two states may be set. */
export const resetStateSchema = z.object({ 'os-resetState': z.object({ state: z.enum(['active', 'error']) }).strict() }).loose();

export const rebootSchema = z.object({ reboot: z.object({ type: z.enum(['HARD', 'SOFT', 'hard', 'soft']) }).strict() }).loose();

export const metadataBody = z.object({ metadata }).strict();
export const metaItemBody = z.object({ meta: metadata }).strict();
export const tagsBody = z.object({ tags: z.array(tag).max(50) }).strict();

export function interfaceAttachSchema(minor: number) {
  return z
    .object({
      interfaceAttachment: z
        .object({
          net_id: z.guid().optional(),
          port_id: z.guid().optional(),
          fixed_ips: z
            .array(z.object({ ip_address: ipAddress }).strict())
            .max(1)
            .optional(),
          tag: tag.optional(),
        })
        .strict()
        .superRefine(knownFields(minor, { tag: (m) => m >= 49 }))
        .optional(),
    })
    .strict();
}

export function volumeAttachSchema(minor: number) {
  return z
    .object({
      volumeAttachment: z
        .object({
          volumeId: z.guid(),
          device: z
            .string()
            .max(255)
            .regex(/^(\/dev\/)?[a-z]+$/)
            .nullable()
            .optional(),
          tag: tag.optional(),
          delete_on_termination: novaBoolean.optional(),
        })
        .strict()
        .superRefine(knownFields(minor, { tag: (m) => m >= 49, delete_on_termination: (m) => m >= 79 })),
    })
    .strict();
}

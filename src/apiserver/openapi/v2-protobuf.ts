/**
 * The Swagger 2.0 document in protobuf, as kube-apiserver serves /openapi/v2 to clients that ask
 * for `application/com.github.proto-openapi.spec.v2@v1.0+protobuf` only: kubectl does when it
 * validates a `kind: List` before applying it, and reads the document's definitions to find each
 * item's schema by its x-kubernetes-group-version-kind.
 *
 * The message shapes are gnostic's OpenAPIv2.proto (github.com/google/gnostic-models), written on
 * protobufjs's reflection API with the field numbers of that file; protobufjs does the wire
 * format. gnostic keeps a value it does not type (a default, an enum member, a vendor extension) as
 * YAML text, so those carry their JSON, which YAML reads as it is. Only `definitions` is encoded:
 * the readers of the protobuf form (kube-openapi's proto models, behind kubectl's validation,
 * strategic merge and explain) read nothing else, and the JSON document keeps the paths.
 */
import protobuf from 'protobufjs';

const { Field, OneOf, Type } = protobuf;

type JsonNode = Record<string, unknown>;

const any = new Type('Any').add(new Field('yaml', 2, 'string'));
const namedAny = new Type('NamedAny').add(new Field('name', 1, 'string')).add(new Field('value', 2, 'Any'));
const typeItem = new Type('TypeItem').add(new Field('value', 1, 'string', 'repeated'));
const itemsItem = new Type('ItemsItem').add(new Field('schema', 1, 'Schema', 'repeated'));
const namedSchema = new Type('NamedSchema').add(new Field('name', 1, 'string')).add(new Field('value', 2, 'Schema'));
const properties = new Type('Properties').add(new Field('additionalProperties', 1, 'NamedSchema', 'repeated'));
const additionalPropertiesItem = new Type('AdditionalPropertiesItem')
  .add(new OneOf('oneof', ['schema', 'boolean']))
  .add(new Field('schema', 1, 'Schema'))
  .add(new Field('boolean', 2, 'bool'));
const schema = new Type('Schema')
  .add(new Field('ref', 1, 'string'))
  .add(new Field('format', 2, 'string'))
  .add(new Field('title', 3, 'string'))
  .add(new Field('description', 4, 'string'))
  .add(new Field('default', 5, 'Any'))
  .add(new Field('multipleOf', 6, 'double'))
  .add(new Field('maximum', 7, 'double'))
  .add(new Field('exclusiveMaximum', 8, 'bool'))
  .add(new Field('minimum', 9, 'double'))
  .add(new Field('exclusiveMinimum', 10, 'bool'))
  .add(new Field('maxLength', 11, 'int64'))
  .add(new Field('minLength', 12, 'int64'))
  .add(new Field('pattern', 13, 'string'))
  .add(new Field('maxItems', 14, 'int64'))
  .add(new Field('minItems', 15, 'int64'))
  .add(new Field('uniqueItems', 16, 'bool'))
  .add(new Field('maxProperties', 17, 'int64'))
  .add(new Field('minProperties', 18, 'int64'))
  .add(new Field('required', 19, 'string', 'repeated'))
  .add(new Field('enum', 20, 'Any', 'repeated'))
  .add(new Field('additionalProperties', 21, 'AdditionalPropertiesItem'))
  .add(new Field('type', 22, 'TypeItem'))
  .add(new Field('items', 23, 'ItemsItem'))
  .add(new Field('allOf', 24, 'Schema', 'repeated'))
  .add(new Field('properties', 25, 'Properties'))
  .add(new Field('discriminator', 26, 'string'))
  .add(new Field('readOnly', 27, 'bool'))
  .add(new Field('example', 30, 'Any'))
  .add(new Field('vendorExtension', 31, 'NamedAny', 'repeated'));
const definitions = new Type('Definitions').add(new Field('additionalProperties', 1, 'NamedSchema', 'repeated'));
const info = new Type('Info').add(new Field('title', 1, 'string')).add(new Field('version', 2, 'string'));
const document = new Type('Document')
  .add(new Field('swagger', 1, 'string'))
  .add(new Field('info', 2, 'Info'))
  .add(new Field('definitions', 9, 'Definitions'));
new protobuf.Root()
  .define('openapi.v2')
  .add(any)
  .add(namedAny)
  .add(typeItem)
  .add(itemsItem)
  .add(namedSchema)
  .add(properties)
  .add(additionalPropertiesItem)
  .add(schema)
  .add(definitions)
  .add(info)
  .add(document);

/** The protobuf form of a Swagger 2.0 document as `buildOpenApiV2` makes it. */
export function encodeOpenApiV2(swagger: JsonNode): Buffer {
  const message = {
    swagger: swagger.swagger,
    info: swagger.info,
    definitions: { additionalProperties: named(swagger.definitions as Record<string, JsonNode>) },
  };
  return Buffer.from(document.encode(document.fromObject(message)).finish());
}

function named(schemas: Record<string, JsonNode>): { name: string; value: JsonNode }[] {
  return Object.entries(schemas).map(([name, value]) => ({ name, value: schemaMessage(value) }));
}

const strings = ['format', 'title', 'description', 'pattern', 'discriminator'];
const numbers = ['multipleOf', 'maximum', 'minimum', 'maxLength', 'minLength', 'maxItems', 'minItems', 'maxProperties', 'minProperties'];
const booleans = ['exclusiveMaximum', 'exclusiveMinimum', 'uniqueItems', 'readOnly'];

/** One schema as gnostic's Schema message; what Swagger 2.0 has no field for is left out, as gnostic leaves it. */
function schemaMessage(node: JsonNode): JsonNode {
  const out: JsonNode = {};
  const vendorExtension: JsonNode[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (value === undefined) continue;
    if (key.startsWith('x-')) vendorExtension.push({ name: key, value: yaml(value) });
    else if (key === '$ref') out.ref = value;
    else if (strings.includes(key) || numbers.includes(key) || booleans.includes(key) || key === 'required') out[key] = value;
    else if (key === 'default' || key === 'example') out[key] = yaml(value);
    else if (key === 'enum') out.enum = (value as unknown[]).map(yaml);
    else if (key === 'type') out.type = { value: Array.isArray(value) ? value : [value] };
    else if (key === 'items') out.items = { schema: (Array.isArray(value) ? value : [value]).map((item) => schemaMessage(item as JsonNode)) };
    else if (key === 'allOf') out.allOf = (value as JsonNode[]).map(schemaMessage);
    else if (key === 'properties') out.properties = { additionalProperties: named(value as Record<string, JsonNode>) };
    else if (key === 'additionalProperties')
      out.additionalProperties = typeof value === 'boolean' ? { boolean: value } : { schema: schemaMessage(value as JsonNode) };
  }
  if (vendorExtension.length > 0) out.vendorExtension = vendorExtension;
  return out;
}

/** gnostic's untyped value: YAML text, here JSON, which is YAML. */
function yaml(value: unknown): { yaml: string } {
  return { yaml: JSON.stringify(value) };
}

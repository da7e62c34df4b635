// CustomResourceDefinitions and the standalone JSON Schemas editors and kubeconform read.
import { inlineRefs, isObject } from './refs.js';
import type { Json, JsonObject, Kind, SchemaSet } from './source.js';

export const BUNDLE_VERSION_ANNOTATION = 'extlb.dev/bundle-version';

/** The kind's openAPIV3Schema: the authored schema with every `$ref` inlined. */
export function openApiSchema(set: SchemaSet, kind: Kind): JsonObject {
  const schema = inlineRefs(set, kind.file, kind.file.json) as JsonObject;
  // The API server owns metadata's schema; a CRD may only say that it is an object.
  const props = schema.properties;
  if (isObject(props) && isObject(props.metadata)) props.metadata = { type: 'object' };
  return schema;
}

export function crdName(kind: Kind): string {
  return `${kind.crd.plural}.${kind.crd.group}`;
}

/**
 * Drops `additionalProperties: false`: the API server rejects it next to `properties` ("mutual
 * exclusive") and prunes unknown fields anyway, which is the same promise.
 */
function withoutClosedObjects(node: Json): Json {
  if (Array.isArray(node)) return node.map(withoutClosedObjects);
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'additionalProperties' && v === false) continue;
    out[k] = withoutClosedObjects(v);
  }
  return out;
}

export function crdObject(set: SchemaSet, kind: Kind, bundleVersion: string): JsonObject {
  const { crd } = kind;
  const version: JsonObject = {
    name: crd.version,
    served: true,
    storage: true,
    schema: { openAPIV3Schema: withoutClosedObjects(openApiSchema(set, kind)) },
  };
  // A status subresource only for kinds that have a status (GatewayParameters has none).
  const properties = kind.file.json.properties as JsonObject | undefined;
  if (properties?.status !== undefined) version.subresources = { status: {} };
  if (crd.printerColumns.length > 0) version.additionalPrinterColumns = crd.printerColumns as unknown as Json;
  const metadata: JsonObject = {
    name: crdName(kind),
    annotations: { [BUNDLE_VERSION_ANNOTATION]: bundleVersion },
  };
  if (crd.labels) metadata.labels = crd.labels;
  const names: JsonObject = {
    kind: crd.kind,
    listKind: crd.listKind,
    plural: crd.plural,
    singular: crd.singular,
    shortNames: crd.shortNames,
  };
  if (crd.categories.length > 0) names.categories = crd.categories;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata,
    spec: { group: crd.group, names, scope: 'Namespaced', versions: [version] },
  };
}

/**
 * The kind's schema as a draft-07 JSON Schema for the YAML language server and kubeconform: it
 * also pins apiVersion and kind, and describes metadata's common fields so editors complete them.
 */
export function jsonSchema(set: SchemaSet, kind: Kind, banner: string): JsonObject {
  const schema = openApiSchema(set, kind);
  const props = schema.properties as JsonObject;
  const apiVersion = `${kind.crd.group}/${kind.crd.version}`;
  props.apiVersion = { ...(props.apiVersion as JsonObject), enum: [apiVersion] };
  props.kind = { ...(props.kind as JsonObject), enum: [kind.crd.kind] };
  props.metadata = {
    description: "metadata is the object's standard Kubernetes metadata.",
    type: 'object',
    properties: {
      name: { type: 'string', maxLength: 253 },
      namespace: { type: 'string', maxLength: 63 },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      annotations: { type: 'object', additionalProperties: { type: 'string' } },
    },
  };
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $comment: banner,
    ...schema,
    required: ['apiVersion', 'kind', ...((schema.required as string[]) ?? [])],
  };
}

/** File name kubeconform and the YAML language server look up: `<kind>_<version>.json`. */
export function jsonSchemaFileName(kind: Kind): string {
  return `${kind.crd.kind.toLowerCase()}_${kind.crd.version}.json`;
}

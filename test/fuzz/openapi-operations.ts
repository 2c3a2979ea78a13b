/**
 * The operations of the served OpenAPI document, in the shape the fuzzer needs: where each parameter goes,
 * what body it reads, and which statuses it may answer. Nothing here knows the routes by name.
 */

export type JsonSchema = { [keyword: string]: unknown };

type RawParameter = { name: string; in: string; required?: boolean; schema?: JsonSchema };
type RawResponse = { content?: Record<string, { schema?: JsonSchema }> };
type RawOperation = {
  parameters?: RawParameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, RawResponse>;
  security?: unknown[];
};
export type OpenApiDocument = {
  paths: Record<string, Record<string, RawOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
  security?: unknown[];
};

export type Parameter = {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  schema: JsonSchema;
};

export type Operation = {
  /** Upper case, as sent. */
  method: string;
  /** The document's path template, e.g. `/device/v1/devices/{device_id}`. */
  path: string;
  params: Parameter[];
  body: { required: boolean; contentTypes: string[]; schema: JsonSchema } | null;
  /** Every status the document lists for the operation. */
  statuses: ReadonlySet<number>;
  /** The schema of each listed status's JSON body. */
  responseSchemas: ReadonlyMap<number, JsonSchema>;
  /** Whether the document asks for credentials (an empty `security` means none). */
  secured: boolean;
};

const METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

/** Follows a local `$ref` (`#/components/schemas/X`) until it reaches a schema. */
export function resolveSchema(doc: OpenApiDocument, schema: JsonSchema): JsonSchema {
  let s = schema;
  for (let hops = 0; typeof s.$ref === "string"; hops++) {
    if (hops > 20) throw new Error(`$ref cycle at ${String(s.$ref)}`);
    const ref = s.$ref;
    const name = ref.replace(/^#\/components\/schemas\//, "");
    const target = doc.components?.schemas?.[name];
    if (!target || name === ref) throw new Error(`unresolvable $ref ${ref}`);
    s = target;
  }
  return s;
}

export function readOperations(doc: OpenApiDocument): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      const params: Parameter[] = (raw.parameters ?? []).flatMap((p) =>
        p.in === "path" || p.in === "query" || p.in === "header"
          ? [
              {
                name: p.name,
                in: p.in,
                required: p.required === true || p.in === "path",
                schema: p.schema ?? {},
              },
            ]
          : [],
      );
      const content = raw.requestBody?.content ?? {};
      const contentTypes = Object.keys(content);
      const firstBody = contentTypes[0] === undefined ? undefined : content[contentTypes[0]];
      const responseSchemas = new Map<number, JsonSchema>();
      const statuses = new Set<number>();
      for (const [status, response] of Object.entries(raw.responses ?? {})) {
        const code = Number(status);
        if (!Number.isInteger(code))
          throw new Error(`${method} ${path}: response key ${status} is not a status`);
        statuses.add(code);
        const schema = response.content?.["application/json"]?.schema;
        if (schema) responseSchemas.set(code, schema);
      }
      ops.push({
        method: method.toUpperCase(),
        path,
        params,
        body: firstBody
          ? { required: raw.requestBody?.required === true, contentTypes, schema: firstBody.schema ?? {} }
          : null,
        statuses,
        responseSchemas,
        secured: (raw.security ?? doc.security ?? []).length > 0,
      });
    }
  }
  return ops;
}

/** The names of `{placeholders}` in a path template, in order. */
export function pathParamNames(template: string): string[] {
  return [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? "");
}

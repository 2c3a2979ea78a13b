import fc from "fast-check";
import { type JsonSchema, type OpenApiDocument, resolveSchema } from "./openapi-operations.ts";

/**
 * Values worth trying for a property or parameter of a given name (fixture ids, known client ids): a
 * random UUID almost never names an object, so without them valid requests would stop at 404.
 */
export type Hints = (name: string) => fc.Arbitrary<unknown> | undefined;

const DATE_MIN = new Date("2000-01-01T00:00:00.000Z");
const DATE_MAX = new Date("2099-12-31T23:59:59.999Z");

/** Strings of every kind a client may send: plain, any Unicode (lone surrogates too), control characters. */
function anyString(minLength: number, maxLength: number): fc.Arbitrary<string> {
  const sized = { minLength, maxLength };
  return fc.oneof(
    { weight: 4, arbitrary: fc.string(sized) },
    { weight: 1, arbitrary: fc.string({ ...sized, unit: "grapheme" }) },
    { weight: 1, arbitrary: fc.string({ ...sized, unit: "binary" }) },
    { weight: 1, arbitrary: fc.string({ ...sized, unit: "binary-ascii" }) },
  );
}

function withinLength(min: number, max: number) {
  return (s: string) => s.length >= min && s.length <= max;
}

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const max = typeof schema.maxLength === "number" ? schema.maxLength : Math.max(min, 40);
  switch (schema.format) {
    case "uuid":
      return fc.oneof(
        fc.uuid(),
        fc.uuid().map((u) => u.toUpperCase()),
      );
    case "date-time":
      return fc.date({ min: DATE_MIN, max: DATE_MAX, noInvalidDate: true }).map((d) => d.toISOString());
    case "uri":
      return fc.webUrl({ validSchemes: ["https"] });
    case "email":
      return fc
        .emailAddress()
        .filter((e) => typeof schema.pattern !== "string" || new RegExp(schema.pattern).test(e));
  }
  if (typeof schema.pattern === "string") {
    return fc.stringMatching(new RegExp(schema.pattern)).filter(withinLength(min, max));
  }
  return anyString(min, max);
}

function numberArbitrary(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const min = typeof schema.minimum === "number" ? schema.minimum : undefined;
  const max = typeof schema.maximum === "number" ? schema.maximum : undefined;
  if (integer) {
    const lo = Math.max(min ?? Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER);
    const hi = Math.min(max ?? Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    // fc.integer is 32-bit; the safe-integer range needs maxSafeInteger.
    const small = fc.integer({ min: Math.max(lo, -(2 ** 31)), max: Math.min(hi, 2 ** 31 - 1) });
    return fc.oneof(
      { weight: 4, arbitrary: small },
      fc.maxSafeInteger().filter((n) => n >= lo && n <= hi),
    );
  }
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

function objectArbitrary(doc: OpenApiDocument, schema: JsonSchema, hints: Hints): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, prop] of Object.entries(properties)) model[name] = valueArbitrary(doc, prop, hints, name);
  // Optional fields come in any small subset; often none, which is the request most likely to be accepted.
  const optional = Object.keys(properties).filter((k) => !required.includes(k));
  const subset = fc.oneof(
    fc.constant([]),
    fc.subarray(optional, { maxLength: Math.min(optional.length, 4) }),
  );
  return subset.chain((present) => {
    const keys = [...required, ...present];
    const picked: Record<string, fc.Arbitrary<unknown>> = {};
    for (const k of keys) picked[k] = model[k] ?? fc.constant(null);
    return fc.record(picked);
  });
}

/**
 * A fast-check arbitrary of values valid under `schema`, a JSON Schema as @fastify/swagger emits it from
 * the zod schemas. `name` is the property or parameter the value is for, so `hints` can offer known
 * values for it alongside the generated ones.
 */
export function valueArbitrary(
  doc: OpenApiDocument,
  raw: JsonSchema,
  hints: Hints = () => undefined,
  name?: string,
): fc.Arbitrary<unknown> {
  const schema = resolveSchema(doc, raw);
  const hinted = name === undefined ? undefined : hints(name);
  const generated = schemaArbitrary(doc, schema, hints);
  return hinted ? fc.oneof({ weight: 3, arbitrary: hinted }, { weight: 1, arbitrary: generated }) : generated;
}

function schemaArbitrary(doc: OpenApiDocument, schema: JsonSchema, hints: Hints): fc.Arbitrary<unknown> {
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const alternatives = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((s) => valueArbitrary(doc, s, hints)));
  const type = schema.type;
  if (Array.isArray(type)) {
    return fc.oneof(...(type as string[]).map((t) => schemaArbitrary(doc, { ...schema, type: t }, hints)));
  }
  switch (type) {
    case "string":
      return stringArbitrary(schema);
    case "integer":
      return numberArbitrary(schema, true);
    case "number":
      return numberArbitrary(schema, false);
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array": {
      const items = (schema.items ?? {}) as JsonSchema;
      const minLength = typeof schema.minItems === "number" ? schema.minItems : 0;
      const maxLength = Math.min(typeof schema.maxItems === "number" ? schema.maxItems : 5, 8);
      return fc.array(valueArbitrary(doc, items, hints), {
        minLength,
        maxLength: Math.max(minLength, maxLength),
      });
    }
    case "object":
      return objectArbitrary(doc, schema, hints);
    case undefined:
      return fc.jsonValue({ maxDepth: 2 });
    default:
      throw new Error(`unsupported JSON Schema type ${String(type)}`);
  }
}

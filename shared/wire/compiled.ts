import * as z from "zod/mini";

const compiled = new WeakMap<z.ZodMiniType, z.ZodMiniType>();

/**
 * The schema compiled (`z.compile`, zod's generated parser) on its first use, and that one kept: for the
 * schemas parsed in volume (a command, an up message, 100,000 grants of a key snapshot). Compiling at load
 * cost every process each compiled parser, those of schemas it never parses too (the gateway never parses
 * an up message, the cloud never keys; docs/decisions/gateway-memory.md).
 */
export function compiledOnUse<T extends z.ZodMiniType>(schema: T): T {
  let parser = compiled.get(schema) as T | undefined;
  if (!parser) {
    parser = z.compile(schema);
    compiled.set(schema, parser);
  }
  return parser;
}

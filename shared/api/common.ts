import { z } from "zod";

/** `{id, uri}`: how every resource refers to another (spec: Resources). */
export const Reference = z.object({ id: z.string(), uri: z.string() }).meta({ id: "Reference" });
export type Reference = z.infer<typeof Reference>;

export const UriOnly = z.object({ uri: z.string() });

/** The standard error body (spec: Errors → Standard error body). */
export const ErrorBody = z
  .object({
    error_message: z.string(),
    status_code: z.number().int(),
    correlation_id: z.string(),
    error_code: z.string().describe("Machine-readable, of the form ERRORS.<NAME>"),
  })
  .meta({ id: "Error" });
export type ErrorBody = z.infer<typeof ErrorBody>;

import { ErrorBody } from "../../shared/api/common.ts";

/**
 * Error statuses documented in the OpenAPI responses, so every status a route can answer is listed.
 * These come from the transport, before any handler runs (docs/decisions/http.md).
 */

/**
 * Any route: a malformed request or URL (400), another method on the path (405), a request not
 * received in time (408), header fields too large (431), and an internal error (500).
 */
export const ANY_ROUTE_ERRORS = {
  400: ErrorBody,
  405: ErrorBody,
  408: ErrorBody,
  431: ErrorBody,
  500: ErrorBody,
} as const;

/** Routes with path parameters: a parameter longer than 100 characters. */
export const PATH_PARAM_ERRORS = { 414: ErrorBody } as const;

/** Routes that read a JSON body: over the size limit, or another media type. */
export const BODY_ERRORS = { 413: ErrorBody, 415: ErrorBody } as const;

import type { FastifyReply, FastifyRequest } from "fastify";
import type { ErrorBody } from "../../shared/api/common.ts";
import type { AppError, ErrorCode } from "../../shared/api/errors.ts";

/** The spec's standard error body; the correlation id is the request id, also sent as a header. */
export function errorBody(
  request: FastifyRequest,
  code: ErrorCode | string,
  message: string,
  status: number,
): ErrorBody {
  return {
    error_message: message,
    status_code: status,
    correlation_id: String(request.id),
    error_code: code,
  };
}

export function sendAppError(request: FastifyRequest, reply: FastifyReply, err: AppError) {
  return reply
    .code(err.status)
    .headers(err.headers)
    .send(errorBody(request, err.code, err.message, err.status));
}

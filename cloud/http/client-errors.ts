import { randomUUID } from "node:crypto";
import { type ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { ConnectionError, FastifyBaseLogger } from "fastify";
import type { ErrorBody } from "../../shared/api/common.ts";
import { ERROR_STATUS, type ErrorCode } from "../../shared/api/errors.ts";

/** Parser errors with a status of their own; any other means the request is not valid HTTP (400). */
const PARSER_ERRORS: Record<string, { code: ErrorCode; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: {
    code: "ERRORS.REQUEST_TIMEOUT",
    message: "The request was not received in time",
  },
  HPE_HEADER_OVERFLOW: {
    code: "ERRORS.HEADERS_TOO_LARGE",
    message: "The request's header fields are too large (16 KiB at most)",
  },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: {
    code: "ERRORS.PAYLOAD_TOO_LARGE",
    message: "The request's chunk extensions are too large",
  },
};
const MALFORMED = { code: "ERRORS.BAD_REQUEST", message: "The request is not valid HTTP" } as const;

/**
 * Answers what Node's HTTP server rejects before Fastify sees a request (a malformed request line or
 * header, header fields too large, a request not received in time) in the standard error body. There
 * is no request object, so the response is written to the socket, which is then closed.
 */
export function createClientErrorHandler(log: FastifyBaseLogger) {
  return (err: ConnectionError, socket: Socket): void => {
    // A reset connection has no one left to answer.
    if (err.code === "ECONNRESET" || socket.destroyed) return;
    const { code, message } = PARSER_ERRORS[err.code] ?? MALFORMED;
    const status = ERROR_STATUS[code];
    const correlationId = randomUUID();
    log.info({ correlation_id: correlationId, code: err.code, status }, "request rejected on its connection");
    // Never write into a response that has already started on this socket (Node's own rule).
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const body: ErrorBody = {
      error_message: message,
      status_code: status,
      correlation_id: correlationId,
      error_code: code,
    };
    const json = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        "content-type: application/json; charset=utf-8\r\n" +
        `content-length: ${Buffer.byteLength(json)}\r\n` +
        `x-correlation-id: ${correlationId}\r\n` +
        "connection: close\r\n\r\n" +
        json,
      () => socket.destroy(),
    );
  };
}

import type { FastifyInstance } from "fastify";

/**
 * One access-log line per request, written when the response has gone out (Fastify's own pair of
 * "incoming request" / "request completed" lines is switched off in app.ts): method, URL (already
 * redacted by rewriteUrl, so no token in a query string reaches the log), status and time taken. The
 * request's logger adds `correlation_id`.
 */
export function installRequestLog(app: FastifyInstance): void {
  app.addHook("onResponse", (request, reply, done) => {
    request.log.info(
      {
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      "request",
    );
    done();
  });
}

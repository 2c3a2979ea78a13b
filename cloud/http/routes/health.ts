import type { FastifyInstance } from "fastify";

/** Liveness says the process answers; readiness says it can do its work (store and broker link). */
export function registerHealthRoutes(app: FastifyInstance, isReady: () => Promise<boolean>) {
  const hidden = { hide: true };
  app.get("/livez", { config: { public: true }, schema: hidden }, () => ({ status: "ok" }));
  const ready = async (_req: unknown, reply: import("fastify").FastifyReply) => {
    const ok = await isReady().catch(() => false);
    return reply.code(ok ? 200 : 503).send({ status: ok ? "ready" : "not ready" });
  };
  app.get("/readyz", { config: { public: true }, schema: hidden }, ready);
  app.get("/healthz", { config: { public: true }, schema: hidden }, ready);
}

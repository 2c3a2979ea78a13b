import helmet from "@fastify/helmet";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import { tileOrigin } from "../../shared/domain/map-tiles.ts";
import type { ConsoleAssets } from "./console-assets.ts";

/** The page every console address serves: the views are drawn by the script, after sign-in. */
function shell(a: ConsoleAssets): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Operator console</title>
<link rel="stylesheet" href="/console/assets/${a.style.name}">
</head>
<body>
<div id="console"></div>
<script type="module" src="/console/assets/${a.script.name}"></script>
</body>
</html>
`;
}

/**
 * The operator console's pages at /console/: one HTML shell for every address below it (deep links), and its
 * hashed script and style, kept a year (a new build has new names). Only what the cloud serves may run or
 * load (no inline script), but for the overview map's tiles from their one configured origin, and no other
 * site may frame the console.
 */
export async function registerConsolePages(
  app: FastifyInstance,
  assets: ConsoleAssets,
  o: { mapTiles?: string } = {},
): Promise<void> {
  // The overview's map tiles are the one thing loaded from elsewhere, and only once configured.
  await app.register(consolePages, { assets, imgOrigins: o.mapTiles ? [tileOrigin(o.mapTiles)] : [] });
}

/** An encapsulated scope: its security headers apply to the console's addresses only. */
const consolePages: FastifyPluginAsync<{ assets: ConsoleAssets; imgOrigins: string[] }> = async (
  scope,
  { assets, imgOrigins },
) => {
  await scope.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", "data:", ...imgOrigins],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
        frameAncestors: ["'none'"],
      },
    },
    referrerPolicy: { policy: "no-referrer" },
  });
  const page = shell(assets);
  const config = { public: true };
  const servePage = { config, schema: { hide: true } };
  scope.get("/console", servePage, (_req, reply) =>
    reply.type("text/html; charset=utf-8").header("cache-control", "no-store").send(page),
  );
  scope.get("/console/assets/:name", servePage, (req, reply) => {
    const asset = assets.byName.get((req.params as { name: string }).name);
    if (!asset) return reply.code(404).type("text/plain").send("no such asset");
    return reply
      .type(asset.type)
      .header("cache-control", "public, max-age=31536000, immutable")
      .send(asset.body);
  });
  scope.get("/console/*", servePage, (req, reply) => {
    // Addresses under /console/api/ are the console's API, not pages: unknown ones are 404s, not the shell.
    if (req.url.startsWith("/console/api/")) return reply.callNotFound();
    return reply.type("text/html; charset=utf-8").header("cache-control", "no-store").send(page);
  });
};

import fastifySwagger from "@fastify/swagger";
import fastifySwaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { jsonSchemaTransform, jsonSchemaTransformObject } from "fastify-type-provider-zod";
import { ERROR_CODES } from "../../shared/api/errors.ts";
import { webhooksOpenApi } from "../webhooks/webhook-openapi.ts";

/** The OpenAPI document of the public API, drawn from the routes' zod schemas, and its pages at /docs. */
export async function registerApiDocs(app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Parking Device, Access and Session Service",
        version: "1.0.0",
        description: `Error codes: ${ERROR_CODES.join(", ")}. Every error uses the standard error body.`,
      },
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
          clientCredentials: {
            type: "oauth2",
            flows: { clientCredentials: { tokenUrl: "/oauth2/token", scopes: {} } },
          },
        },
      },
      security: [{ bearer: [] }],
      // What the service POSTs to operators (OpenAPI 3.1 `webhooks`; cloud/webhooks/).
      webhooks: webhooksOpenApi(),
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  // The interactive docs are public: integrators read them before they have credentials.
  app.addHook("onRoute", (route) => {
    if (route.url.startsWith("/docs")) route.config = { ...(route.config ?? {}), public: true };
  });
  await app.register(fastifySwaggerUi, { routePrefix: "/docs", uiConfig: { tryItOutEnabled: true } });
}

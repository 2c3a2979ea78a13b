import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import {
  RefreshRequest,
  RefreshResponse,
  SignInRequest,
  SignInResponse,
  SignUpRequest,
} from "../../../shared/api/external-users.ts";
import { parseRefresh, parseSignIn, parseSignUp } from "../../users/auth-requests.ts";
import type { UserService } from "../../users/user-service.ts";
import { ANY_ROUTE_ERRORS, BODY_ERRORS } from "../error-responses.ts";

const PREFIX = "/external-users-auth/v1";

const errors = { ...ANY_ROUTE_ERRORS, ...BODY_ERRORS };
/** Sign-up and sign-in call the operator's server: rate-limited, and its answer may be late or a failure. */
const callbackErrors = { ...errors, 429: ErrorBody, 504: ErrorBody };

/**
 * The external-user authentication routes (spec: External-user authentication): public, no bearer token.
 * The handlers read the bodies themselves, so each bad field answers the spec's own error code.
 */
export function registerExternalUserRoutes(app: FastifyInstance, users: UserService) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const ownValidation = { validatorCompiler: () => () => true } as const;
  app.addHook("onClose", () => users.close());

  r.post(`${PREFIX}/sign-up`, {
    config: { public: true },
    ...ownValidation,
    schema: {
      tags: ["external users"],
      summary: "Sign a user up",
      description:
        "Calls the operator's sign-up verification endpoint (signed, Standard Webhooks) with the user_id and " +
        "its service_user_id; the user exists once the endpoint accepts (below 400). Repeating it is safe: " +
        "the service_user_id stays the same and the callback is sent again. 400 ERRORS.MISSING_OPERATOR_ID, " +
        "MISSING_USER_ID, INVALID_OPERATOR_ID, FAILED_TO_SIGN_UP, OPERATOR_REJECTION (the endpoint answered 4xx); " +
        "500 ERRORS.OPERATOR_ERROR (5xx or unreachable); 504 ERRORS.SERVICE_TIMED_OUT (no answer within 5 s); " +
        "429 ERRORS.RATE_LIMITED with Retry-After (sign-ups: 60 a minute per operator, 30 per client address).",
      security: [],
      body: SignUpRequest,
      response: { 204: z.null().describe("Signed up"), ...callbackErrors },
    },
    handler: async (request, reply) => {
      await users.signUp(parseSignUp(request.body), request.ip);
      return reply.code(204).send(null);
    },
  });

  r.post(`${PREFIX}/sign-in`, {
    config: { public: true },
    ...ownValidation,
    schema: {
      tags: ["external users"],
      summary: "Sign a user in",
      description:
        "Calls the operator's sign-in verification endpoint (signed, Standard Webhooks) with the user's user_id " +
        "and the challenge_token; when it answers with the same service_user_id, returns an access token " +
        "(1 hour) and a refresh token. 400 ERRORS.INVALID_OPERATOR_ID, INVALID_BIKEEP_USER_ID, " +
        "INVALID_CHALLENGE_TOKEN, FAILED_TO_SIGN_IN (one answer for an unknown user and a refused verification); " +
        "500 ERRORS.OPERATOR_ERROR (5xx or unreachable); 504 ERRORS.SERVICE_TIMED_OUT; 429 ERRORS.RATE_LIMITED " +
        "with Retry-After (sign-ins: 120 a minute per operator, 60 per client address).",
      security: [],
      body: SignInRequest,
      response: { 200: SignInResponse, ...callbackErrors },
    },
    handler: async (request, reply) => {
      const result = await users.signIn(parseSignIn(request.body), request.ip);
      reply.header("cache-control", "no-store").header("pragma", "no-cache");
      return result;
    },
  });

  r.post(`${PREFIX}/refresh`, {
    config: { public: true },
    ...ownValidation,
    schema: {
      tags: ["external users"],
      summary: "Get a new access token with a refresh token",
      description:
        "Returns only a new access token; the refresh token stays valid. 400 ERRORS.INVALID_REFRESH_TOKEN " +
        "(empty or too short), ERRORS.AUTHENTICATION_FAILED (expired, revoked, or another user's).",
      security: [],
      body: RefreshRequest,
      response: { 200: RefreshResponse, ...errors },
    },
    handler: async (request, reply) => {
      const result = await users.refresh(parseRefresh(request.body));
      reply.header("cache-control", "no-store").header("pragma", "no-cache");
      return result;
    },
  });
}

import type { RouteOptions } from "fastify";

type LifecycleHook = "onRequest" | "preValidation" | "preHandler" | "onSend";
/** One hook of kind K, as a route's options take it (they take one or a list). */
type HookOf<K extends LifecycleHook> = Extract<NonNullable<RouteOptions[K]>, readonly unknown[]>[number];

/**
 * Adds `hook` to one route's own `name` hooks, after those it declares, from an `onRoute` hook: what only
 * some routes need costs the others nothing (an application-wide hook runs, and an async one allocates,
 * on every request). Fastify runs the application's hooks of a kind before a route's own.
 */
export function addRouteHook<K extends LifecycleHook>(route: RouteOptions, name: K, hook: HookOf<K>): void {
  const given: unknown = route[name];
  const list = given === undefined ? [] : Array.isArray(given) ? given : [given];
  (route as unknown as Record<string, unknown>)[name] = [...list, hook];
}

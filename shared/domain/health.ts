/**
 * Device health derived from the last heartbeat and `now` (spec: Device health). Derived at read time
 * rather than stored, so every cloud replica gives the same answer without a sweeper.
 */
export const HEALTH_VALUES = ["HEALTHY", "UNHEALTHY", "DEAD", "LONG_DEAD"] as const;
export type Health = (typeof HEALTH_VALUES)[number];

export const UNHEALTHY_AFTER_MS = 15_000;
export const DEAD_AFTER_MS = 30_000;
export const LONG_DEAD_AFTER_MS = 2 * 60 * 60 * 1000;

export type HealthInput = {
  /** When the device was last heard of (RFC 3339), or null if never. */
  last_seen_at: string | null;
  /** When its gateway was reported offline (Last Will or status), if that is newer than last_seen_at. */
  offline_at: string | null;
};

export type HealthView = { health: Health; dead_since: string | null };

/** When the device was last seen and when it is (or will be) dead, as epoch ms; null if never heard of. */
function instants(h: HealthInput): { seen: number; deadSince: number } | null {
  if (h.last_seen_at === null && h.offline_at === null) return null;
  const seen = h.last_seen_at ? Date.parse(h.last_seen_at) : Number.NEGATIVE_INFINITY;
  const offline = h.offline_at ? Date.parse(h.offline_at) : Number.NEGATIVE_INFINITY;
  // An explicit offline report newer than the last heartbeat makes the device dead at once; a late
  // report never moves dead_since past the moment silence alone would have made it dead.
  const silentDeath = seen + DEAD_AFTER_MS; // -Infinity when never seen
  const deadSince =
    offline > seen ? (h.last_seen_at ? Math.min(offline, silentDeath) : offline) : silentDeath;
  return { seen, deadSince };
}

export function deriveHealth(h: HealthInput, now: Date): HealthView | null {
  const at = instants(h);
  if (!at) return null;
  const { seen, deadSince } = at;
  const t = now.getTime();
  if (deadSince <= t) {
    return {
      health: t - deadSince >= LONG_DEAD_AFTER_MS ? "LONG_DEAD" : "DEAD",
      dead_since: new Date(deadSince).toISOString(),
    };
  }
  return { health: t - seen >= UNHEALTHY_AFTER_MS ? "UNHEALTHY" : "HEALTHY", dead_since: null };
}

/**
 * The first instant after `now` (epoch ms) at which `deriveHealth` may answer differently, or Infinity:
 * health is constant until then, so a view derived from it stays true until that instant.
 */
export function nextHealthChange(h: HealthInput, now: Date): number {
  const at = instants(h);
  if (!at) return Number.POSITIVE_INFINITY;
  // Every threshold deriveHealth compares against; the next one still ahead is where it may change.
  const t = now.getTime();
  let next = Number.POSITIVE_INFINITY;
  for (const x of [at.seen + UNHEALTHY_AFTER_MS, at.deadSince, at.deadSince + LONG_DEAD_AFTER_MS])
    if (x > t && x < next) next = x;
  return next;
}

/** A device counts as online while it is HEALTHY or UNHEALTHY (late but not yet dead). */
export function isOnline(view: HealthView | null): boolean {
  return view !== null && (view.health === "HEALTHY" || view.health === "UNHEALTHY");
}

/** The deprecated `heartbeat_health` does not distinguish LONG_DEAD. */
export function legacyHealth(view: HealthView | null): "HEALTHY" | "UNHEALTHY" | "DEAD" | null {
  if (!view) return null;
  return view.health === "LONG_DEAD" ? "DEAD" : view.health;
}

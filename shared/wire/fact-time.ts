/**
 * When a gateway's fact happened, on the cloud's clock (docs/decisions/clock.md): the gateway's estimate of
 * the cloud's time when it observed it (`observed_cloud_at`), else its own wall clock (older gateways, or one
 * that had not heard the cloud yet). Never later than the cloud's now: a fact cannot be reported before it
 * happened, so a wall clock running ahead cannot date it in the future. The gateway's own `observed_at` is
 * kept as data wherever it is stored.
 */
export function factTime(msg: { observed_at: string; observed_cloud_at?: string }, now: Date): string {
  const at = Date.parse(msg.observed_cloud_at ?? msg.observed_at);
  return new Date(Math.min(at, now.getTime())).toISOString();
}

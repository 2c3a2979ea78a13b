import type { WebhookType } from "../../shared/api/webhook.ts";

const MINUTE = 60_000;

/**
 * Spec (Outbound notifications, rule 2): aggregated delivery waits about 1 minute for alarms and about 5
 * minutes for connection and status events. A window starts at the first event buffered for an operator
 * and type, so an event waits at most its window (plus one delivery tick). `connection_confirmed` reports
 * an outage already 2 hours old: it shares the connection window.
 */
export const AGGREGATION_WINDOW_MS: Record<WebhookType, number> = {
  alarm: 1 * MINUTE,
  connection: 5 * MINUTE,
  connection_confirmed: 5 * MINUTE,
  status: 5 * MINUTE,
};

/** The events buffered for one operator and type, by the time the oldest was buffered. */
export type BufferedGroup = { operatorId: string; type: WebhookType; firstAt: string };

/** The groups whose window has closed at `now`, oldest first: each becomes one message per endpoint. */
export function closedWindows(groups: readonly BufferedGroup[], now: Date): BufferedGroup[] {
  return groups
    .filter((g) => Date.parse(g.firstAt) + AGGREGATION_WINDOW_MS[g.type] <= now.getTime())
    .sort((a, b) => a.firstAt.localeCompare(b.firstAt));
}

import { useLiveStatus, useSecondTick } from "./live.ts";

const TEXT = { connecting: "Connecting…", live: "Live", reconnecting: "Reconnecting…" } as const;

/** How long ago, in words short enough for the header. */
function age(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return s < 60 ? `${s}s ago` : `${Math.floor(s / 60)} min ago`;
}

/**
 * The header's word on the live stream: "Live · updated 4s ago" (the last change or refresh, ticking), or
 * "Reconnecting…" while it is down. Only the state is a status region, so a screen reader announces the
 * stream going down and coming back, not every second of the age.
 */
export function LiveStatusLine() {
  const s = useLiveStatus();
  useSecondTick();
  return (
    <span class={`live-status live-${s.state}`}>
      <span role="status">{TEXT[s.state]}</span>
      {s.state === "live" && s.updatedAt !== null && <span> · updated {age(Date.now() - s.updatedAt)}</span>}
    </span>
  );
}

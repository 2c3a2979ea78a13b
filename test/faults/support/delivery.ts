import { gatewayOutboxRepository } from "../../../cloud/gateway-link/gateway-outbox-repository.ts";
import { hardwareReportRepository } from "../../../cloud/gateway-link/hardware-report-repository.ts";
import type { ManifestInput } from "../../../cloud/manifest/manifest-schema.ts";
import { eventually } from "../../support/eventually.ts";
import type { DaemonSite } from "./daemon.ts";

const GW = "gw-a1";

/**
 * What became of the daemon's outbox at the cloud: every seq it gave out, the seqs the cloud applied (once
 * each, by its primary key), and the seqs of the rows the events made (a second row would be a duplicate
 * the deduplication let through).
 */
export async function deliveryOf(s: DaemonSite) {
  const outboxId = s.daemon.outboxId();
  const mine = <T extends { outbox_id: string; seq: number }>(rows: T[]) =>
    rows.filter((r) => r.outbox_id === outboxId).map((r) => r.seq);
  const access = await s.site.db
    .selectFrom("access_events")
    .select(["outbox_id", "seq"])
    .where("gateway_id", "=", GW)
    .execute();
  return {
    sent: s.daemon.lastSeq(),
    applied: mine(await gatewayOutboxRepository(s.site.db).appliedOf(GW)),
    hardwareEvents: mine(await hardwareReportRepository(s.site.db).eventsOf(GW)),
    accessEvents: mine(access),
  };
}

/** Seqs that appear more than once. */
export const duplicates = (seqs: number[]) => seqs.filter((q, i) => seqs.indexOf(q) !== i);

/** 1..n: every seq the outbox gave out. */
export const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** Resolves once the daemon's outbox is empty and the cloud applied every seq it gave out. */
export function allDelivered(s: DaemonSite, timeoutMs = 60_000) {
  return eventually(
    async () => {
      const d = await deliveryOf(s);
      if (s.daemon.outbox().length > 0 || d.applied.length < d.sent)
        throw new Error(`${d.sent - d.applied.length} of ${d.sent} messages not yet applied`);
      return d;
    },
    timeoutMs,
    250,
  );
}

/** L1 with RFID parking, a whitelist holding `cards`, and (given) a webhook endpoint taking each event as sent. */
export function accessSite(o: { whitelist: string; cards: string[]; hook?: { id: string; url: string } }) {
  return (m: ManifestInput) => {
    const op = m.operators[0];
    const l1 = op?.locations?.[0];
    if (!op || !l1) throw new Error("the fixture's first location is L1");
    l1.attrs = { ...l1.attrs, rfid_parking: true };
    op.whitelists = [
      {
        id: o.whitelist,
        name: "Members",
        targets: [{ location: "L1" }],
        entities: o.cards.map((id) => ({ id })),
      },
    ];
    if (o.hook)
      op.webhooks = [
        {
          id: o.hook.id,
          url: o.hook.url,
          allow_private: true,
          secret: `whsec_${Buffer.alloc(32, 7).toString("base64")}`,
          delivery: "direct",
        },
      ];
  };
}

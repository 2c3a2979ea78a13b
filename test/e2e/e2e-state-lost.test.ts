import { rmSync } from "node:fs";
import { PostgresAdapter } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { gatewayOutboxRepository } from "../../cloud/gateway-link/gateway-outbox-repository.ts";
import { hardwareReportRepository } from "../../cloud/gateway-link/hardware-report-repository.ts";
import { eventually } from "../support/eventually.ts";
import { fx } from "../support/fixture-site.ts";
import { type Site, startSite } from "../support/site-harness.ts";

const id = (alias: string) => fx.device("L1", alias);

/** The store the harness opens is chosen by TEST_DB when it starts; this file runs on both. */
async function startSiteOn(store: "sqlite" | "postgres"): Promise<Site> {
  const before = process.env.TEST_DB;
  process.env.TEST_DB = store;
  try {
    return await startSite({ broker: "aedes", serial: "memory" });
  } finally {
    process.env.TEST_DB = before;
  }
}

/** Posts a command and waits for its end; the ceiling only bounds a failure. */
async function run(site: Site, alias: string, command: "lock" | "unlock"): Promise<string> {
  const post = await site.api("POST", `/device/v1/devices/${id(alias)}/commands`, { command });
  expect(post.statusCode, post.body).toBe(200);
  const state = await eventually(async () => {
    const s = (await site.api("GET", `/device/v1/commands/${post.json().id}`)).json().state;
    expect(["SUCCESS", "ERROR"]).toContain(s.value);
    return s;
  }, 30_000);
  return `${state.value}${state.reason ? `: ${state.reason}` : ""}`;
}

const lockState = async (site: Site, alias: string): Promise<string> =>
  (await site.api("GET", `/device/v1/devices/${id(alias)}`)).json().lock_state;

/** The outbox identities of gw-a1's door_opened events the cloud has recorded. */
async function doorsOpened(site: Site): Promise<string[]> {
  const events = await hardwareReportRepository(site.db).eventsOf("gw-a1");
  return events.filter((e) => e.event === "door_opened").map((e) => e.outbox_id);
}

/** What the cloud has applied from gw-a1, per outbox identity. */
async function appliedByOutbox(site: Site): Promise<Map<string, number[]>> {
  const rows = (await gatewayOutboxRepository(site.db).appliedOf("gw-a1")).sort((a, b) => a.seq - b.seq);
  const by = new Map<string, number[]>();
  for (const r of rows) by.set(r.outbox_id, [...(by.get(r.outbox_id) ?? []), Number(r.seq)]);
  return by;
}

for (const store of ["sqlite", "postgres"] as const)
  describe(`a gateway whose state directory was lost (${store})`, () => {
    let site: Site | null = null;
    afterEach(async () => {
      await site?.stop();
      site = null;
    });

    it("is heard again: its seqs start over at 1 under a new outbox identity, and commands complete", {
      timeout: 120_000,
    }, async () => {
      const s = await startSiteOn(store);
      site = s;
      expect(s.db.getExecutor().adapter instanceof PostgresAdapter).toBe(store === "postgres");
      await s.settled();
      // Enough reports that the first store's seqs reach well past what the next one uses for its start-up.
      for (const alias of ["1", "2", "3", "4"]) expect(await run(s, alias, "lock")).toBe("SUCCESS");
      s.sim.board("bus0", 1).event(6, "door_opened");
      await eventually(async () => expect(await doorsOpened(s)).toHaveLength(1));
      await s.settled();
      const first = await appliedByOutbox(s);
      expect([...first.keys()]).toHaveLength(1);
      const lostId = [...first.keys()][0] as string;
      expect(lostId).not.toBe("");

      // A replaced SD card: the daemon comes back with an empty state directory.
      await s.stopGateway();
      rmSync(s.gatewayConfig.state_dir, { recursive: true, force: true });
      await s.startGateway();
      // Its device map comes again from the broker (retained), then its sensors are read and reported.
      await eventually(async () => expect((await s.gatewayDevice("5"))?.read_at).toBeTruthy());
      await s.settled();

      // A command completes, though every seq its progress takes was used by the lost store.
      expect(await run(s, "5", "lock")).toBe("SUCCESS");
      expect(await lockState(s, "5")).toBe("LOCKED");
      // The device state follows the hardware: a latch turned by hand, a door opened.
      s.sim.board("bus0", 1).turnLatch(4, "unlocked");
      await eventually(async () => expect(await lockState(s, "4")).toBe("UNLOCKED"));
      s.sim.board("bus0", 1).event(6, "door_opened");
      await eventually(async () => expect(await doorsOpened(s)).toHaveLength(2));
      await s.settled();

      const after = await appliedByOutbox(s);
      const remade = [...after.entries()].filter(([o]) => o !== lostId);
      expect(remade).toHaveLength(1);
      const [remadeId, remadeSeqs] = remade[0] as [string, number[]];
      const lostSeqs = after.get(lostId) ?? [];
      expect(remadeId).not.toBe("");
      expect(remadeSeqs[0]).toBe(1);
      // Everything the new store sent overlaps the lost store's numbers: under (gateway, seq) alone, all of
      // it would have been acknowledged as a duplicate and dropped.
      expect(Math.max(...remadeSeqs)).toBeLessThanOrEqual(Math.max(...lostSeqs));
      expect(lostSeqs.slice(0, first.get(lostId)?.length)).toEqual(first.get(lostId));
      // The site event too, though the lost store's door_opened has the same seq or one near it.
      expect(await doorsOpened(s)).toEqual([lostId, remadeId]);
    });
  });

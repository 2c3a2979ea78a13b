import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { gatewayRepository } from "../../cloud/gateway-link/gateway-repository.ts";
import { hardwareReportRepository } from "../../cloud/gateway-link/hardware-report-repository.ts";
import { eventually } from "../support/eventually.ts";
import { startPrivateMosquitto } from "../support/private-mosquitto.ts";
import { type Site, startSite } from "../support/site-harness.ts";

const root = path.resolve(import.meta.dirname, "../..");

function spawnGateway(configFile: string): ChildProcess {
  return spawn(
    process.execPath,
    ["--import", "tsx", path.join(root, "gateway/main.ts"), "--config", configFile],
    {
      cwd: root,
      stdio: ["ignore", process.env.GW_LOG ? "inherit" : "ignore", "inherit"],
    },
  );
}

/** The daemon's outbox rows, read from its SQLite file while it runs (WAL allows a reader beside it). */
function outboxRows(stateDir: string): { seq: number; type: string; source: string | undefined }[] {
  const db = new Database(path.join(stateDir, "gateway.db"), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare("SELECT seq, type, body FROM outbox ORDER BY seq").all() as {
      seq: number;
      type: string;
      body: string;
    }[];
    return rows.map((r) => ({
      seq: r.seq,
      type: r.type,
      source: (JSON.parse(r.body) as { source?: string }).source,
    }));
  } finally {
    db.close();
  }
}

for (const broker of ["aedes", "mosquitto"] as const)
  describe(`the gateway killed with SIGKILL while events sit in its outbox (${broker})`, () => {
    let site: Site | null = null;
    let child: ChildProcess | null = null;
    let mosquitto: Awaited<ReturnType<typeof startPrivateMosquitto>> | null = null;
    afterEach(async () => {
      if (child && child.exitCode === null) {
        const c = child;
        await new Promise<void>((r) => {
          c.once("exit", () => r());
          c.kill("SIGKILL");
        });
      }
      await site?.stop();
      await mosquitto?.stop();
      site = null;
      mosquitto = null;
    });

    it("loses none of them and duplicates none after the restart", { timeout: 90_000 }, async () => {
      // The broker is cut below: the embedded one, or a Mosquitto of the test's own (never the shared one).
      mosquitto = broker === "mosquitto" ? await startPrivateMosquitto() : null;
      site = await startSite({ broker, serial: "pty", ...(mosquitto ? { brokerUrl: mosquitto.url } : {}) });
      const cut = () => (mosquitto ? mosquitto.kill() : (site as Site).brokerDown());
      const heal = () => (mosquitto ? mosquitto.restart() : (site as Site).brokerUp());
      await site.stopGateway(); // the daemon runs as a process of its own below
      const stateDir = path.join(site.dir, "gw-child");
      const configFile = path.join(site.dir, "gateway.json");
      writeFileSync(
        configFile,
        JSON.stringify({
          ...site.gatewayConfig,
          state_dir: stateDir,
          log_level: process.env.GW_LOG ?? "warn",
        }),
      );
      const s = site;
      const board = site.sim.board("bus0", 1);

      child = spawnGateway(configFile);
      // Ready once a board event makes it all the way: serial line open, broker connected, outbox pumping.
      await eventually(
        async () => {
          board.event(4, "door_opened");
          const reports = hardwareReportRepository(s.db);
          const canary = [];
          for (const gw of await gatewayRepository(s.db).allIds())
            canary.push(...(await reports.eventsOf(gw)).filter((e) => e.source === "bus0/1/4"));
          expect(canary.length).toBeGreaterThan(0);
        },
        40_000,
        500,
      );

      // Cut the broker: everything the hardware reports now waits in the outbox.
      await cut();
      for (let i = 0; i < 20; i++) board.event(3, i % 2 === 0 ? "door_opened" : "door_closed");
      await eventually(
        () =>
          expect(outboxRows(stateDir).filter((r) => r.source === "bus0/1/3").length).toBeGreaterThanOrEqual(
            20,
          ),
        10_000,
      );

      const c = child;
      await new Promise<void>((r) => {
        c.once("exit", () => r());
        c.kill("SIGKILL");
      });
      const kept = outboxRows(stateDir).filter((r) => r.source === "bus0/1/3");
      expect(kept).toHaveLength(20);
      const check = new Database(path.join(stateDir, "gateway.db"), { readonly: true });
      expect(check.pragma("quick_check", { simple: true })).toBe("ok");
      check.close();

      await heal();
      child = spawnGateway(configFile);
      await eventually(async () => {
        const applied = (await hardwareReportRepository(s.db).eventsOf("gw-a1"))
          .filter((e) => e.source === "bus0/1/3")
          .sort((a, b) => a.seq - b.seq);
        expect(applied.map((r) => r.seq)).toEqual(kept.map((r) => r.seq));
      }, 40_000);
      await eventually(() => expect(outboxRows(stateDir)).toHaveLength(0), 20_000);
    });
  });

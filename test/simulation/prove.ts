import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { SCRATCH } from "./scratch.ts";

/**
 * `npm run sim:prove -- [--seeds N] [--from S] [--only TEXT]`: shows that exploration finds real bugs. For each safety
 * check below, and each bug found and fixed, a scratch checkout of HEAD has that one check removed (the bug
 * put back), and the explorer runs seeds from S (1) until one fails (or N ran). Prints, per check, the seed:
 * a bug's seed is its regression seed (explore.test.ts).
 */
type Mutation = { name: string; file: string; edits: { find: string; replace: string }[] };

/** The safety checks the issue names, then each bug the simulation found, put back. */
const MUTATIONS: Mutation[] = [
  {
    name: "the gateway's deadline check",
    file: "gateway/features/execute-command.ts",
    edits: [
      {
        find: "    return now >= Date.parse(req.expires_at);\n",
        replace: "    return false && now >= Date.parse(req.expires_at);\n",
      },
    ],
  },
  {
    name: "the cloud's dedupe of outbox messages by sequence number",
    file: "cloud/gateway-link/gateway-outbox-repository.ts",
    edits: [{ find: "return res.numInsertedOrUpdatedRows !== 0n;", replace: "return true;" }],
  },
  {
    name: "the ownership rule (a locker in use by someone else)",
    file: "shared/domain/device-use.ts",
    edits: [
      {
        find: 'if (holding.inUse && holding.occupant !== actor.id) return refuse("held_by_another");',
        replace: "",
      },
    ],
  },
  {
    name: "bug: a stop over a link passing no bytes waits for its offline PUBACK forever",
    file: "gateway/adapters/mqtt/broker-mqtt.ts",
    edits: [{ find: "const STOP_GRACE_MS = 2_000;", replace: "const STOP_GRACE_MS = 2_000_000_000;" }],
  },
  {
    name: "bug: the outbox's resends wait on the wall clock",
    file: "gateway/features/outbox-pump.ts",
    edits: [
      {
        find: "sentAt.set(msg.seq, deps.monotonic.nowMs());",
        replace: "sentAt.set(msg.seq, deps.clock.now().getTime());",
      },
      { find: "const now = deps.monotonic.nowMs();", replace: "const now = deps.clock.now().getTime();" },
    ],
  },
  {
    name: "bug: the key sweep judges expiry on the wall clock",
    file: "gateway/features/key-sync.ts",
    edits: [
      {
        find: "const now = deps.cloudTime ? deps.cloudTime.cloudNow() : deps.clock.now();",
        replace: "const now = deps.clock.now();",
      },
    ],
  },
  {
    name: "bug: a repeated command's outcome carries the latch read when it ran",
    file: "gateway/features/execute-command.ts",
    edits: [
      {
        find: "report(req, seen.state, seen.reason);",
        replace: "report(req, seen.state, seen.reason, seen.lock_state);",
      },
    ],
  },
  {
    name: "bug: the session begins on MQTT.js's connect, after kept commands were handed on",
    file: "gateway/adapters/mqtt/broker-mqtt.ts",
    edits: [
      { find: 'if (packet.cmd === "connack") this.emit("session");', replace: "" },
      {
        find: "      this.connectedSince = this.options.clock.now().toISOString();\n",
        replace:
          '      this.connectedSince = this.options.clock.now().toISOString();\n      this.emit("session");\n',
      },
    ],
  },
  {
    name: "bug: a daemon started on a full disk fails when the last stop interrupted a command",
    file: "gateway/features/recover-interrupted.ts",
    edits: [{ find: "      if (!isStoreFull(err)) throw err;\n", replace: "      throw err;\n" }],
  },
  {
    name: "bug: a command's deadline is not asked again when its turn on the bus comes",
    file: "gateway/features/execute-command.ts",
    edits: [
      {
        find: "await actuator.run(device, action, { stillWanted: () => !expired(req) });",
        replace: "await actuator.run(device, action);",
      },
    ],
  },
  {
    name: "bug: a command refused for a full disk runs when delivered again",
    file: "gateway/features/execute-command.ts",
    edits: [{ find: "if (deps.storeSpace?.refusing(req.command_id)) return;", replace: "" }],
  },
  {
    name: "bug: a session's events are dated when the report arrives",
    file: "cloud/sessions/session-recorder.ts",
    edits: [
      {
        find: "const sessions = sessionRepository(tx);\n  const ts = laterOf(happenedAt, command.created_at);",
        replace: "const sessions = sessionRepository(tx);\n  const ts = now.toISOString();",
      },
      {
        find: 'await closeSession(tx, s, now, s.status === "active" ? "hardware" : "booking-over", { at: happenedAt });',
        replace: 'await closeSession(tx, s, now, s.status === "active" ? "hardware" : "booking-over");',
      },
    ],
  },
  {
    name: "bug: a latch found open while a command holds the device ends no session",
    file: "cloud/devices/advance-device.ts",
    edits: [
      {
        find: "else if (latchOpened) await sessionsFollowLatch(tx, written, step.now, step.happenedAt);",
        replace: "",
      },
    ],
  },
  {
    name: "bug: a rider's lock of a locker a card parked runs",
    file: "gateway/features/execute-command.ts",
    edits: [
      {
        find: 'if (req.name === "lock" && deps.store.parkedCards.get(device.device_id) !== null) {',
        replace: "if (false) {",
      },
    ],
  },
  {
    name: "bug: facts observed before the gateway knew the cloud's time go up by its wall clock",
    file: "gateway/adapters/sqlite/outbox.ts",
    edits: [
      {
        find: "const cloudAt = m.observed_cloud_at || !ofThisBoot ? null : this.dating?.at(mono);",
        replace: "const cloudAt = null as Date | null;",
      },
    ],
  },
  {
    name: "bug: facts a killed daemon observed undated go up by its wall clock after the restart",
    file: "gateway/adapters/sqlite/outbox.ts",
    edits: [
      { find: "this.boot = dating?.monotonic.boot ?? randomUuid();", replace: "this.boot = randomUuid();" },
    ],
  },
  {
    name: "bug: a daemon started on a full disk fails when a booking has ended",
    file: "gateway/features/booking-expiry.ts",
    edits: [
      {
        find: "running = true;\n      schedule(trySweep() ? undefined : retryMs);",
        replace: "running = true;\n      sweep();\n      schedule();",
      },
    ],
  },
  {
    name: "bug: an unlock done after the cloud ended it (its deadline) ends no session",
    file: "cloud/gateway-link/command-progress.ts",
    edits: [{ find: 'if (msg.state === "SUCCESS") await onLateSuccess(tx, cmd, now, at);', replace: "" }],
  },
  {
    name: "bug: a lock continuing a booking cancelled meanwhile starts no session",
    file: "cloud/sessions/session-recorder.ts",
    edits: [{ find: 'if (s.status !== "ended") return;', replace: "return;" }],
  },
  {
    name: "bug: a lock refused at the edge for a card-parked locker leaves its rider the occupant",
    file: "cloud/devices/advance-device.ts",
    edits: [
      {
        find: '(state.value !== "LOCKED" || input.heldByAnother === true)',
        replace: '(state.value !== "LOCKED")',
      },
    ],
  },
  {
    name: "bug: a stopping daemon takes commands and closes the bus under them",
    file: "gateway/gateway.ts",
    edits: [
      { find: "      features.executor.close();\n", replace: "" },
      { find: "      await features.executor.settled();\n", replace: "" },
    ],
  },
  {
    name: "bug: a webhook whose receiver failed is given up at once",
    file: "cloud/webhooks/webhook-delivery.ts",
    edits: [
      {
        find: 'settlement = next.kind === "dead" ? { kind: "dead", error } : { kind: "retry", at: next.at, error };',
        replace:
          'settlement = next.kind === "dead" || true ? { kind: "dead", error } : { kind: "retry", at: next.at, error };',
      },
    ],
  },
  {
    name: "bug: a webhook's retry goes out under a new id",
    file: "cloud/webhooks/webhook-delivery.ts",
    edits: [
      {
        find: "const headers = signWebhook({ id: m.id, at, body: m.payload, secrets: m.secrets });",
        replace:
          "const headers = signWebhook({ id: m.id + (m.attempts > 0 ? String(m.attempts) : ''), at, body: m.payload, secrets: m.secrets });",
      },
    ],
  },
  {
    name: "bug: deadlines are judged on the lower bound of the cloud's time, low by a late message's transit",
    file: "gateway/features/execute-command.ts",
    edits: [
      {
        find: "deps.cloudTime.cloudLatestMs() ?? deps.cloudTime.cloudNowMs()",
        replace: "deps.cloudTime.cloudNowMs()",
      },
    ],
  },
  {
    name: "bug: a restarted gateway that heard nothing for 5 s takes the silence for an older cloud",
    file: "gateway/time/cloud-clock.ts",
    edits: [
      {
        find: "if (this.everFresh || this.unstampedThisSession) this.endSessionWait();",
        replace: "if (this.everFresh || this.unstampedThisSession || !this.bound) this.endSessionWait();",
      },
    ],
  },
  {
    name: "bug: a sensor reading the full store refused waits for the latch to move again",
    file: "gateway/gateway.ts",
    edits: [{ find: "const retry = () => sensors.retryUntold();", replace: "const retry = () => {};" }],
  },
  {
    name: "bug: an online the cloud did not answer is not said again",
    file: "gateway/adapters/mqtt/broker-mqtt.ts",
    edits: [
      {
        find: '          this.announceUntilAnswered(client, topic("status"));\n',
        replace: "",
      },
    ],
  },
  {
    name: "bug: a card parking applied after a later opening, overtaken by a lock since, opens a session",
    file: "cloud/key-sync/access-events.ts",
    edits: [{ find: "      (openedLater(device.sensor_marks, at) ||", replace: "      (false ||" }],
  },
  {
    name: "bug: an opening applied after a later lock's report ends no session",
    file: "cloud/devices/advance-device.ts",
    edits: [
      {
        find: "    else if (openedBefore && step.happenedAt) await sessionsOpenedAt(tx, written, step.now, step.happenedAt);\n",
        replace: "",
      },
    ],
  },
  {
    name: "bug: a gateway's messages after one the full store refused are applied before it",
    file: "cloud/gateway-link/gateway-messages.ts",
    edits: [{ find: "hold.waits(gatewayId, outbox, msg.seq)", replace: "false" }],
  },
  {
    name: "bug: a technician's action moves the latch before its record (on a full store, none)",
    file: "gateway/control/control-impl.ts",
    edits: [{ find: "const id = begin(alias, who, why, action);", replace: "const id = -1;" }],
  },
  {
    name: "bug: a reading the full store refused is not owed",
    file: "gateway/devices/sensor-readings.ts",
    edits: [
      {
        find: "      this.untold.set(device.device_id, { device, cause });\n      throw err;",
        replace: "      throw err;",
      },
    ],
  },
  {
    name: "bug: a tap and a command on one locker do not take turns",
    file: "gateway/features/handle-tap.ts",
    edits: [
      {
        find: "const turns = deps.turns ?? createDeviceTurns();",
        replace: "const turns = createDeviceTurns();",
      },
    ],
  },
  {
    name: "bug: a strike a killed daemon left released is never engaged",
    file: "gateway/adapters/hardware/gpio-doors.ts",
    edits: [{ find: "if (strike.read()) {", replace: "if (strike.read() && false) {" }],
  },
  {
    name: "bug: a door held open is measured on the wall clock",
    file: "gateway/features/door-watch.ts",
    edits: [
      { find: "const now = deps.monotonic.nowMs();", replace: "const now = deps.clock.now().getTime();" },
      {
        find: "const openSince = deps.sensors.openSince(device.device_id);",
        replace:
          "const readAt = deps.sensors.get(device.device_id).read_at;\n      const openSince = deps.sensors.openSince(device.device_id) === null || !readAt ? null : Date.parse(readAt);",
      },
    ],
  },
  {
    name: "bug: a door's contact on a full store throws into its GPIO watcher",
    file: "gateway/features/door-events.ts",
    edits: [
      {
        find: 'keepReport(deps.log, where, "hardware_event", () =>',
        replace:
          '((_l: unknown, _w: unknown, _r: unknown, write: () => unknown) => write())(deps.log, where, "hardware_event", () =>',
      },
    ],
  },
  {
    name: "bug: what the full store refused goes in after later writes",
    file: "gateway/gateway.ts",
    edits: [{ find: "hw.owed.flush = storeSpace.flush;", replace: "hw.owed.flush = () => {};" }],
  },
  {
    name: "bug: a reading's latch is told only after what it sets off succeeds",
    file: "gateway/devices/sensor-readings.ts",
    edits: [
      {
        find: "    if (told) this.told.set(device.device_id, { ...told, latch });\n    this.merge(device.device_id, reading);",
        replace:
          "    this.merge(device.device_id, reading);\n    if (told) this.told.set(device.device_id, { ...told, latch });",
      },
    ],
  },
];

const seedsArg = process.argv.indexOf("--seeds");
const budget = seedsArg > 0 ? Number(process.argv[seedsArg + 1]) : 50;
const root = execFileSync("git", ["rev-parse", "--show-toplevel"], { encoding: "utf8" }).trim();

const fromArg = process.argv.indexOf("--from");
const from = fromArg > 0 ? Number(process.argv[fromArg + 1]) : 1;
const onlyArg = process.argv.indexOf("--only");
const only = onlyArg > 0 ? String(process.argv[onlyArg + 1]) : "";

for (const m of MUTATIONS.filter((x) => x.name.includes(only))) {
  const dir = mkdtempSync(path.join(SCRATCH, "parking-prove-"));
  execFileSync("git", ["-C", root, "worktree", "add", "--detach", dir, "HEAD"], { stdio: "ignore" });
  try {
    symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"));
    const file = path.join(dir, m.file);
    let text = readFileSync(file, "utf8");
    for (const e of m.edits) {
      if (text.split(e.find).length !== 2) throw new Error(`${m.file}: "${e.find}" is not found once`);
      text = text.replace(e.find, e.replace);
    }
    writeFileSync(file, text);
    const run = spawnSync(
      "npx",
      [
        "tsx",
        "test/simulation/explore.ts",
        "--seeds",
        String(budget),
        "--from",
        String(from),
        "--stop-on-failure",
      ],
      { cwd: dir, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
    );
    const summary = /^(\d+) seeds, (\d+) failed.*$/m.exec(run.stdout);
    const failing = /^seed (\d+) failed/m.exec(run.stdout);
    const verdict = failing
      ? `found by seed ${failing[1]} after ${summary?.[1]} seeds`
      : `NOT found in ${summary?.[1] ?? "?"} seeds`;
    console.log(`${m.name} removed: ${verdict}`);
    if (failing)
      console.log(
        run.stdout
          .split("\n")
          .filter((l) => l.startsWith("  ") && !l.startsWith("    "))
          .join("\n"),
      );
  } finally {
    execFileSync("git", ["-C", root, "worktree", "remove", "--force", dir], { stdio: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  }
}

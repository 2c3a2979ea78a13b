import { createHash } from "node:crypto";
import { isStoreFull } from "../../gateway/features/store-full.ts";
import { installDiskFaults } from "../support/disk-full.ts";
import { createChaos } from "./chaos.ts";
import { installVirtualWorld, Prng, type VirtualClock } from "./determinism.ts";
import { createDoorTraffic } from "./doors.ts";
import { advance, countImmediates } from "./driver.ts";
import { checkInvariants, type Movement } from "./invariants.ts";
import { createKeyEdits } from "./key-edits.ts";
import { type LatchChange, watchLatch } from "./session-invariants.ts";
import { ADMIN, deviceAlias, deviceId, LOCKERS, SECRET, START } from "./sim-site.ts";
import { createTapLog } from "./tap-log.ts";
import { startWorld, type World } from "./world.ts";

export type RunOptions = {
  seed: number;
  /** Virtual time with workload and faults. */
  chaosMs?: number;
  /** Virtual time after the faults heal, before the end state is judged. */
  quietMs?: number;
};

export type RunResult = {
  seed: number;
  /** sha256 of the ordered trace: equal for two runs of one seed. */
  trace: string;
  failures: string[];
  /** The trace's last lines, for a failure's report. */
  tail: string[];
  virtualMs: number;
};

let immediatesCounted = false;

/** Waits for `p` while virtual time moves on in small steps (start-up waits on timers, e.g. a CONNACK). */
async function during<T>(clock: VirtualClock, p: Promise<T>, limitMs = 120_000): Promise<T> {
  let done = false;
  const out = p.finally(() => {
    done = true;
  });
  for (let t = 0; !done && t < limitMs; t += 10) await advance(clock, 10);
  if (!done) throw new Error(`still waiting after ${limitMs} ms of virtual time`);
  return out;
}

/**
 * One seed's run: a world of 1–3 gateways, a workload and faults drawn from the seed for `chaosMs`, then
 * the faults heal and the world runs quiet for `quietMs` before the invariants judge it.
 */
export async function runSeed(o: RunOptions): Promise<RunResult> {
  if (!immediatesCounted) {
    countImmediates();
    immediatesCounted = true;
  }
  // The workload's and faults' choices, and the system's own (ids, tokens, jitter), from two streams: how
  // many numbers the start-up draws depends on which modules load then, and must not shift the workload.
  const rng = new Prng(o.seed);
  const system = new Prng(o.seed ^ 0x5bd1e995);
  const chaosMs = o.chaosMs ?? 60_000;
  const quietMs = o.quietMs ?? 90_000;
  const vw = installVirtualWorld(system, START);
  const failures: string[] = [];
  const disks = installDiskFaults();
  // When each store was full (virtual ms, `to` null while it still is), for invariants that excuse it.
  const fullSpans: { file: string; from: number; to: number | null }[] = [];
  const setDisk = disks.set.bind(disks);
  disks.set = (file, full) => {
    if (full) fullSpans.push({ file, from: Date.now(), to: null });
    else for (const f of fullSpans) if (f.file === file && f.to === null) f.to = Date.now();
    setDisk(file, full);
  };
  // As the daemon's main does: a full disk in a handler the features do not guard is logged, and the
  // process stays up (gateway/main.ts). Anything else uncaught fails the seed, not the explorer.
  const uncaught = (err: Error) => {
    if (isStoreFull(err)) note(`uncaught SQLITE_FULL at ${err.stack?.split("\n")[3]?.trim()}`);
    else failures.push(`uncaught: ${err.stack ?? err}`);
  };
  process.on("uncaughtException", uncaught);
  const { clock } = vw;
  const lines: string[] = [];
  const at = () => clock.now - START;
  const note = (line: string) => {
    lines.push(`${at()} ${line}`);
    if (process.env.SIM_DEBUG)
      console.error(`${Number(process.hrtime.bigint() / 1_000_000n) % 1_000_000} ${at()} ${line}`);
  };
  const movements: Movement[] = [];
  const latches: LatchChange[] = [];
  const taps = createTapLog(() => clock.now);
  let world: World | null = null;
  let doors: ReturnType<typeof createDoorTraffic> | null = null;
  try {
    note("start");
    world = await startWorld({
      gateways: rng.int(1, 3),
      onBoot: (g, daemon) => {
        doors?.booted(g.id);
        taps.follow(g.id, daemon, (d) =>
          note(`decided ${g.id} ${d.card_id} ${d.granted} ${d.action} ${d.reason}`),
        );
      },
    });
    system.restart();
    note("started");
    const w = world;
    for (const g of w.gateways.values()) {
      for (let ch = 1; ch <= LOCKERS; ch++)
        watchLatch(
          g.hardware.board("bus0", 1).channel(ch),
          deviceId(deviceAlias(g.id, ch)),
          () => clock.now,
          latches,
          (latch) => note(`latch ${g.id} ch${ch} ${latch}`),
        );
      g.hardware.board("bus0", 1).onRequest((req) => {
        if (req.kind !== "lock" && req.kind !== "unlock") return;
        movements.push({
          gateway: g.id,
          channel: req.channel,
          action: req.kind,
          seq: req.seq,
          at: clock.now,
        });
        note(`board ${g.id} ${req.kind} ch${req.channel} seq${req.seq}`);
      });
    }
    const token = await during(clock, signIn(w));
    const api = (method: "GET" | "POST", url: string, payload?: object, as = token) =>
      w.app.inject({ method, url, payload, headers: { authorization: `Bearer ${as}` } });
    // Each seed's broker keeps its sessions across restarts always, never, or at each restart's draw.
    const keeps = new Prng(o.seed ^ 0x2545f491);
    const persistence = keeps.pick(["never", "always", "either"] as const);
    const brokerKeeps = () => persistence === "always" || (persistence === "either" && keeps.int(0, 1) === 1);
    note(`broker persistence ${persistence}`);
    const chaos = createChaos({
      world: w,
      rng,
      api,
      now: at,
      note,
      during: (p) => during(clock, p),
      disks,
      later: new Prng(o.seed ^ 0x27d4eb2f),
      brokerKeeps,
    });
    const keyEdits = createKeyEdits({
      world: w,
      rng: new Prng(o.seed ^ 0x165667b1),
      api,
      now: () => clock.now,
      note,
    });
    note(`whitelist edits ${keyEdits.weight}`);
    const people = createDoorTraffic({
      world: w,
      rng: new Prng(o.seed ^ 0x7feb352d),
      api,
      now: () => clock.now,
      note,
      storeFullDuring: (gateway, from, to) => {
        const g = w.gateways.get(gateway);
        const file = g ? w.storeFile(g) : "";
        return fullSpans.some(
          (f) => f.file === file && f.from <= to && (f.to ?? Number.POSITIVE_INFINITY) >= from,
        );
      },
    });
    doors = people;
    note(`door visits ${people.weight}`);
    while (at() < chaosMs) {
      await advance(clock, rng.int(20, 1_500));
      await chaos.step();
      keyEdits.step();
      people.step();
    }
    // The faults heal, everyone leaves; time passes without new work; then the world must agree with its
    // hardware.
    chaos.healAll();
    people.leave();
    note("heal");
    await advance(clock, quietMs);
    failures.push(
      ...(await during(
        clock,
        checkInvariants(
          w,
          api,
          {
            movements: [...movements, ...people.releases],
            taps: [...taps.taps(), ...chaos.localActs],
            decided: taps.decided,
            latches,
            cycles: chaos.cycles,
            history: keyEdits.history,
          },
          note,
        ),
      )),
      ...(await during(clock, people.alarmsFollowTheOpenings())),
      ...(await during(
        clock,
        people.doorsAtRest((url) => api("GET", url)),
      )),
    );
  } catch (err) {
    failures.push(`the run crashed: ${(err as Error).stack ?? err}`);
  } finally {
    if (world) await during(clock, world.stop()).catch((err: Error) => failures.push(`stop: ${err.message}`));
    process.off("uncaughtException", uncaught);
    disks.uninstall();
    vw.uninstall();
  }
  const trace = createHash("sha256").update(lines.join("\n")).digest("hex").slice(0, 16);
  return { seed: o.seed, trace, failures, tail: lines.slice(-20), virtualMs: at() };
}

async function signIn(w: World): Promise<string> {
  const res = await w.app.inject({
    method: "POST",
    url: "/oauth2/token",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    payload: `grant_type=client_credentials&client_id=${ADMIN}&client_secret=${SECRET}`,
  });
  if (res.statusCode !== 200) throw new Error(`sign-in refused: ${res.body}`);
  return res.json().access_token as string;
}

import type { LightMyRequestResponse } from "fastify";
import { endSessionByOperator } from "../../cloud/sessions/operator-commands.ts";
import { brownout, jam } from "../../hardware-sim/faults.ts";
import { systemClock } from "../../shared/node/system-clock.ts";
import type { DiskFaults } from "../support/disk-full.ts";
import type { Prng } from "./determinism.ts";
import type { Tap } from "./invariants.ts";
import type { MessageFate, MessageFault } from "./sim-network.ts";
import { CARDS, deviceAlias, deviceId, LOCKERS, OPERATOR, READERS, RIDERS, START } from "./sim-site.ts";
import type { World } from "./world.ts";

type Api = (
  method: "GET" | "POST",
  url: string,
  payload?: object,
  token?: string,
) => Promise<LightMyRequestResponse>;

/** What a step of the run can do; each seed weighs them its own way (swarm testing). */
type Action = { kind: string; weight: number; run(): Promise<void> | void };

/** A fault that heals on its own at `until` (virtual ms), or when the run heals everything. */
type Lasting = { until: number; heal(): void };

/**
 * The workload and the faults of a run, drawn from its seed: API clients' commands, link cuts, partitions,
 * broker restarts, daemon restarts, clock jumps, jammed latches and board brownouts. Each fault kind is
 * off, rare or frequent for the whole seed, so some seeds are calm and some storms of one kind.
 */
export function createChaos(o: {
  world: World;
  rng: Prng;
  api: Api;
  now: () => number;
  note: (line: string) => void;
  /** Waits for a promise while virtual time moves (a restart's start-up). */
  during: <T>(p: Promise<T>) => Promise<T>;
  /** The stores' disks: full for a while. */
  disks: DiskFaults;
  /** The workload added after the first exploration draws from this stream (`technician`). */
  later: Prng;
  /** Whether the broker's next restart keeps what it held (from a stream of its own). */
  brokerKeeps: () => boolean;
}) {
  const { world: w, rng, api, note } = o;
  const ids = [...w.gateways.keys()];
  const lasting = new Set<Lasting>();
  const partitions = new Map<string, number>();
  const unplugged = new Set<string>();
  const messageFaults = new Map<string, MessageFault>();
  const fullDisks = new Set<string>();
  /** Technicians' actuations with parkctl: latch movements no command or tap accounts for. */
  const localActs: Tap[] = [];
  /** Technicians' test cycles, each the unlock then lock of one call (its window grows with the call). */
  const cycles: Tap[] = [];
  let hooksFault: object | null = null;
  const weight = () => rng.pick([0, 1, 3]);
  const last = (forMs: number, heal: () => void) => lasting.add({ until: o.now() + forMs, heal });
  const board = (gw: string) => {
    const g = w.gateways.get(gw);
    if (!g) throw new Error(`no gateway ${gw}`);
    return g.hardware.board("bus0", 1);
  };

  const actions: Action[] = [
    {
      kind: "command",
      weight: 10,
      run() {
        const alias = deviceAlias(rng.pick(ids), rng.int(1, LOCKERS));
        const command = rng.pick(["lock", "unlock", "force-lock", "force-unlock", "force-cancel-booking"]);
        note(`post ${command} ${alias}`);
        void api("POST", `/device/v1/devices/${deviceId(alias)}/commands`, { command }).then((res) =>
          note(`posted ${command} ${alias} ${res.statusCode} ${res.json().id ?? res.json().type ?? ""}`),
        );
      },
    },
    {
      kind: "rider",
      weight: 10,
      async run() {
        const rider = rng.pick(RIDERS);
        const alias = deviceAlias(rng.pick(ids), rng.int(1, LOCKERS));
        const command = rng.pick(["lock", "unlock", "lock", "unlock", "book", "cancel-booking"]);
        // A booking ends 5 s to 2 min from now: some expire inside the run.
        const body =
          command === "book"
            ? { command, timeout_at: new Date(Date.now() + rng.int(5_000, 120_000)).toISOString() }
            : { command };
        const token = await w.riderTokens.issueUser({ id: rider.id, operatorId: OPERATOR });
        note(`${rider.userId} ${command} ${alias}`);
        void api("POST", `/device/v1/devices/${deviceId(alias)}/commands`, body, token).then((res) =>
          note(
            `${rider.userId} ${command} ${alias} ${res.statusCode} ${res.json().id ?? res.json().error_code ?? ""}`,
          ),
        );
      },
    },
    {
      kind: "end",
      weight: 2,
      async run() {
        // An operator ends a booked or active session with the operator CLI, with or without its fee.
        const open = await w.db
          .selectFrom("sessions")
          .select("id")
          .where("status", "in", ["booked", "active"])
          .orderBy("id")
          .execute();
        if (open.length === 0) return;
        const { id } = rng.pick(open);
        const withoutFee = rng.int(0, 1) === 1;
        note(`operator ends session ${id}${withoutFee ? " without fee" : ""}`);
        await endSessionByOperator({ db: w.db, clock: systemClock }, id, { withoutFee }).then(
          () => note(`session ${id} ended`),
          (err: Error) => note(`session ${id} not ended: ${err.message}`),
        );
      },
    },
    {
      kind: "tap",
      weight: 8,
      run() {
        const gw = rng.pick(ids);
        const n = rng.int(1, READERS);
        const card = rng.pick(Object.values(CARDS));
        note(`tap ${card} on ${gw} reader-${n}`);
        w.gateways.get(gw)?.hardware.reader(`reader-${n}`).tap(card);
      },
    },
    { kind: "cut", weight: weight(), run: () => void note(`cut ${pickGw()} links`) },
    {
      kind: "partition",
      weight: weight(),
      run() {
        const gw = rng.pick(ids);
        const ms = rng.int(1_000, 90_000);
        w.net.partition(gw, true);
        note(`partition ${gw} for ${ms}`);
        // Overlapping partitions of one gateway end with the last of them.
        partitions.set(gw, (partitions.get(gw) ?? 0) + 1);
        last(ms, () => {
          const left = (partitions.get(gw) ?? 1) - 1;
          partitions.set(gw, left);
          if (left > 0) return;
          w.net.partition(gw, false);
          note(`partition ${gw} healed`);
        });
      },
    },
    {
      kind: "slow",
      weight: weight(),
      run() {
        const gw = rng.pick(ids);
        const ms = rng.pick([5, 50, 500, 5_000]);
        const forMs = rng.int(1_000, 60_000);
        w.net.slow(gw, ms);
        note(`slow ${gw} ${ms} for ${forMs}`);
        last(forMs, () => {
          w.net.slow(gw, 0);
          note(`slow ${gw} healed`);
        });
      },
    },
    {
      kind: "messages",
      weight: weight(),
      run() {
        const gw = rng.pick(ids);
        const forMs = rng.int(1_000, 60_000);
        const rate = rng.pick([0.1, 0.3, 1]);
        const fates = rng.pick([["drop"], ["twice"], ["late"], ["drop", "twice", "late"]] as const);
        note(`messages ${gw} ${fates.join("/")} ${rate} for ${forMs}`);
        const fault: MessageFault = (direction, m) => {
          if (rng.float() >= rate) return { kind: "pass" };
          const kind = rng.pick(fates);
          const fate: MessageFate = kind === "drop" ? { kind } : { kind, afterMs: rng.int(1, 10_000) };
          const channel = m.topic.split("/").slice(4).join("/");
          note(`message ${gw} ${direction} ${channel} ${kind} ${"afterMs" in fate ? fate.afterMs : ""}`);
          return fate;
        };
        w.net.messages(gw, fault);
        // Overlapping message faults of one gateway: the last one set holds until it heals.
        messageFaults.set(gw, fault);
        last(forMs, () => {
          if (messageFaults.get(gw) !== fault) return;
          messageFaults.delete(gw);
          w.net.messages(gw, null);
          note(`messages ${gw} healed`);
        });
      },
    },
    {
      kind: "broker",
      weight: weight(),
      async run() {
        const keep = o.brokerKeeps();
        note(`broker restart${keep ? " keeping its sessions" : ""}`);
        await o.during(w.brokerRestart(keep));
      },
    },
    {
      kind: "restart",
      weight: weight(),
      async run() {
        const g = w.gateways.get(rng.pick(ids));
        if (!g) return;
        note(`restart ${g.id}`);
        await o.during(w.restartGateway(g));
      },
    },
    {
      kind: "kill",
      weight: weight(),
      async run() {
        const g = w.gateways.get(rng.pick(ids));
        if (!g) return;
        note(`kill ${g.id}`);
        await o.during(w.killGateway(g));
      },
    },
    {
      kind: "clock",
      weight: weight(),
      run() {
        const g = w.gateways.get(rng.pick(ids));
        if (!g) return;
        const ms = rng.int(-86_400_000, 86_400_000);
        g.clock.jump(ms);
        note(`clock ${g.id} ${ms}`);
      },
    },
    {
      kind: "jam",
      weight: weight(),
      run() {
        const gw = rng.pick(ids);
        const ch = rng.int(1, LOCKERS);
        const ms = rng.int(1_000, 60_000);
        const release = board(gw).use(jam(ch));
        note(`jam ${gw}/${ch} for ${ms}`);
        last(ms, () => {
          release();
          board(gw).setJammed(ch, false);
          note(`unjam ${gw}/${ch}`);
        });
      },
    },
    {
      kind: "brownout",
      weight: weight(),
      run() {
        const gw = rng.pick(ids);
        const ms = rng.int(50, 5_000);
        board(gw).use(brownout(ms));
        note(`brownout ${gw} ${ms}`);
      },
    },
    {
      kind: "unplug",
      weight: weight(),
      async run() {
        const gw = rng.pick(ids);
        const name = `reader-${rng.int(1, READERS)}`;
        const reader = w.gateways.get(gw)?.hardware.reader(name);
        const ms = rng.int(1_000, 60_000);
        if (!reader || unplugged.has(`${gw}/${name}`)) return;
        unplugged.add(`${gw}/${name}`);
        await reader.unplug();
        note(`unplug ${gw} ${name} for ${ms}`);
        last(ms, () => {
          unplugged.delete(`${gw}/${name}`);
          void reader.plugIn().then(() => note(`plug ${gw} ${name}`));
        });
      },
    },
    {
      kind: "hooks",
      weight: weight(),
      run() {
        // The operator's receiver is down, or takes messages and answers 500, for up to 20 s.
        const mode = rng.pick(["down", "lost-answer"] as const);
        const ms = rng.int(1_000, 20_000);
        const fault = {};
        hooksFault = fault;
        w.hooks.set(mode);
        note(`hooks ${mode} for ${ms}`);
        // Overlapping ones: the last one set holds until it heals.
        last(ms, () => {
          if (hooksFault !== fault) return;
          w.hooks.set("up");
          note("hooks up");
        });
      },
    },
    {
      kind: "disk",
      weight: weight(),
      run() {
        const which = rng.pick(["cloud", ...ids]);
        const g = w.gateways.get(which);
        const file = g ? w.storeFile(g) : w.cloudStoreFile;
        if (fullDisks.has(file)) return;
        const ms = rng.int(1_000, 30_000);
        fullDisks.add(file);
        o.disks.set(file, true);
        note(`disk of ${which} full for ${ms}`);
        last(ms, () => {
          fullDisks.delete(file);
          o.disks.set(file, false);
          note(`disk of ${which} has room`);
        });
      },
    },
  ];
  /**
   * A technician at a controller locks, unlocks or test-cycles a locker with parkctl. Drawn from its own
   * stream (`later`), after the step's action, so a workload added later leaves every seed's schedule of
   * the earlier kinds as it was (up to what the system does differently) and regression seeds keep finding
   * what they found.
   */
  function technician(): void {
    const { later } = o;
    const g = w.gateways.get(later.pick(ids));
    const alias = deviceAlias(g?.id ?? "", later.int(1, LOCKERS));
    const action = later.pick(["lock", "unlock", "test-cycle"] as const);
    const daemon = g?.daemon;
    if (!daemon) return;
    note(`parkctl ${action} ${alias}`);
    // Either movement may happen while the call runs (a test cycle makes both); a daemon killed meanwhile
    // may leave its call open, so the window stays open 30 s unless the call ends first.
    const at = START + o.now();
    const acts = (action === "test-cycle" ? (["unlock", "lock"] as const) : [action]).map(
      (a): Tap => ({ device_id: deviceId(alias), at, until: at + 30_000, action: a }),
    );
    localActs.push(...acts);
    if (action === "test-cycle" && acts[0]) cycles.push(acts[0]);
    const done = (result: string) => {
      for (const t of acts) t.until = START + o.now();
      note(`parkctl ${action} ${alias}: ${result}`);
    };
    const call =
      action === "test-cycle"
        ? daemon.control.testCycle(alias, "tech").then((r) => r.steps.map((st) => st.result).join(","))
        : daemon.control.actuate(alias, action, "tech", "simulation").then((r) => r.result);
    void call.then(done, (err: Error) => done(`error ${err.message}`));
  }

  function pickGw(): string {
    const gw = rng.pick(ids);
    w.net.cut(gw);
    return gw;
  }
  const total = actions.reduce((s, a) => s + a.weight, 0);
  const technicians = o.later.pick([0, 1, 3]);
  note(`weights ${actions.map((a) => `${a.kind}=${a.weight}`).join(" ")} technician=${technicians}`);

  return {
    localActs,
    cycles,
    /** One step: heals what is due, then does one thing drawn by weight. */
    async step(): Promise<void> {
      for (const f of [...lasting]) {
        if (f.until > o.now()) continue;
        lasting.delete(f);
        f.heal();
      }
      let roll = rng.int(1, total);
      for (const a of actions) {
        roll -= a.weight;
        if (roll > 0) continue;
        await a.run();
        break;
      }
      if (o.later.int(1, total) <= technicians) technician();
    },
    /** Every lasting fault ends now. */
    healAll(): void {
      for (const f of lasting) f.heal();
      lasting.clear();
    },
  };
}

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandRepository } from "../../../cloud/commands/command-repository.ts";
import type { CommandRecord } from "../../../cloud/store/command-record.ts";
import type { CommandEvent } from "../../../shared/api/command.ts";
import type { CommandState } from "../../../shared/domain/command-machine.ts";
import type { CommandName } from "../../../shared/domain/device-types.ts";
import type { CommandRequest as WireCommand } from "../../../shared/wire/messages.ts";
import { fx, OP_A, OP_B } from "../../support/fixture-site.ts";
import type { TestDb } from "../../support/test-db.ts";
import { openFixtureStore } from "./fixture-store.ts";

const at = (m: number) => new Date(Date.UTC(2026, 0, 15, 10, m)).toISOString();
const NOW = new Date(at(30));
const cmd = (n: number) => `c0c0c0c0-0000-4000-8000-${String(n).padStart(12, "0")}`;
const UNKNOWN = cmd(999);
const LOCKER = fx.device("L1", "2");
const DOCK = fx.device("D1", "1");
const B_LOCKER = fx.device("B1", "1");

function wire(id: string, device_id: string, name: CommandName): WireCommand {
  return { command_id: id, device_id, name, params: {}, issued_at: at(0), expires_at: at(59) };
}

/** A command of operator A on locker 2 of L1 (gateway gw-a1) unless told otherwise, awaiting delivery. */
function command(n: number, over: Partial<CommandRecord> = {}): CommandRecord {
  const id = cmd(n);
  const device_id = over.device_id ?? LOCKER;
  const name = over.name ?? "unlock";
  return {
    id,
    operator_id: OP_A,
    device_id,
    name,
    state: { value: "NOT_SENT", reason: "", timeout_at: at(40) },
    params: { command: name },
    requested_by: "a-admin",
    events: [],
    wire_request: wire(id, device_id, name),
    created_at: at(n % 60),
    updated_at: at(n % 60),
    ...over,
  };
}

const event = (name: string, m: number): CommandEvent => ({ name, timestamp: at(m) });
const state = (value: CommandState["value"], timeout_at: string | null, reason = ""): CommandState => ({
  value,
  reason,
  timeout_at,
});

describe("command repository: reading", () => {
  let store: TestDb;
  // Inserted in an order that is none of the orders read back.
  const commands = [
    command(3, { created_at: at(2) }),
    command(2, { created_at: at(2), state: state("SENT", at(31)) }),
    command(1, { name: "lock", params: { command: "lock", user_id: "rider-1" } }),
    command(4, { state: state("RECEIVED", at(45)) }),
    command(5, { state: state("NOT_SENT", at(30)) }),
    command(6, { state: state("SENT", at(10)) }),
    command(7, { name: "book", wire_request: null }),
    command(8, { state: state("SUCCESS", null, "done"), events: [event("LOCKED", 8)] }),
    command(9, { state: state("ERROR", null, "timeout") }),
    command(10, { device_id: DOCK, wire_request: wire(cmd(10), DOCK, "unlock") }),
    command(11, {
      operator_id: OP_B,
      device_id: B_LOCKER,
      requested_by: "b-admin",
      wire_request: wire(cmd(11), B_LOCKER, "unlock"),
    }),
  ];
  beforeAll(async () => {
    store = await openFixtureStore();
    for (const c of commands) await commandRepository(store.db).insert(c);
  });
  afterAll(() => store.drop());
  const repo = () => commandRepository(store.db);
  const byId = (n: number) => commands.find((c) => c.id === cmd(n)) as CommandRecord;

  it("finds a command as it was inserted, and nothing for an unknown one", async () => {
    expect(await repo().find(cmd(1))).toEqual(byId(1));
    expect(await repo().find(cmd(7))).toEqual(byId(7));
    expect(await repo().find(cmd(8))).toEqual(byId(8));
    expect(await repo().find(UNKNOWN)).toBeUndefined();
  });

  it("finds the operator's command only: another operator's is as missing as an unknown one", async () => {
    expect(await repo().findForOperator(OP_A, cmd(1))).toEqual(byId(1));
    expect(await repo().findForOperator(OP_B, cmd(11))).toEqual(byId(11));
    expect(await repo().findForOperator(OP_B, cmd(1))).toBeUndefined();
    expect(await repo().findForOperator(OP_A, cmd(11))).toBeUndefined();
    expect(await repo().findForOperator(OP_A, UNKNOWN)).toBeUndefined();
  });

  it("finds a command with the gateway that drives its device", async () => {
    expect(await repo().findWithGateway(cmd(1))).toEqual({ command: byId(1), gatewayId: "gw-a1" });
    expect(await repo().findWithGateway(cmd(10))).toEqual({ command: byId(10), gatewayId: "gw-a2" });
    expect(await repo().findWithGateway(cmd(11))).toEqual({ command: byId(11), gatewayId: "gw-b1" });
    expect(await repo().findWithGateway(UNKNOWN)).toBeUndefined();
  });

  it("lists the operator's commands in the order they were made, ties by id", async () => {
    const ofA = (await repo().ofOperator(OP_A)).map((c) => c.id);
    expect(ofA).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(cmd));
    expect(await repo().ofOperator(OP_B)).toEqual([byId(11)]);
    expect(await repo().ofOperator(UNKNOWN)).toEqual([]);
  });

  it("gives a gateway what it may still take, as published, in the order the commands were made", async () => {
    // Not 4 (received), 5 (deadline now), 6 (deadline gone), 7 (never published), 8 and 9 (ended).
    expect(await repo().awaitingDelivery("gw-a1", NOW)).toEqual([1, 2, 3].map((n) => byId(n).wire_request));
    expect(await repo().awaitingDelivery("gw-a1", new Date(at(35)))).toEqual([
      byId(1).wire_request,
      byId(3).wire_request,
    ]);
    expect(await repo().awaitingDelivery("gw-a2", NOW)).toEqual([byId(10).wire_request]);
    expect(await repo().awaitingDelivery("gw-b1", NOW)).toEqual([byId(11).wire_request]);
    expect(await repo().awaitingDelivery("gw-a3", NOW)).toEqual([]);
    expect(await repo().awaitingDelivery("gw-none", NOW)).toEqual([]);
  });

  it("offers the commands still under way whose deadline has passed, up to the limit", async () => {
    const due = async (m: number, limit = 20) =>
      (await repo().pastDeadline(at(m), limit)).map((c) => c.id).sort();
    expect(await due(9)).toEqual([]);
    expect(await due(10)).toEqual([cmd(6)]);
    expect(await due(30)).toEqual([cmd(5), cmd(6)]);
    expect(await due(45)).toEqual([1, 2, 3, 4, 5, 6, 7, 10, 11].map(cmd));
    expect(await repo().pastDeadline(at(10), 20)).toEqual([{ id: cmd(6), device_id: LOCKER }]);
    expect(await repo().pastDeadline(at(45), 3)).toHaveLength(3);
  });
});

describe("command repository: writing", () => {
  let store: TestDb;
  beforeAll(async () => {
    store = await openFixtureStore();
  });
  afterAll(() => store.drop());
  const repo = () => commandRepository(store.db);
  const read = async (id: string): Promise<CommandRecord> => {
    const c = await repo().find(id);
    if (!c) throw new Error(`command ${id} missing`);
    return c;
  };

  it("moves a command and appends its events when nobody wrote it since it was read", async () => {
    const before = command(20, { events: [event("CREATED", 20)] });
    await repo().insert(before);
    const next = state("SENT", before.state.timeout_at);
    const written = await repo().compareAndSet(before, next, [event("SENT", 21)], new Date(at(21)));
    expect(written).toEqual({
      ...before,
      state: next,
      events: [event("CREATED", 20), event("SENT", 21)],
      updated_at: at(21),
    });
    expect(await repo().find(before.id)).toEqual(written);
  });

  it("refuses a transition from a stale read, whether its state or its time moved on", async () => {
    const before = command(21);
    await repo().insert(before);
    // Written again within the same millisecond: the state tells the two reads apart.
    const first = await repo().compareAndSet(before, state("SENT", at(40)), [], new Date(before.updated_at));
    expect(first?.updated_at).toBe(before.updated_at);
    expect(
      await repo().compareAndSet(before, state("ERROR", null, "late"), [event("X", 23)], new Date(at(23))),
    ).toBeNull();
    // The same state, written again since: its time tells them apart.
    const again = await repo().compareAndSet(
      await read(before.id),
      state("SENT", at(41)),
      [],
      new Date(at(24)),
    );
    expect(again).not.toBeNull();
    expect(await repo().compareAndSet(first as CommandRecord, state("SENT", at(50)), [], NOW)).toBeNull();
    expect(await repo().find(before.id)).toEqual(again);
    expect(await repo().compareAndSet({ ...before, id: UNKNOWN }, state("SENT", at(40)), [], NOW)).toBeNull();
  });

  it("lets exactly one of two transitions racing from the same read win", async () => {
    const before = command(22);
    await repo().insert(before);
    const results = await Promise.all([
      repo().compareAndSet(before, state("RECEIVED", at(50)), [event("RECEIVED", 25)], new Date(at(25))),
      repo().compareAndSet(before, state("ERROR", null, "timeout"), [event("ERROR", 25)], new Date(at(25))),
    ]);
    const winners = results.filter((r): r is CommandRecord => r !== null);
    expect(winners).toHaveLength(1);
    expect(await repo().find(before.id)).toEqual(winners[0]);
  });

  it("appends an event without moving the state, at the end or where told", async () => {
    const before = command(23, { events: [event("A", 1), event("C", 3)] });
    await repo().insert(before);
    await repo().appendEvent(before.id, event("D", 4), new Date(at(26)));
    await repo().appendEvent(before.id, event("B", 2), new Date(at(27)), (es) =>
      es.findIndex((e) => e.name === "C"),
    );
    expect(await repo().find(before.id)).toEqual({
      ...before,
      events: [event("A", 1), event("B", 2), event("C", 3), event("D", 4)],
      updated_at: at(27),
    });
    await repo().appendEvent(UNKNOWN, event("Z", 5), NOW);
    expect(await repo().find(UNKNOWN)).toBeUndefined();
  });

  it("keeps every one of appends racing on the same command", async () => {
    const before = command(24);
    await repo().insert(before);
    const names = ["E1", "E2", "E3", "E4", "E5"];
    await Promise.all(names.map((name, i) => repo().appendEvent(before.id, event(name, i), NOW)));
    expect((await read(before.id)).events.map((e) => e.name).sort()).toEqual(names);
  });

  it("holds a command's row until the transaction ends, changing nothing", async () => {
    const before = command(25);
    await repo().insert(before);
    const order: string[] = [];
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held = () => {};
    const firstHolds = new Promise<void>((resolve) => {
      held = resolve;
    });
    const first = store.db.transaction().execute(async (trx) => {
      await commandRepository(trx).hold(before.id);
      held();
      await released;
      order.push("first ends");
    });
    await firstHolds;
    const second = store.db.transaction().execute(async (trx) => {
      await commandRepository(trx).hold(before.id);
      order.push("second holds");
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    order.push("released");
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(["released", "first ends", "second holds"]);
    expect(await repo().find(before.id)).toEqual(before);
    await store.db.transaction().execute((trx) => commandRepository(trx).hold(UNKNOWN));
  });

  it("writes through a transaction's executor: rolled back with it, kept when it commits", async () => {
    const before = command(26);
    await expect(
      store.db.transaction().execute(async (trx) => {
        const commands = commandRepository(trx);
        await commands.insert(before);
        expect(await commands.compareAndSet(before, state("SENT", at(40)), [], NOW)).not.toBeNull();
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    expect(await repo().find(before.id)).toBeUndefined();
    const written = await store.db.transaction().execute(async (trx) => {
      const commands = commandRepository(trx);
      await commands.insert(before);
      await commands.appendEvent(before.id, event("CREATED", 30), NOW);
      const inserted = await commands.find(before.id);
      return inserted && commands.compareAndSet(inserted, state("SENT", at(40)), [event("SENT", 30)], NOW);
    });
    expect(written?.events).toEqual([event("CREATED", 30), event("SENT", 30)]);
    expect(await repo().find(before.id)).toEqual(written);
  });
});

import { describe, expect, it } from "vitest";
import type { Db } from "../../cloud/store/db.ts";
import type { Grant } from "../../shared/wire/messages.ts";
import {
  type CommandRow,
  type Movement,
  ridersReleasedOnlyTheirOwn,
  unmatchedMovements,
} from "./invariants.ts";
import type { GrantHistory } from "./key-edits.ts";
import { judgeKeyCache } from "./key-invariants.ts";
import { judgeSessions, type LatchChange, type SessionRow } from "./session-invariants.ts";
import { deviceAlias, deviceId, KEPT_WHITELIST, locationId } from "./sim-site.ts";
import { type Decided, tapsFollowTheRule } from "./tap-invariants.ts";
import { judgeWebhooks, type MessageRow } from "./webhook-invariants.ts";

const T0 = Date.parse("2026-03-02T07:00:00.000Z");
const device = deviceId(deviceAlias("gw-1", 1));
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const command = (
  id: string,
  name: string,
  createdS: number,
  expiresS: number,
  by = "sim-admin",
): CommandRow => ({
  id,
  device_id: device,
  name,
  state_value: "SUCCESS",
  requested_by: by,
  created_at: at(createdS),
  updated_at: at(createdS + 0.5),
  expires: T0 + expiresS * 1000,
});
const move = (action: "lock" | "unlock", atS: number, seq: number): Movement => ({
  gateway: "gw-1",
  channel: 1,
  action,
  seq,
  at: T0 + atS * 1000,
});

describe("every latch movement belongs to a distinct live command", () => {
  it("accepts one movement per command, within its deadline, retries of one request counted once", () => {
    const commands = [command("a", "lock", 0, 30), command("b", "force-unlock", 5, 35)];
    expect(
      unmatchedMovements([move("lock", 1, 1), move("lock", 1.5, 1), move("unlock", 6, 2)], commands),
    ).toEqual([]);
  });

  it("refuses a movement after its command's deadline", () => {
    const failures = unmatchedMovements([move("lock", 31, 1)], [command("a", "lock", 0, 30)]);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/gw-1 ch1 moved \(lock, seq 1\)/);
  });

  it("refuses a second movement for one command, and one of the other action", () => {
    const commands = [command("a", "lock", 0, 30)];
    expect(unmatchedMovements([move("lock", 1, 1), move("lock", 2, 2)], commands)).toHaveLength(1);
    expect(unmatchedMovements([move("unlock", 1, 1)], commands)).toHaveLength(1);
  });

  it("matches the command whose deadline comes first, so a later movement still finds its own", () => {
    const commands = [command("late", "lock", 0, 100), command("soon", "lock", 1, 10)];
    expect(unmatchedMovements([move("lock", 2, 1), move("lock", 50, 2)], commands)).toEqual([]);
  });
});

describe("a rider releases only what they hold", () => {
  const riders = new Set(["ann", "bob"]);

  it("accepts a rider unlocking the locker they locked, and the operator unlocking anyone's", () => {
    const commands = [
      command("1", "lock", 0, 30, "ann"),
      command("2", "unlock", 10, 40, "ann"),
      command("3", "lock", 20, 50, "bob"),
      command("4", "force-unlock", 30, 60, "sim-admin"),
    ];
    expect(ridersReleasedOnlyTheirOwn(commands, riders)).toEqual([]);
  });

  it("refuses a rider's successful unlock of a locker another rider locked", () => {
    const commands = [command("1", "lock", 0, 30, "ann"), command("2", "unlock", 10, 40, "bob")];
    expect(ridersReleasedOnlyTheirOwn(commands, riders)).toEqual([
      `rider bob unlocked device ${device} (command 2) held by ann (command 1)`,
    ]);
  });

  it("ignores an unlock that did not succeed, and a lock still in flight when the unlock was asked", () => {
    const refused = { ...command("2", "unlock", 10, 40, "bob"), state_value: "ERROR" };
    expect(ridersReleasedOnlyTheirOwn([command("1", "lock", 0, 30, "ann"), refused], riders)).toEqual([]);
    const late = { ...command("1", "lock", 0, 30, "ann"), updated_at: at(20) };
    expect(ridersReleasedOnlyTheirOwn([late, command("2", "unlock", 10, 40, "bob")], riders)).toEqual([]);
  });
});

describe("sessions agree with the latch history", () => {
  const riders = new Set(["rider-ann"]);
  const name = () => "gw-1-1";
  const END = T0 + 150_000;
  const session = (over: Partial<SessionRow>): SessionRow => ({
    id: "s1",
    device_id: device,
    access_key_id: null,
    status: "ended",
    start_time: at(10),
    end_time: at(100),
    command_id: "lock-1",
    ended_by: "unlock",
    ...over,
  });
  const lock = { ...command("lock-1", "lock", 9, 39, "rider-ann") };
  const latches = (...changes: [number, boolean][]): LatchChange[] =>
    changes.map(([s, locked]) => ({ device, locked, at: T0 + s * 1000 }));
  const judge = (sessions: SessionRow[], seen: Partial<Parameters<typeof judgeSessions>[1]>) =>
    judgeSessions(sessions, { commands: [lock], riders, decided: [], latches: [], ...seen }, name, T0, END);

  it("accepts a session billed while its latch was locked, its ends within the slack", () => {
    expect(judge([session({})], { latches: latches([10, true], [100, false]) })).toEqual([]);
    expect(judge([session({ end_time: at(110) })], { latches: latches([20, true], [100, false]) })).toEqual(
      [],
    );
  });

  it("finds a session billed past the moment its latch opened", () => {
    const failures = judge([session({ end_time: at(140) })], { latches: latches([10, true], [100, false]) });
    expect(failures).toEqual([expect.stringMatching(/billed from .* but gw-1-1's latch was open from/)]);
  });

  it("leaves a technician's test cycle that locked the latch again to the session; not one left open", () => {
    const cycled = latches([10, true], [60, false], [60.02, true]);
    const cycle = { device_id: device, at: T0 + 59_000, until: T0 + 61_000 };
    expect(judge([session({})], { latches: cycled, cycles: [cycle] })).toEqual([]);
    expect(judge([session({})], { latches: cycled })).toEqual([expect.stringMatching(/latch was open from/)]);
    const leftOpen = latches([10, true], [60, false], [90, true]); // the cycle stopped half-way
    expect(judge([session({})], { latches: leftOpen, cycles: [cycle] })).toEqual([
      expect.stringMatching(/latch was open from/),
    ]);
  });

  it("leaves an operator's forced end to the operator: dated on what the cloud knew then", () => {
    const forced = session({ end_time: at(140), ended_by: "operator" });
    expect(judge([forced], { latches: latches([10, true], [100, false]) })).toEqual([]);
  });

  it("finds a session started by a lock that failed, and a rider's successful lock with no session", () => {
    expect(
      judge([session({})], { commands: [{ ...lock, state_value: "ERROR" }], latches: latches([10, true]) }),
    ).toEqual([expect.stringMatching(/its command lock-1 is lock ERROR/)]);
    expect(judge([], { latches: latches([10, true]) })).toEqual([
      expect.stringMatching(/lock lock-1 succeeded, and started no session/),
    ]);
  });

  it("finds, once quiet, two active sessions on a locker, and an active one on an open latch", () => {
    const active = session({ status: "active", end_time: null, ended_by: null });
    const card = session({
      id: "s2",
      command_id: null,
      access_key_id: "a1a1",
      status: "active",
      end_time: null,
    });
    const decided = [
      {
        gateway: "gw-1",
        at: T0,
        decision: { card_id: "a1a1", device_id: device, granted: true, action: "lock" },
      },
    ];
    expect(judge([active, card], { latches: latches([10, true]), decided: decided as Decided[] })).toEqual([
      expect.stringMatching(/^gw-1-1 holds 2 active sessions: s1 \(command .*\), s2 \(card a1a1, from .*\)$/),
    ]);
    expect(judge([active], { latches: latches([10, true], [120, false]) })).toEqual([
      expect.stringMatching(/billed from .* to now/),
      "gw-1-1's latch is open, and it holds active session s1",
    ]);
  });

  it("finds a card's session no gateway let that card lock", () => {
    const card = session({ command_id: null, access_key_id: "a1a1" });
    expect(judge([card], { commands: [], latches: latches([10, true], [100, false]) })).toEqual([
      "card session s1 of a1a1: no gateway let that card lock",
    ]);
  });
});

describe("every webhook is delivered at least once under a stable id", () => {
  const message = (id: string, status = "delivered"): MessageRow => ({
    id,
    type: "connection",
    status,
    attempts: 1,
    payload: `{"id":"${id}"}`,
    last_error: status === "delivered" ? null : "HTTP 500",
  });
  const post = (id: string, body = `{"id":"${id}"}`, verified = true) => ({ id, body, at: T0, verified });

  it("accepts every message delivered, once or again under its id with its body", () => {
    expect(
      judgeWebhooks([message("msg_1"), message("msg_2")], [post("msg_1"), post("msg_2"), post("msg_2")]),
    ).toEqual([]);
  });

  it("finds a message not delivered once quiet, and one marked delivered the receiver never took", () => {
    const failures = judgeWebhooks([message("msg_1", "pending"), message("msg_2")], []);
    expect(failures).toHaveLength(2);
    expect(failures[0]).toContain("msg_1 (connection) is pending");
    expect(failures[1]).toContain("msg_2 (connection) is marked delivered, but the receiver never took it");
  });

  it("finds an id sent again with another body, an unknown id and a bad signature", () => {
    const failures = judgeWebhooks(
      [message("msg_1")],
      [
        post("msg_1"),
        post("msg_1", '{"id":"msg_1","again":true}'),
        post("msg_9"),
        post("msg_1", undefined, false),
      ],
    );
    expect(failures.join("\n")).toContain("msg_1: a POST carried a body other than the message's");
    expect(failures.join("\n")).toContain("msg_1: sent again with another body");
    expect(failures.join("\n")).toContain("msg_9: the receiver got an id the cloud never queued");
    expect(failures.join("\n")).toContain("msg_1: a POST's signature did not verify");
  });
});

/** A kept card's grant at the site's location. */
const grant = (card: string, over: Partial<Grant> = {}): Grant => ({
  card_id: card,
  whitelist_id: KEPT_WHITELIST,
  status: "ACTIVE",
  expires_at: null,
  is_master_key: false,
  location_ids: [locationId],
  device_ids: [],
  ...over,
});

describe("RFID decisions follow the rule on a version of the keys the cloud held", () => {
  const tap = (atS: number, granted: boolean, reason: string): Decided => ({
    gateway: "gw-1",
    at: T0 + atS * 1000,
    decision: {
      type: "access_decision",
      gateway_id: "gw-1",
      seq: 1,
      observed_at: at(atS),
      observed_cloud_at: at(atS),
      reader: "reader-1",
      device_id: device,
      card_id: "a1a1",
      granted,
      action: granted ? "lock" : "none",
      reason,
      whitelist_id: granted ? KEPT_WHITELIST : null,
      decided_by: "local",
      actuated: granted ? true : null,
    },
  });
  // The card was kept, then an integrator made it inactive at 30 s.
  const history: GrantHistory = new Map([
    [
      "gw-1/a1a1",
      [
        { from: Number.NEGATIVE_INFINITY, grants: [grant("a1a1")] },
        { from: T0 + 30_000, grants: [grant("a1a1", { status: "INACTIVE" })] },
      ],
    ],
  ]);
  const db = {} as Db; // every card judged here has its history: the store is not read

  it("accepts a decision on the version before an edit, and, after it, on either", async () => {
    expect(await tapsFollowTheRule(db, [tap(10, true, "parked")], history)).toEqual([]);
    expect(
      await tapsFollowTheRule(db, [tap(40, true, "parked"), tap(41, false, "inactive")], history),
    ).toEqual([]);
  });

  it("finds a decision on a version the cloud did not hold yet", async () => {
    expect(await tapsFollowTheRule(db, [tap(10, false, "inactive")], history)).toEqual([
      expect.stringContaining('decided card a1a1 (local, seq 1) as "false none inactive"'),
    ]);
  });
});

describe("every gateway's key cache converges on the cloud's view", () => {
  const expired = at(-60);

  it("accepts the same grants at the same version, an expired one swept or not yet", () => {
    const cloud = { version: 4, grants: [grant("a1a1"), grant("e1e1", { expires_at: expired })] };
    expect(judgeKeyCache("gw-1", cloud, { version: 4, grants: [grant("a1a1")] }, T0)).toEqual([]);
    expect(judgeKeyCache("gw-1", cloud, cloud, T0)).toEqual([]);
    // The same instant in another notation is the same expiry.
    const later = grant("b2b2", { expires_at: "2026-03-02T09:00:00+02:00" });
    const same = grant("b2b2", { expires_at: "2026-03-02T07:00:00.000Z" });
    expect(
      judgeKeyCache("gw-1", { version: 1, grants: [later] }, { version: 1, grants: [same] }, T0 - 1),
    ).toEqual([]);
  });

  it("finds a cache behind the cloud: an older version, a grant missing, one removed or changed since", () => {
    const cloud = { version: 5, grants: [grant("a1a1", { status: "INACTIVE" }), grant("b2b2")] };
    const held = { version: 4, grants: [grant("a1a1"), grant("0bad")] };
    expect(judgeKeyCache("gw-1", cloud, held, T0)).toEqual([
      "gw-1: its key cache is at version 4, the cloud's view of it at 5",
      `gw-1: its key cache lacks a1a1 ${KEPT_WHITELIST} INACTIVE never - [["${locationId}"],[]]`,
      `gw-1: its key cache lacks b2b2 ${KEPT_WHITELIST} ACTIVE never - [["${locationId}"],[]]`,
      `gw-1: its key cache holds a1a1 ${KEPT_WHITELIST} ACTIVE never - [["${locationId}"],[]], the cloud's view does not`,
      `gw-1: its key cache holds 0bad ${KEPT_WHITELIST} ACTIVE never - [["${locationId}"],[]], the cloud's view does not`,
    ]);
  });
});

import type { LightMyRequestResponse } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listAudit } from "../../cloud/audit/audit-log.ts";
import type { StaffRole } from "../../shared/domain/staff-roles.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { consoleRequests, consoleSignIn, createConsoleStaff } from "../support/console-api.ts";
import { fx, OP_A, OP_B } from "../support/fixture-site.ts";

/**
 * The console's alarm inbox API (cloud/http/routes/console-alarms.ts): staff read their operator's alarms with
 * their history; an operator or admin acknowledges, assigns and clears them, each written to the audit log
 * naming the staff member; a viewer's action is refused and changes nothing.
 */

const GW = "gw-a1";
const LOCKER = fx.device("L1", "1");
const ALARMS = "/console/api/alarms";

let h: CloudHarness;
let seq = 0;
const staffIds: Record<string, string> = {};

beforeEach(async () => {
  h = await startCloudHarness();
  const add = async (email: string, role: StaffRole, operatorId: string | null) => {
    staffIds[email] = await createConsoleStaff(h, email, role, operatorId);
  };
  await add("viewer@a.example", "viewer", OP_A);
  await add("operator@a.example", "operator", OP_A);
  await add("admin@a.example", "admin", OP_A);
  await add("operator@b.example", "operator", OP_B);
  await add("root@example.com", "viewer", null);
});
afterEach(() => h.close());

/** A tamper as the gateway reports it, on the locker or (null) on its board. */
const tamper = (deviceId: string | null = LOCKER) =>
  h.report(GW, {
    type: "hardware_event",
    gateway_id: GW,
    seq: ++seq,
    observed_at: h.clock.now().toISOString(),
    device_id: deviceId,
    source: "bus0/1/1",
    event: "tamper",
    detail: "",
  });

const signIn = (email: string) => consoleSignIn(h, email);
const { get, post } = consoleRequests(() => h);

const ok = <T>(res: LightMyRequestResponse): T => {
  expect(res.statusCode, res.body).toBe(200);
  return res.json<T>();
};

type Alarm = { id: string; status: string; kind: string; device_id: string | null; assignee: unknown };

async function onlyAlarm(s: { cookie: string; csrf: string }): Promise<Alarm> {
  const { data } = ok<{ data: Alarm[] }>(await get(s, ALARMS));
  expect(data).toHaveLength(1);
  return data[0] as Alarm;
}

const auditOf = async () => (await listAudit(h.db, OP_A, { subject: { type: "alarm" } })).data;

describe("the console's alarm inbox", () => {
  it("lists the operator's alarms with filters, and one with its history and the staff's emails", async () => {
    await tamper();
    await tamper(null);
    const viewer = await signIn("viewer@a.example");
    const all = ok<{ data: Alarm[]; staff: Record<string, string> }>(await get(viewer, ALARMS));
    expect(all.data.map((a) => a.device_id).sort()).toEqual([LOCKER, null].sort());
    expect(all.staff[staffIds["operator@a.example"] ?? ""]).toBe("operator@a.example");
    const byDevice = ok<{ data: Alarm[] }>(await get(viewer, `${ALARMS}?device=${LOCKER}`));
    expect(byDevice.data.map((a) => a.device_id)).toEqual([LOCKER]);
    const located = ok<{ data: Alarm[] }>(await get(viewer, `${ALARMS}?location=${fx.location("L1")}`));
    expect(located.data).toHaveLength(2);
    expect(ok<{ data: Alarm[] }>(await get(viewer, `${ALARMS}?status=CLEARED`)).data).toEqual([]);
    expect(ok<{ data: Alarm[] }>(await get(viewer, `${ALARMS}?severity=MINOR,WARNING`)).data).toEqual([]);
    expect((await get(viewer, `${ALARMS}?status=OPEN`)).statusCode).toBe(400);

    const id = byDevice.data[0]?.id ?? "";
    const one = ok<{ alarm: Alarm; history: { action: string }[] }>(await get(viewer, `${ALARMS}/${id}`));
    expect(one.alarm).toMatchObject({ id, kind: "tamper", status: "ACTIVE" });
    expect(one.history.map((c) => c.action)).toEqual(["raise"]);

    // Another operator's staff find nothing of it.
    const other = await signIn("operator@b.example");
    expect(ok<{ data: Alarm[] }>(await get(other, ALARMS)).data).toEqual([]);
    expect((await get(other, `${ALARMS}/${id}`)).statusCode).toBe(404);
    expect((await post(other, `${ALARMS}/${id}/acknowledge`, { note: "not mine" })).statusCode).toBe(404);
  });

  it("an operator acknowledges, assigns and clears; each is audited with the staff member as actor", async () => {
    await tamper();
    const op = await signIn("operator@a.example");
    const { id } = await onlyAlarm(op);
    const me = { kind: "staff", id: staffIds["operator@a.example"] };

    const acked = ok<Alarm>(await post(op, `${ALARMS}/${id}/acknowledge`, { note: "on my way" }));
    expect(acked).toMatchObject({ status: "ACKNOWLEDGED", acknowledged: { by: me, note: "on my way" } });
    const admin = { kind: "staff", id: staffIds["admin@a.example"] };
    const given = ok<Alarm>(await post(op, `${ALARMS}/${id}/assign`, { assignee: "admin@a.example" }));
    expect(given.assignee).toEqual(admin);
    // A viewer may not act, so is nobody to give an alarm to; neither is an unknown email.
    for (const assignee of ["viewer@a.example", "nobody@a.example"])
      expect((await post(op, `${ALARMS}/${id}/assign`, { assignee })).statusCode).toBe(400);
    const cleared = ok<Alarm>(await post(op, `${ALARMS}/${id}/clear`, { note: "tamper switch reseated" }));
    expect(cleared).toMatchObject({ status: "CLEARED", cleared: { by: me, note: "tamper switch reseated" } });
    // A cleared alarm is final: the lifecycle refuses another acknowledgement, and nothing is audited for it.
    expect((await post(op, `${ALARMS}/${id}/acknowledge`, { note: "again" })).statusCode).toBe(400);

    const history = ok<{ history: { action: string; by: unknown; note: string }[] }>(
      await get(op, `${ALARMS}/${id}`),
    ).history;
    expect(history.map((c) => [c.action, c.note])).toEqual([
      ["raise", ""],
      ["acknowledge", "on my way"],
      ["assign", ""],
      ["clear", "tamper switch reseated"],
    ]);
    // All at one clock time: sorted by action, which is also the order they were made in.
    const audit = (await auditOf()).sort((a, b) => a.action.localeCompare(b.action));
    expect(audit.map((e) => [e.action, e.actor, e.comment, e.changes])).toEqual([
      ["alarm.acknowledge", me, "on my way", { status: { from: "ACTIVE", to: "ACKNOWLEDGED" } }],
      ["alarm.assign", me, null, { assignee: { from: null, to: admin } }],
      ["alarm.clear", me, "tamper switch reseated", { status: { from: "ACKNOWLEDGED", to: "CLEARED" } }],
    ]);
    expect(audit.every((e) => e.subject.id === id && e.correlation_id !== null)).toBe(true);
  });

  it("refuses a viewer's actions (403) and they change nothing", async () => {
    await tamper();
    const viewer = await signIn("viewer@a.example");
    const { id } = await onlyAlarm(viewer);
    for (const [action, body] of [
      ["acknowledge", { note: "x" }],
      ["assign", { assignee: "operator@a.example" }],
      ["clear", { note: "x" }],
    ] as const) {
      const res = await post(viewer, `${ALARMS}/${id}/${action}`, body);
      expect(res.statusCode, action).toBe(403);
      expect(res.json()).toMatchObject({ error_code: "ERRORS.FORBIDDEN" });
    }
    expect(await onlyAlarm(viewer)).toMatchObject({ status: "ACTIVE", assignee: null });
    expect(await auditOf()).toEqual([]);
  });

  it("a superadmin names the operator it reads; without one it is refused", async () => {
    await tamper();
    const root = await signIn("root@example.com");
    expect((await get(root, ALARMS)).statusCode).toBe(400);
    const { data } = ok<{ data: Alarm[] }>(await get(root, `${ALARMS}?operator_id=${OP_A}`));
    expect(data).toHaveLength(1);
    const id = data[0]?.id ?? "";
    expect((await get(root, `${ALARMS}/${id}`)).statusCode).toBe(400);
    expect((await get(root, `${ALARMS}/${id}?operator_id=${OP_A}`)).statusCode).toBe(200);
    expect((await get(root, `${ALARMS}/${id}?operator_id=${OP_B}`)).statusCode).toBe(404);
    // A viewer still, for every operator.
    const refused = await post(root, `${ALARMS}/${id}/acknowledge?operator_id=${OP_A}`, { note: "x" });
    expect(refused.statusCode).toBe(403);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClientPrincipal, UserPrincipal } from "../auth/principal.ts";
import { hashSecret } from "../auth/secrets.ts";
import { applyManifest, derivedId } from "../manifest/apply-manifest.ts";
import { SiteManifest } from "../manifest/manifest-schema.ts";
import { type Db, openDb } from "../store/db.ts";
import { createSessionService } from "./session-service.ts";

/**
 * The v2 list's answer, byte for byte: what a client parses must not move when the list's hot path is
 * reworked (key order, nulls, uris, the pagination token). Sessions in each state, on a fixed clock.
 */
const OP = "dddddddd-0000-4000-8000-000000000004";
const RIDER = "eeeeeeee-0000-4000-8000-000000000005";
const NOW = new Date("2026-03-10T12:00:00.000Z");
const clock = { now: () => NOW, setTimer: () => ({ id: 0 }), clearTimer: () => {} };
const location = derivedId(OP, "location", "L1");
const device = derivedId(location, "device", "1");
const sid = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
const client: ClientPrincipal = { kind: "client", id: "c", operatorId: OP, permissions: new Set() };
const rider: UserPrincipal = { kind: "user", id: RIDER, operatorId: OP, permissions: new Set() };

let db: Db;
beforeAll(async () => {
  db = await openDb({ kind: "sqlite", file: ":memory:" });
  const price_list = { code: "std", name: "Standard", currency: "EUR", price_per_period: "2.00" };
  const devices = [{ alias: "1", type: "LOCKER" as const }];
  const loc = { code: "L1", label: "L", type: "BIKE_LOCKERS", latitude: 52, longitude: 4, price_list: "std" };
  const gateways = [{ id: "gw-pin", secret_hash: await hashSecret("pin"), devices }];
  const manifest = {
    version: 1,
    operators: [{ id: OP, name: "Pin", price_lists: [price_list], locations: [{ ...loc, gateways }] }],
  };
  await applyManifest(db, SiteManifest.parse(manifest), clock);
  const at = (m: number) => new Date(Date.parse("2026-03-01T08:00:00.000Z") + m * 60_000).toISOString();
  const base = {
    operator_id: OP,
    user_id: RIDER,
    access_key_id: null,
    location_id: location,
    device_id: device,
    price_list_id: derivedId(OP, "price-list", "std"),
    booked_time: null,
    booked_until_time: null,
    start_time: null,
    end_time: null,
    command_id: null,
    ended_by: null,
    fee_currency: null,
    fee_value: null,
  };
  const row = (n: number, over: Record<string, unknown>) => ({
    ...base,
    id: sid(n),
    status: "pending" as const,
    status_at: at(n * 100),
    created_at: at(n * 100),
    updated_at: at(n * 100),
    ...over,
  });
  await db
    .insertInto("sessions")
    .values([
      row(1, {
        status: "ended",
        start_time: at(101),
        end_time: at(175),
        ended_by: "unlock",
        fee_currency: "EUR",
        fee_value: "4.00",
      }),
      row(2, { status: "active", start_time: at(201) }),
      row(3, { status: "booked", booked_time: at(300), booked_until_time: at(330) }),
      row(4, {
        user_id: "",
        access_key_id: "ak-1",
        status: "ended",
        start_time: at(401),
        end_time: at(402),
        ended_by: "unlock",
        fee_currency: "EUR",
        fee_value: "0.00",
      }),
    ])
    .execute();
  const ev = (n: number, seq: number, name: string, m: number, booked_until: string | null = null) => ({
    session_id: sid(n),
    seq,
    name,
    occurred_at: at(m),
    booked_until,
  });
  await db
    .insertInto("session_events")
    .values([
      ev(1, 1, "start", 101),
      ev(1, 2, "end", 175),
      ev(2, 1, "start", 201),
      ev(3, 1, "book", 300, at(330)),
      ev(4, 1, "start", 401),
      ev(4, 2, "end", 402),
    ] as never)
    .execute();
  const pay = { operator_id: OP, provider: "builtin", created_at: at(175), updated_at: at(175) };
  await db
    .insertInto("payments")
    .values([
      { ...pay, id: sid(7), session_id: sid(1), status: "PENDING" },
      { ...pay, id: sid(8), session_id: sid(4), status: "PAID" },
    ] as never)
    .execute();
});
afterAll(() => db.destroy());

describe("the v2 list's answer", () => {
  it("is the same bytes, page by page, for an S2S client and for a rider", async () => {
    const sessions = createSessionService({ db, clock });
    const first = await sessions.listV2(client, { limit: 2 });
    expect(JSON.stringify(first)).toMatchInlineSnapshot(
      `"{"pagination_token":"eyJ2IjoxLCJjIjoiMjAyNi0wMy0wMVQxMzowMDowMC4wMDBaIiwiaSI6IjAwMDAwMDAwLTAwMDAtNDAwMC04MDAwLTAwMDAwMDAwMDAwMyIsImYiOiJLa25peEhweXIyblFIZEdIIn0","data":[{"id":"00000000-0000-4000-8000-000000000004","uri":"/session/v1/device-sessions/00000000-0000-4000-8000-000000000004","user_id":"","access_key_id":"ak-1","status":"ended","booked_time":null,"booked_until_time":null,"start_time":"2026-03-01T14:41:00.000Z","end_time":"2026-03-01T14:42:00.000Z","fee":{"currency":"EUR","value":"0.00"},"payment":{"id":"00000000-0000-4000-8000-000000000008","status":"PAID"},"rating":null,"storage":{"location":{"id":"a4c12037-aef1-52b6-bbda-45f8e89b6376","uri":"/location/v1/locations/a4c12037-aef1-52b6-bbda-45f8e89b6376"},"device":{"id":"363f0082-ba3c-5548-8b51-310be06af14d","uri":"/device/v1/devices/363f0082-ba3c-5548-8b51-310be06af14d"}},"travel":null,"auxiliary_devices":[],"events":[{"name":"start","timestamp":"2026-03-01T14:41:00.000Z"},{"name":"end","timestamp":"2026-03-01T14:42:00.000Z"}]},{"id":"00000000-0000-4000-8000-000000000003","uri":"/session/v2/users/eeeeeeee-0000-4000-8000-000000000005/sessions/00000000-0000-4000-8000-000000000003","user_id":"eeeeeeee-0000-4000-8000-000000000005","access_key_id":null,"status":"booked","booked_time":"2026-03-01T13:00:00.000Z","booked_until_time":"2026-03-01T13:30:00.000Z","start_time":null,"end_time":null,"fee":null,"payment":null,"rating":null,"storage":{"location":{"id":"a4c12037-aef1-52b6-bbda-45f8e89b6376","uri":"/location/v1/locations/a4c12037-aef1-52b6-bbda-45f8e89b6376"},"device":{"id":"363f0082-ba3c-5548-8b51-310be06af14d","uri":"/device/v1/devices/363f0082-ba3c-5548-8b51-310be06af14d"}},"travel":null,"auxiliary_devices":[],"events":[{"name":"book","timestamp":"2026-03-01T13:00:00.000Z"}]}]}"`,
    );
    const next = { limit: 2, pagination_token: first.pagination_token ?? "" };
    expect(JSON.stringify(await sessions.listV2(client, next))).toMatchInlineSnapshot(
      `"{"pagination_token":null,"data":[{"id":"00000000-0000-4000-8000-000000000002","uri":"/session/v2/users/eeeeeeee-0000-4000-8000-000000000005/sessions/00000000-0000-4000-8000-000000000002","user_id":"eeeeeeee-0000-4000-8000-000000000005","access_key_id":null,"status":"active","booked_time":null,"booked_until_time":null,"start_time":"2026-03-01T11:21:00.000Z","end_time":null,"fee":null,"payment":null,"rating":null,"storage":{"location":{"id":"a4c12037-aef1-52b6-bbda-45f8e89b6376","uri":"/location/v1/locations/a4c12037-aef1-52b6-bbda-45f8e89b6376"},"device":{"id":"363f0082-ba3c-5548-8b51-310be06af14d","uri":"/device/v1/devices/363f0082-ba3c-5548-8b51-310be06af14d"}},"travel":null,"auxiliary_devices":[],"events":[{"name":"start","timestamp":"2026-03-01T11:21:00.000Z"}]},{"id":"00000000-0000-4000-8000-000000000001","uri":"/session/v2/users/eeeeeeee-0000-4000-8000-000000000005/sessions/00000000-0000-4000-8000-000000000001","user_id":"eeeeeeee-0000-4000-8000-000000000005","access_key_id":null,"status":"ended","booked_time":null,"booked_until_time":null,"start_time":"2026-03-01T09:41:00.000Z","end_time":"2026-03-01T10:55:00.000Z","fee":{"currency":"EUR","value":"4.00"},"payment":{"id":"00000000-0000-4000-8000-000000000007","status":"PENDING"},"rating":null,"storage":{"location":{"id":"a4c12037-aef1-52b6-bbda-45f8e89b6376","uri":"/location/v1/locations/a4c12037-aef1-52b6-bbda-45f8e89b6376"},"device":{"id":"363f0082-ba3c-5548-8b51-310be06af14d","uri":"/device/v1/devices/363f0082-ba3c-5548-8b51-310be06af14d"}},"travel":null,"auxiliary_devices":[],"events":[{"name":"start","timestamp":"2026-03-01T09:41:00.000Z"},{"name":"end","timestamp":"2026-03-01T10:55:00.000Z"}]}]}"`,
    );
    expect(JSON.stringify(await sessions.listV2(rider, { limit: 1 }))).toMatchInlineSnapshot(
      `"{"pagination_token":"eyJ2IjoxLCJjIjoiMjAyNi0wMy0wMVQxMzowMDowMC4wMDBaIiwiaSI6IjAwMDAwMDAwLTAwMDAtNDAwMC04MDAwLTAwMDAwMDAwMDAwMyIsImYiOiJHOVBCc3BhQmt1TmtISzJwIn0","data":[{"id":"00000000-0000-4000-8000-000000000003","uri":"/session/v2/users/eeeeeeee-0000-4000-8000-000000000005/sessions/00000000-0000-4000-8000-000000000003","user_id":"eeeeeeee-0000-4000-8000-000000000005","access_key_id":null,"status":"booked","booked_time":"2026-03-01T13:00:00.000Z","booked_until_time":"2026-03-01T13:30:00.000Z","start_time":null,"end_time":null,"fee":null,"payment":null,"rating":null,"storage":{"location":{"id":"a4c12037-aef1-52b6-bbda-45f8e89b6376","uri":"/location/v1/locations/a4c12037-aef1-52b6-bbda-45f8e89b6376"},"device":{"id":"363f0082-ba3c-5548-8b51-310be06af14d","uri":"/device/v1/devices/363f0082-ba3c-5548-8b51-310be06af14d"}},"travel":null,"auxiliary_devices":[],"events":[{"name":"book","timestamp":"2026-03-01T13:00:00.000Z"}]}]}"`,
    );
    expect(JSON.stringify(await sessions.listConsole(client, { limit: 1 }))).toMatchInlineSnapshot(
      `"{"pagination_token":"eyJ2IjoxLCJjIjoiMjAyNi0wMy0wMVQxNDo0MDowMC4wMDBaIiwiaSI6IjAwMDAwMDAwLTAwMDAtNDAwMC04MDAwLTAwMDAwMDAwMDAwNCIsImYiOiJLa25peEhweXIyblFIZEdIIn0","data":[{"id":"00000000-0000-4000-8000-000000000004","uri":"/session/v1/device-sessions/00000000-0000-4000-8000-000000000004","user_id":"","access_key_id":"ak-1","status":"ended","booked_time":null,"booked_until_time":null,"start_time":"2026-03-01T14:41:00.000Z","end_time":"2026-03-01T14:42:00.000Z","fee":{"currency":"EUR","value":"0.00"},"payment":{"id":"00000000-0000-4000-8000-000000000008","status":"PAID"},"rating":null,"storage":{"location":{"id":"a4c12037-aef1-52b6-bbda-45f8e89b6376","uri":"/location/v1/locations/a4c12037-aef1-52b6-bbda-45f8e89b6376"},"device":{"id":"363f0082-ba3c-5548-8b51-310be06af14d","uri":"/device/v1/devices/363f0082-ba3c-5548-8b51-310be06af14d"}},"travel":null,"auxiliary_devices":[],"events":[{"name":"start","timestamp":"2026-03-01T14:41:00.000Z"},{"name":"end","timestamp":"2026-03-01T14:42:00.000Z"}],"device_id":"363f0082-ba3c-5548-8b51-310be06af14d","location_id":"a4c12037-aef1-52b6-bbda-45f8e89b6376"}]}"`,
    );
  });
});

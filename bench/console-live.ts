/**
 * Console live update latency: a change applied to the store (a gateway's sensor report, applied as the
 * gateway link applies one) to its `location` event arriving on an open GET /console/api/live stream, over
 * 200 changes on SQLite. Each change waits a random part of the watch's poll period first, so the changes
 * fall anywhere in it rather than just after a poll. The real cloud app, its watch at its default pace.
 *   npm run bench:console-live            (CHANGES=200 by default)
 */
import pino from "pino";
import { hashSecret } from "../cloud/auth/secrets.ts";
import { DEFAULT_COMMAND_TIMEOUTS } from "../cloud/devices/timeouts.ts";
import { applyUpMessage } from "../cloud/gateway-link/apply-up-message.ts";
import { derivedId } from "../cloud/manifest/apply-manifest.ts";
import { createStaffService } from "../cloud/staff/staff-service.ts";
import { systemClock } from "../shared/node/system-clock.ts";
import { UpMessage } from "../shared/wire/messages.ts";
import { openSse } from "../test/support/sse.ts";
import { printRuntime } from "./runtime.ts";
import { benchDb, declareOperator, lockers, startCloud } from "./support.ts";
import { timeBox } from "./time-box.ts";

printRuntime();

const CHANGES = Number(process.env.CHANGES ?? 200);
const OPERATOR = "eeeeeeee-0000-4000-8000-000000000005";
const GATEWAY = "gw-live";
const PASSWORD = "a bench password";
const POLL_MS = 250;
const log = pino({ level: "silent" });

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};

const box = timeBox("bench:console-live");
const { db } = await benchDb();
const hash = await hashSecret("bench-secret");
await declareOperator(db, {
  id: OPERATOR,
  name: "Bench operator",
  locations: [
    {
      code: "V1",
      label: "Live lockers",
      type: "BIKE_LOCKERS",
      latitude: 52,
      longitude: 4,
      gateways: [{ id: GATEWAY, secret_hash: hash, devices: lockers(20) }],
    },
  ],
});
const locationId = derivedId(OPERATOR, "location", "V1");
const deviceId = derivedId(locationId, "device", "1");
const staff = createStaffService({ db, clock: systemClock, cost: { ln: 10, r: 8, p: 1 } });
await staff.create({
  email: "viewer@bench.example",
  role: "viewer",
  operatorId: OPERATOR,
  password: PASSWORD,
});
const { app, port } = await startCloud(db, { console: { live: { pollMs: POLL_MS } } });

box.step("signing in and opening the stream");
const signIn = await app.inject({
  method: "POST",
  url: "/console/api/session",
  payload: { email: "viewer@bench.example", password: PASSWORD },
});
const cookie = signIn.cookies.find((c) => c.name === "console_session")?.value;
const stream = await openSse(`http://127.0.0.1:${port}/console/api/live`, {
  cookie: `console_session=${cookie}`,
});
await stream.next((e) => e.event === "ready");

box.step(`applying ${CHANGES} changes`);
const latencies: number[] = [];
let version = 0;
for (let i = 1; i <= CHANGES; i++) {
  await new Promise((resolve) => setTimeout(resolve, Math.random() * POLL_MS));
  const at = performance.now();
  const msg = UpMessage.parse({
    type: "device_state",
    gateway_id: GATEWAY,
    seq: i,
    observed_at: new Date().toISOString(),
    device_id: deviceId,
    lock_state: i % 2 === 0 ? "LOCKED" : "UNLOCKED",
  });
  await applyUpMessage(db, GATEWAY, msg, { now: new Date(), timeouts: DEFAULT_COMMAND_TIMEOUTS, log });
  const seen = version;
  const event = await stream.next((e) => {
    const d = e.data as { id?: string; data_version?: number };
    return e.event === "location" && d.id === locationId && (d.data_version ?? 0) > seen;
  });
  latencies.push(performance.now() - at);
  version = (event.data as { data_version: number }).data_version;
}

console.log(`${CHANGES} changes, the watch polling every ${POLL_MS} ms, one stream, SQLite`);
console.log(
  `live update latency p50 ${pct(latencies, 50).toFixed(0)} ms, p99 ${pct(latencies, 99).toFixed(0)} ms`,
);
stream.close();
await app.close();
await db.destroy();
box.finished();

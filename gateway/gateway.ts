import type http from "node:http";
import path from "node:path";
import pino, { type Logger } from "pino";
import { maskCardId } from "../shared/domain/card-id.ts";
import { systemClock } from "../shared/node/system-clock.ts";
import type { Clock } from "../shared/time/clock.ts";
import type { AccessDecision, DeviceMap } from "../shared/wire/messages.ts";
import { createPhotoFiles } from "./adapters/files/photo-files.ts";
import { createMemoryGpioBank } from "./adapters/gpio/gpio-memory.ts";
import { createOnoffGpioBank } from "./adapters/gpio/gpio-onoff.ts";
import { HardwareActuator } from "./adapters/hardware/actuator.ts";
import { BusMonitor } from "./adapters/hardware/bus-monitor.ts";
import { GpioDoors } from "./adapters/hardware/gpio-doors.ts";
import { MqttBrokerLink, type MqttBrokerLinkOptions } from "./adapters/mqtt/broker-mqtt.ts";
import { createSerialLinkFactory } from "./adapters/serial/serial-links.ts";
import { openGatewayStore } from "./adapters/sqlite/gateway-store.ts";
import { controlSocketPath, type GatewayConfig } from "./config.ts";
import type { ControlApi } from "./control/control-api.ts";
import { createControlApi } from "./control/control-impl.ts";
import { startControlServer } from "./control/control-server.ts";
import { logTechnicianActions } from "./control/technician-log.ts";
import { DeviceRegistry } from "./devices/device-registry.ts";
import { OutboxSensorReadings } from "./devices/sensor-readings.ts";
import { doorRelocker, handleBoardEvent } from "./features/board-events.ts";
import { createBookingExpiry } from "./features/booking-expiry.ts";
import { createCardQueries } from "./features/card-query.ts";
import { createDoorWatch } from "./features/door-watch.ts";
import { createCommandExecutor } from "./features/execute-command.ts";
import { createTapHandler } from "./features/handle-tap.ts";
import { createHeartbeat } from "./features/heartbeat.ts";
import { createKeySync } from "./features/key-sync.ts";
import { createOutboxPump } from "./features/outbox-pump.ts";
import { createSensorReconciler } from "./features/reconcile-sensors.ts";
import { LockBusClient } from "./lock-bus/lock-bus-client.ts";
import { createMetrics, serveMetrics } from "./metrics.ts";
import type { BrokerLink, Camera, GpioBank, SerialLinkFactory } from "./ports.ts";
import { SleepAwareActuator } from "./power-save/sleep-aware-actuator.ts";
import { OutboxSleepStates } from "./power-save/sleep-states.ts";
import { ReaderPort } from "./rfid/reader.ts";

export type GatewayDeps = {
  config: GatewayConfig;
  secret: string;
  clock?: Clock;
  log?: Logger;
  /** Serial links by path; the default opens device paths and tcp:// URLs. */
  openLink?: SerialLinkFactory;
  gpio?: GpioBank;
  camera?: Camera | null;
  /** The broker link; the default is mqtt.js. A test may wrap the real one (e.g. to silence heartbeats). */
  brokerLink?: (options: MqttBrokerLinkOptions) => BrokerLink;
  /** false: no control socket (e.g. several gateways in one process sharing nothing but a state dir). */
  controlSocket?: boolean;
};

/** A running daemon, as its embedder (main.ts, the demo, a test harness) sees it. */
export type RunningGateway = {
  readonly config: GatewayConfig;
  readonly log: Logger;
  /** What parkctl sees and drives (status, devices, actuation, doctor), without going through the socket. */
  readonly control: ControlApi;
  /** Calls back on every card a reader delivers (normalised); returns the unsubscribe function. */
  onTap(listener: (reader: string, card: string) => void): () => void;
  /** Calls back on every tap decided, with what went to the outbox; returns the unsubscribe function. */
  onAccess(listener: (decision: AccessDecision) => void): () => void;
  /** Healthy while the store answers and every bus is open: what the systemd watchdog pings on. */
  isHealthy(): boolean;
  stop(): Promise<void>;
};

/**
 * Composition root of the gateway daemon, the one place that knows both the ports and their adapters:
 * builds every part from its config and the injected adapters, starts them in order
 * (store → hardware → broker → features) and stops them in reverse.
 */
export async function startGateway(deps: GatewayDeps): Promise<RunningGateway> {
  const cfg = deps.config;
  const clock = deps.clock ?? systemClock;
  // Every line carries the gateway id once: from this child, or from the child logger a caller passes.
  const log = deps.log ?? pino({ level: cfg.log_level }).child({ gateway_id: cfg.gateway_id });
  const openLink = deps.openLink ?? createSerialLinkFactory();
  const gpio =
    deps.gpio ??
    (cfg.gpio.driver === "onoff"
      ? createOnoffGpioBank(cfg.gpio.lines)
      : createMemoryGpioBank(Object.keys(cfg.gpio.lines)));
  const startedAt = clock.now();
  const metrics = createMetrics();

  const store = openGatewayStore(cfg.state_dir, { gatewayId: cfg.gateway_id, clock });
  const { outbox } = store;
  const registry = new DeviceRegistry();
  const stored = store.deviceMaps.load();
  if (stored) registry.replace(stored);
  // A locker seen unlocked, by whatever means, is no longer parked: its parker's card opens it no more.
  const sensors = new OutboxSensorReadings(outbox, clock, (id, latch) => {
    if (latch === "unlocked") store.parkedCards.clear(id);
  });
  const sleep = new OutboxSleepStates(outbox, log, cfg.remote_wakeup_ms);
  const doors = new GpioDoors(gpio, clock, cfg.door_release_s);
  doors.track(registry.all());

  const buses = cfg.buses.map((b) => {
    const client = new LockBusClient({
      name: b.name,
      path: b.path,
      baudRate: b.baud_rate,
      ackTimeoutMs: b.ack_timeout_ms,
      replyTimeoutMs: b.reply_timeout_ms,
      openLink,
      clock,
      log,
    });
    const monitor = new BusMonitor(client, b.boards, { clock, log, pollMs: cfg.heartbeat_interval_s * 1000 });
    client.on("discarded", (n) => metrics.discarded.inc({ bus: b.name }, n));
    return { cfg: b, client, monitor };
  });
  const busFor = (device: { bus: { board: number } | null }) =>
    buses.find((b) => device.bus && b.cfg.boards.includes(device.bus.board))?.client ?? null;
  // Power save: REMOTE_WAKEUP devices get longer bus deadlines; every answer (or silence) shows their sleep.
  const actuator = new SleepAwareActuator(
    new HardwareActuator(busFor, doors, clock, cfg.door_release_s, (device) => sleep.graceMs(device)),
    sleep,
    (addr) => buses.some((b) => b.monitor.isReachable(addr)),
  );
  const reconciler = createSensorReconciler({
    registry,
    sensors,
    actuator,
    clock,
    log,
    sweep: cfg.sensor_sweep,
  });
  /** A door lock engages again as soon as its door closes (spec rule 5), not only when its hold runs out. */
  const relockDoor = doorRelocker(actuator, sensors, log);
  for (const b of buses) {
    b.client.on("event", (e) =>
      handleBoardEvent(
        {
          outbox,
          registry,
          sensors,
          sleep,
          log,
          busName: b.cfg.name,
          relockDoor,
          readBoard: reconciler.readBoard,
        },
        e,
      ),
    );
    // Whatever happened to a board's channels while it was away (or before the start) is read again.
    b.monitor.on("board_back", (addr) => void reconciler.readBoard(addr));
  }
  doors.on("door", (device, open) => {
    outbox.append({
      type: "hardware_event",
      device_id: device.device_id,
      source: `gpio/${device.alias}`,
      event: open ? "door_opened" : "door_closed",
      detail: "",
    });
    sensors.record(device, { door_open: open }, "hardware_event");
  });
  doors.on("relocked", (device) => sensors.record(device, { latch: "locked" }, "door_relock"));

  const tapListeners = new Set<(reader: string, card: string) => void>();
  const accessListeners = new Set<(decision: AccessDecision) => void>();
  // Taps are decided once the broker link exists (a card the cache lacks is asked of the cloud).
  let decideTapOn: (reader: string, alias: string, card: string) => void = () => {};
  const readers = cfg.readers.map((r) => {
    const port = new ReaderPort(r.id, r.path, { baudRate: r.baud_rate, openLink, clock, log });
    port.on("tap", (card) => {
      metrics.taps.inc({ reader: r.id });
      log.debug({ reader: r.id, card: maskCardId(card) }, "card tapped");
      decideTapOn(r.id, r.device_alias, card);
      for (const l of [...tapListeners]) {
        try {
          l(r.id, card);
        } catch (err) {
          log.error({ err, reader: r.id }, "a tap listener failed");
        }
      }
    });
    const event = (event: "reader_lost" | "reader_back") =>
      outbox.append({
        type: "hardware_event",
        device_id: registry.byAliasName(r.device_alias)?.device_id ?? null,
        source: r.id,
        event,
        detail: "",
      });
    port.on("lost", () => event("reader_lost"));
    port.on("back", () => event("reader_back"));
    return { cfg: r, port };
  });

  const connectBroker = deps.brokerLink ?? ((options: MqttBrokerLinkOptions) => new MqttBrokerLink(options));
  const broker = connectBroker({
    url: cfg.broker.url,
    prefix: cfg.broker.prefix,
    gatewayId: cfg.gateway_id,
    password: deps.secret,
    clock,
    log,
  });
  const bookingExpiry = createBookingExpiry({ bookings: store.bookings, clock, log });
  const executor = createCommandExecutor({
    store,
    registry,
    actuator,
    camera: deps.camera ?? null,
    photos: createPhotoFiles(path.join(cfg.state_dir, "photos")),
    sensors,
    clock,
    log,
    onFinished: (name, ok) => metrics.commands.inc({ name, result: ok ? "success" : "error" }),
    onBookingsChanged: () => bookingExpiry.changed(),
    sleep,
  });
  const keySync = createKeySync({
    gatewayId: cfg.gateway_id,
    keys: store.keys,
    broker,
    clock,
    log,
    sweep: cfg.key_sweep,
  });
  const cardQueries = createCardQueries({
    gatewayId: cfg.gateway_id,
    broker,
    clock,
    timeoutMs: cfg.card_query_timeout_ms,
  });
  const taps = createTapHandler({
    store,
    registry,
    sensors,
    actuator,
    askCloud: cardQueries.askCloud,
    sleep,
    clock,
    log,
    onDecided: (m) => {
      metrics.accessDecisions.inc({ granted: String(m.granted), reason: m.reason, decided_by: m.decided_by });
      for (const l of [...accessListeners]) {
        try {
          l(m);
        } catch (err) {
          log.error({ err }, "an access listener failed");
        }
      }
    },
  });
  /** Taps being decided: a stop waits for them, so none is left half-recorded. */
  const tapsInFlight = new Set<Promise<unknown>>();
  decideTapOn = (reader, alias, card) => {
    const t = taps
      .handle(reader, alias, card)
      .catch((err: unknown) => log.error({ err, reader }, "tap not decided"));
    tapsInFlight.add(t);
    void t.finally(() => tapsInFlight.delete(t));
  };
  const pump = createOutboxPump({ outbox, broker, clock, log, resendAfterMs: cfg.outbox_resend_s * 1000 });
  const heartbeat = createHeartbeat({
    gatewayId: cfg.gateway_id,
    broker,
    registry,
    monitors: buses.map((b) => b.monitor),
    clock,
    intervalMs: cfg.heartbeat_interval_s * 1000,
    outbox,
  });
  // A board that answers again (or stops answering) is news the cloud should not wait an interval for.
  for (const b of buses) {
    b.monitor.on("board_back", () => heartbeat.beat());
    b.monitor.on("board_lost", () => heartbeat.beat());
  }

  const unrecorded = taps.recoverInterrupted();
  if (unrecorded > 0)
    log.warn(
      { taps: unrecorded },
      "taps interrupted by the last stop were reported with their outcome unknown",
    );
  const recovered = executor.recoverInterrupted();
  if (recovered > 0)
    log.warn({ commands: recovered }, "commands interrupted by the last stop were reported as failed");
  await Promise.all(buses.map((b) => b.client.start()));
  for (const b of buses) b.monitor.start();
  await Promise.all(readers.map((r) => r.port.start()));
  // GPIO doors have no board to come back: read them now.
  for (const device of registry.all())
    if (doors.has(device.device_id)) void reconciler.readDevice(device, "startup");
  reconciler.start();
  bookingExpiry.start();
  const doorWatch = createDoorWatch({
    registry,
    sensors,
    outbox,
    clock,
    log,
    heldOpenS: cfg.door_held_open_s,
    everyS: cfg.door_watch_s,
  });
  doorWatch.start();

  broker.on(
    "command",
    (req) => void executor.handle(req).catch((err: unknown) => log.error({ err }, "command failed")),
  );
  broker.on("deviceMap", (map: DeviceMap) => {
    if (map.version === registry.version) return;
    const before = new Map(registry.all().map((device) => [device.device_id, JSON.stringify(device)]));
    store.deviceMaps.save(map);
    registry.replace(map);
    doors.track(map.devices);
    log.info({ version: map.version, devices: map.devices.length }, "device map updated");
    // Devices this gateway drives for the first time (or wired differently) are read at once.
    const fresh = map.devices.filter((device) => before.get(device.device_id) !== JSON.stringify(device));
    for (const deviceId of before.keys()) if (!registry.get(deviceId)) sensors.forget(deviceId);
    for (const device of fresh) sensors.forget(device.device_id);
    for (const device of fresh) sleep.forget(device.device_id);
    void reconciler.readAll(fresh, "device_map");
    heartbeat.beat(); // the devices of a new map are reported at once
  });
  keySync.start();
  cardQueries.start();
  pump.start();
  heartbeat.start();
  broker.start();

  const refreshGauges = () => {
    const s = outbox.stats();
    metrics.outboxPending.set(s.pending);
    metrics.outboxOldestAge.set(s.oldest ? (clock.now().getTime() - Date.parse(s.oldest)) / 1000 : 0);
    metrics.brokerConnected.set(broker.connected ? 1 : 0);
    metrics.keysVersion.set(store.keys.version());
    for (const b of buses) {
      metrics.busOpen.set({ bus: b.cfg.name }, b.client.isOpen ? 1 : 0);
      for (const h of b.monitor.health())
        metrics.boardReachable.set({ bus: b.cfg.name, board: String(h.addr) }, h.reachable ? 1 : 0);
    }
    for (const r of readers) metrics.readerOpen.set({ reader: r.cfg.id }, r.port.isOpen ? 1 : 0);
  };
  let metricsServer: http.Server | null = null;
  if (cfg.metrics)
    metricsServer = await serveMetrics(metrics, cfg.metrics.host, cfg.metrics.port, refreshGauges);

  // parkctl's view of the daemon, handed exactly the parts it reads and drives.
  const control = logTechnicianActions(
    createControlApi({
      gatewayId: cfg.gateway_id,
      brokerUrl: cfg.broker.url,
      clock,
      startedAt,
      devices: registry,
      sensors,
      actuator,
      readDevice: reconciler.readDevice,
      store,
      broker,
      buses: buses.map((b) => ({ ...b, name: b.cfg.name, path: b.cfg.path, boards: b.cfg.boards })),
      readers: readers.map((r) => ({ id: r.cfg.id, path: r.cfg.path, port: r.port })),
      sleep,
    }),
    log,
  );
  // parkctl's door into the daemon; a technician can use it even while the cloud is unreachable.
  const controlServer =
    deps.controlSocket === false
      ? null
      : await startControlServer({ path: controlSocketPath(cfg), api: control, log });
  log.info({ buses: buses.length, readers: readers.length }, "gateway started");

  return {
    config: cfg,
    log,
    control,
    onTap(listener) {
      tapListeners.add(listener);
      return () => tapListeners.delete(listener);
    },
    onAccess(listener) {
      accessListeners.add(listener);
      return () => accessListeners.delete(listener);
    },
    isHealthy: () => store.isAnswering() && buses.every((b) => b.client.isOpen),
    async stop() {
      await controlServer?.close();
      reconciler.stop();
      bookingExpiry.stop();
      doorWatch.stop();
      heartbeat.stop();
      pump.stop();
      keySync.stop();
      cardQueries.stop();
      for (const b of buses) b.monitor.stop();
      await broker.stop();
      await Promise.all(readers.map((r) => r.port.stop()));
      await Promise.allSettled([...tapsInFlight]);
      await Promise.all(buses.map((b) => b.client.stop()));
      if (metricsServer) await new Promise<void>((r) => metricsServer?.close(() => r()));
      doors.close();
      gpio.close();
      store.close();
      log.info("gateway stopped");
    },
  };
}

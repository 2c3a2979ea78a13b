import type http from "node:http";
import path from "node:path";
import pino, { type Logger } from "pino";
import { systemClock, systemMonotonic } from "../shared/node/system-clock.ts";
import { packageVersion } from "../shared/node/version.ts";
import type { Clock, Monotonic } from "../shared/time/clock.ts";
import type { AccessDecision } from "../shared/wire/messages.ts";
import { createPhotoFiles } from "./adapters/files/photo-files.ts";
import { createMemoryGpioBank } from "./adapters/gpio/gpio-memory.ts";
import { createOnoffGpioBank } from "./adapters/gpio/gpio-onoff.ts";
import { HardwareActuator } from "./adapters/hardware/actuator.ts";
import { GpioDoors } from "./adapters/hardware/gpio-doors.ts";
import { busOf, createLockBuses } from "./adapters/hardware/lock-buses.ts";
import { MqttBrokerLink, type MqttBrokerLinkOptions } from "./adapters/mqtt/broker-mqtt.ts";
import { createSerialLinkFactory } from "./adapters/serial/serial-links.ts";
import { openGatewayStore } from "./adapters/sqlite/gateway-store.ts";
import { controlSocketPath, type GatewayConfig } from "./config.ts";
import type { ControlApi } from "./control/control-api.ts";
import { createControlApi } from "./control/control-impl.ts";
import { startControlServer } from "./control/control-server.ts";
import { logTechnicianActions } from "./control/technician-log.ts";
import { DeviceRegistry } from "./devices/device-registry.ts";
import { createDeviceTurns } from "./devices/device-turns.ts";
import { OutboxSensorReadings } from "./devices/sensor-readings.ts";
import { doorRelocker, watchBoardEvents } from "./features/board-events.ts";
import { createBookingExpiry } from "./features/booking-expiry.ts";
import { createCardQueries } from "./features/card-query.ts";
import { type CardReader, createCardReaders } from "./features/card-readers.ts";
import { createDeviceMapUpdate } from "./features/device-map-update.ts";
import { reportDoorEvents } from "./features/door-events.ts";
import { createDoorWatch } from "./features/door-watch.ts";
import { createCommandExecutor } from "./features/execute-command.ts";
import { createTapHandler } from "./features/handle-tap.ts";
import { createHeartbeat } from "./features/heartbeat.ts";
import { createKeySync } from "./features/key-sync.ts";
import { createFanOut } from "./features/listener-fan-out.ts";
import { countBusDiscards, gaugeRefresher } from "./features/metrics-feed.ts";
import { createOutboxPump } from "./features/outbox-pump.ts";
import { createSensorReconciler } from "./features/reconcile-sensors.ts";
import { recoverInterrupted } from "./features/recover-interrupted.ts";
import { createStoreSpace } from "./features/store-full.ts";
import { createTapDispatch } from "./features/tap-dispatch.ts";
import { createMetrics, type Metrics, serveMetrics } from "./metrics.ts";
import type { BrokerLink, Camera, GpioBank, SerialLinkFactory } from "./ports.ts";
import { SleepAwareActuator } from "./power-save/sleep-aware-actuator.ts";
import { OutboxSleepStates } from "./power-save/sleep-states.ts";
import { CloudClock } from "./time/cloud-clock.ts";

export type GatewayDeps = {
  config: GatewayConfig;
  secret: string;
  clock?: Clock;
  /** Elapsed time that the wall clock being set does not move; the default is the process's. */
  monotonic?: Monotonic;
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

/** What every part is built with. */
type Base = {
  cfg: GatewayConfig;
  clock: Clock;
  monotonic: Monotonic;
  cloudTime: CloudClock;
  log: Logger;
  metrics: Metrics;
  /** When this daemon started, on its injected clock (parkctl's uptime, the heartbeat's `runtime`). */
  startedAt: Date;
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
  const startedAt = clock.now();
  // Cloud deadlines and card expiry are judged on the cloud's clock, learnt from its messages.
  const monotonic = deps.monotonic ?? systemMonotonic;
  const cloudTime = new CloudClock({ clock, monotonic });
  const base: Base = { cfg, clock, monotonic, cloudTime, log, metrics: createMetrics(), startedAt };
  const { metrics } = base;
  const openLink = deps.openLink ?? createSerialLinkFactory();
  const hw = openHardware(deps, base, openLink);
  const { gpio, store, registry, doors, buses, reconciler } = hw;
  const connectBroker = deps.brokerLink ?? ((options: MqttBrokerLinkOptions) => new MqttBrokerLink(options));
  const { url, prefix } = cfg.broker;
  const broker = connectBroker({ url, prefix, gatewayId: cfg.gateway_id, password: deps.secret, clock, log });
  const tapListeners = createFanOut<[reader: string, card: string]>(log, "a tap listener failed");
  const accessListeners = createFanOut<[decision: AccessDecision]>(log, "an access listener failed");
  const features = createFeatures(base, hw, broker, deps.camera ?? null, (m) => accessListeners.emit([m]));
  const readers = createCardReaders(cfg.readers, {
    openLink,
    clock,
    log,
    outbox: store.outbox,
    registry,
    onTap: (reader, alias, card) => {
      metrics.taps.inc({ reader });
      features.tapDispatch.decide(reader, alias, card);
      tapListeners.emit([reader, card], { reader });
    },
  });

  recoverInterrupted(features.taps, features.executor, log);
  await Promise.all(buses.map((b) => b.client.start()));
  for (const b of buses) b.monitor.start();
  await Promise.all(readers.map((r) => r.port.start()));
  // GPIO doors have no board to come back: read them now.
  for (const device of registry.all())
    if (doors.has(device.device_id)) void reconciler.readDevice(device, "startup");
  reconciler.start();
  features.bookingExpiry.start();
  features.doorWatch.start();

  broker.on(
    "command",
    (req) => void features.executor.handle(req).catch((err: unknown) => log.error({ err }, "command failed")),
  );
  broker.on("deviceMap", features.updateDeviceMap);
  broker.on("session", () => cloudTime.sessionStarted());
  broker.on("cloudTime", (sentAt, fresh, echo) => cloudTime.observe(sentAt, fresh, echo));
  features.keySync.start();
  features.cardQueries.start();
  features.pump.start();
  features.heartbeat.start();
  broker.start();

  const { outbox, keys } = store;
  const refreshGauges = gaugeRefresher(metrics, { outbox, keys, clock, broker, buses, readers });
  const metricsServer: http.Server | null = cfg.metrics
    ? await serveMetrics(metrics, cfg.metrics.host, cfg.metrics.port, refreshGauges)
    : null;
  const control = logTechnicianActions(controlOf(base, hw, broker, readers), log);
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
    onTap: tapListeners.add,
    onAccess: accessListeners.add,
    isHealthy: () => store.isAnswering() && buses.every((b) => b.client.isOpen),
    async stop() {
      await controlServer?.close();
      reconciler.stop();
      features.bookingExpiry.stop();
      features.doorWatch.stop();
      features.heartbeat.stop();
      features.pump.stop();
      features.keySync.stop();
      features.cardQueries.stop();
      for (const b of buses) b.monitor.stop();
      features.executor.close();
      await broker.stop();
      cloudTime.stop();
      await Promise.all(readers.map((r) => r.port.stop()));
      await features.tapDispatch.settled();
      await features.executor.settled();
      await Promise.all(buses.map((b) => b.client.stop()));
      if (metricsServer) await new Promise<void>((r) => metricsServer.close(() => r()));
      doors.close();
      gpio.close();
      store.close();
      log.info("gateway stopped");
    },
  };
}

/**
 * The store and what drives the hardware: the device registry from the last map kept, the sensor and sleep
 * pictures, the GPIO doors and lock buses, the actuator over them, and the reconciler that reads them.
 */
function openHardware(
  deps: GatewayDeps,
  { cfg, clock, monotonic, cloudTime, log, metrics }: Base,
  openLink: SerialLinkFactory,
) {
  const gpio =
    deps.gpio ??
    (cfg.gpio.driver === "onoff"
      ? createOnoffGpioBank(cfg.gpio.lines)
      : createMemoryGpioBank(Object.keys(cfg.gpio.lines)));
  // What the full store refused goes in before anything later (set once the features exist).
  const owed = { flush: () => {} };
  const store = openGatewayStore(cfg.state_dir, {
    gatewayId: cfg.gateway_id,
    clock,
    cloudNow: () => cloudTime.cloudNow(),
    dating: { monotonic, at: (mono) => cloudTime.dateMono(mono) },
    owedFirst: () => owed.flush(),
  });
  const { outbox } = store;
  const registry = new DeviceRegistry();
  const stored = store.deviceMaps.load();
  if (stored) registry.replace(stored);
  // A locker seen unlocked, by whatever means, is no longer parked: its parker's card opens it no more.
  const unparked = (id: string, latch: string) => latch === "unlocked" && store.parkedCards.clear(id);
  const sensors = new OutboxSensorReadings(outbox, clock, unparked, monotonic);
  const sleep = new OutboxSleepStates(outbox, log, cfg.remote_wakeup_ms);
  const doors = new GpioDoors(gpio, clock, cfg.door_release_s);
  doors.track(registry.all());

  const pollMs = cfg.heartbeat_interval_s * 1000;
  const buses = createLockBuses(cfg.buses, { openLink, clock, log, pollMs });
  countBusDiscards(metrics, buses);
  // Power save: REMOTE_WAKEUP devices get longer bus deadlines; every answer (or silence) shows their sleep.
  const actuator = new SleepAwareActuator(
    new HardwareActuator(busOf(buses), doors, clock, cfg.door_release_s, (device) => sleep.graceMs(device)),
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
  watchBoardEvents(buses, {
    outbox,
    registry,
    sensors,
    sleep,
    log,
    relockDoor,
    readBoard: reconciler.readBoard,
  });
  reportDoorEvents(doors, { outbox, sensors, log });
  return { gpio, store, registry, sensors, sleep, doors, buses, actuator, reconciler, owed };
}

type Hardware = ReturnType<typeof openHardware>;

/** The daemon's features over the hardware and the broker link; none is started here. */
function createFeatures(
  { cfg, clock, monotonic, cloudTime, log, metrics, startedAt }: Base,
  hw: Hardware,
  broker: BrokerLink,
  camera: Camera | null,
  accessDecided: (decision: AccessDecision) => void,
) {
  const { store, registry, sensors, sleep, actuator } = hw;
  const { outbox } = store;
  const gatewayId = cfg.gateway_id;
  const retry = () => sensors.retryUntold();
  const storeSpace = createStoreSpace({ stateDir: cfg.state_dir, outbox, log, retry });
  hw.owed.flush = storeSpace.flush;
  const bookingExpiry = createBookingExpiry({ bookings: store.bookings, clock, cloudTime, log });
  // A command and a tap on one device take turns: each decides on what the other left.
  const turns = createDeviceTurns();
  const executor = createCommandExecutor({
    store,
    turns,
    devices: { registry, actuator, sensors, sleep },
    photos: { camera, files: createPhotoFiles(path.join(cfg.state_dir, "photos")) },
    clock,
    cloudTime,
    log,
    storeSpace,
    notify: {
      finished: (name, ok) => metrics.commands.inc({ name, result: ok ? "success" : "error" }),
      bookingsChanged: () => bookingExpiry.changed(),
    },
  });
  const sweep = cfg.key_sweep;
  const keySync = createKeySync({ gatewayId, keys: store.keys, broker, clock, cloudTime, log, sweep });
  const cardQueries = createCardQueries({ gatewayId, broker, clock, timeoutMs: cfg.card_query_timeout_ms });
  const taps = createTapHandler({
    store,
    turns,
    registry,
    sensors,
    actuator,
    sleep,
    clock,
    cloudTime,
    log,
    storeSpace,
    askCloud: cardQueries.askCloud,
    onDecided: (m) => {
      metrics.accessDecisions.inc({ granted: String(m.granted), reason: m.reason, decided_by: m.decided_by });
      accessDecided(m);
    },
  });
  const resendAfterMs = cfg.outbox_resend_s * 1000;
  const pump = createOutboxPump({ outbox, broker, clock, monotonic, log, resendAfterMs, cloudTime });
  const monitors = hw.buses.map((b) => b.monitor);
  const intervalMs = cfg.heartbeat_interval_s * 1000;
  const heartbeat = createHeartbeat({
    gatewayId,
    broker,
    registry,
    monitors,
    clock,
    intervalMs,
    outbox,
    cloudTime,
    storage: storeSpace.state,
    runtime: { version: packageVersion(), started_at: startedAt.toISOString() },
  });
  // A board that answers again (or stops answering) is news the cloud should not wait an interval for.
  for (const m of monitors)
    for (const e of ["board_back", "board_lost"] as const) m.on(e, () => heartbeat.beat());
  const doorWatch = createDoorWatch({
    registry,
    sensors,
    outbox,
    clock,
    monotonic,
    log,
    heldOpenS: cfg.door_held_open_s,
    everyS: cfg.door_watch_s,
  });
  const updateDeviceMap = createDeviceMapUpdate({
    maps: store.deviceMaps,
    registry,
    doors: hw.doors,
    sensors,
    sleep,
    log,
    readAll: hw.reconciler.readAll,
    beat: () => heartbeat.beat(),
  });
  const tapDispatch = createTapDispatch(taps, log);
  return {
    bookingExpiry,
    executor,
    keySync,
    cardQueries,
    taps,
    tapDispatch,
    pump,
    heartbeat,
    doorWatch,
    updateDeviceMap,
  };
}

/** parkctl's view of the daemon, handed exactly the parts it reads and drives. */
function controlOf(
  { cfg, clock, cloudTime, startedAt }: Base,
  hw: Hardware,
  broker: BrokerLink,
  readers: readonly CardReader[],
): ControlApi {
  return createControlApi({
    gateway: { id: cfg.gateway_id, brokerUrl: cfg.broker.url, startedAt, clock, cloudTime, broker },
    devices: {
      directory: hw.registry,
      sensors: hw.sensors,
      sleep: hw.sleep,
      actuator: hw.actuator,
      read: hw.reconciler.readDevice,
    },
    store: hw.store,
    buses: hw.buses.map((b) => ({ ...b, name: b.cfg.name, path: b.cfg.path, boards: b.cfg.boards })),
    readers: readers.map((r) => ({ id: r.cfg.id, path: r.cfg.path, port: r.port })),
  });
}

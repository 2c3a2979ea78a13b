import type { BrokerLink, BrokerLinkEvents } from "../../gateway/ports.ts";
import type { Heartbeat } from "../../shared/wire/messages.ts";

type Listener<E extends keyof BrokerLinkEvents> = (...args: BrokerLinkEvents[E]) => void;

/**
 * Sits between a running gateway and its broker link so a test can silence its heartbeats (a gateway
 * the cloud stops hearing from) and let them flow again, while everything else passes through.
 * The cloud tells it (`applied`) each heartbeat it has applied, so muting can wait for the last ones sent.
 */
export class HeartbeatValve {
  private muted = false;
  private passed = 0;
  private appliedCount = 0;
  private waiters: (() => void)[] = [];
  /** The last heartbeat let through to the broker. */
  last: Heartbeat | null = null;

  /**
   * Heartbeats stop reaching the broker (the gateway still runs and still sends its outbox). Resolves once
   * the cloud has applied every heartbeat let through before, so none lands after a clock jump that follows.
   */
  mute(): Promise<void> {
    this.muted = true;
    return this.drained();
  }

  /** Heartbeats flow again from the next interval on. */
  resume(): void {
    this.muted = false;
  }

  /** The cloud applied one heartbeat of this gateway. */
  applied(): void {
    this.appliedCount++;
    if (this.appliedCount < this.passed) return;
    for (const w of this.waiters.splice(0)) w();
  }

  private drained(): Promise<void> {
    if (this.appliedCount >= this.passed) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  around(inner: BrokerLink): BrokerLink {
    return {
      get connected() {
        return inner.connected;
      },
      get connectedSince() {
        return inner.connectedSince;
      },
      start: () => inner.start(),
      stop: () => inner.stop(),
      publishUp: (msg) => inner.publishUp(msg),
      publishKeysReport: (msg) => inner.publishKeysReport(msg),
      publishHeartbeat: (hb) => {
        if (this.muted || !inner.publishHeartbeat(hb)) return false;
        this.passed++;
        this.last = hb;
        return true;
      },
      on<E extends keyof BrokerLinkEvents>(event: E, listener: Listener<E>) {
        return inner.on(event, listener);
      },
      off<E extends keyof BrokerLinkEvents>(event: E, listener: Listener<E>) {
        return inner.off(event, listener);
      },
    };
  }
}

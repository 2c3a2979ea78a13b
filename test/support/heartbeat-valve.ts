import type { BrokerLink, BrokerLinkEvents } from "../../gateway/ports.ts";

type Listener<E extends keyof BrokerLinkEvents> = (...args: BrokerLinkEvents[E]) => void;

/**
 * Sits between a running gateway and its broker link so a test can silence its heartbeats (a gateway
 * the cloud stops hearing from) and let them flow again, while everything else passes through.
 */
export class HeartbeatValve {
  private muted = false;

  /** Heartbeats stop reaching the broker (the gateway still runs and still sends its outbox). */
  mute(): void {
    this.muted = true;
  }

  /** Heartbeats flow again from the next interval on. */
  resume(): void {
    this.muted = false;
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
      publishHeartbeat: (hb) => !this.muted && inner.publishHeartbeat(hb),
      on<E extends keyof BrokerLinkEvents>(event: E, listener: Listener<E>) {
        return inner.on(event, listener);
      },
      off<E extends keyof BrokerLinkEvents>(event: E, listener: Listener<E>) {
        return inner.off(event, listener);
      },
    };
  }
}

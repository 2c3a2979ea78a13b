import net from "node:net";

/**
 * A TCP proxy between the daemon and its broker that can hold every byte both ways while keeping the sockets
 * open (a stalled uplink). What it holds from the broker is kept to be looked at; when the broker's side
 * closes, the held bytes are dropped and the daemon's side is cut, as a broker that died mid-delivery leaves
 * it: whatever the broker had queued for the daemon never arrives.
 */
export async function startHoldProxy(upstreamUrl: string) {
  const up = new URL(upstreamUrl);
  let holding = false;
  /** Bytes from the broker held on every connection since `hold()`, in arrival order. */
  let heldDown: Buffer[] = [];
  const releases = new Set<() => void>();
  const sockets = new Set<net.Socket>();

  const server = net.createServer((client) => {
    const broker = net.connect(Number(up.port), up.hostname);
    sockets.add(client).add(broker);
    const pendingUp: Buffer[] = [];
    const pendingDown: Buffer[] = [];
    const flush = () => {
      for (const b of pendingUp.splice(0)) broker.write(b);
      for (const b of pendingDown.splice(0)) client.write(b);
    };
    releases.add(flush);
    client.on("data", (b: Buffer) => (holding ? pendingUp.push(b) : broker.write(b)));
    broker.on("data", (b: Buffer) => {
      if (!holding) return client.write(b);
      pendingDown.push(b);
      heldDown.push(b);
    });
    const close = () => {
      releases.delete(flush);
      pendingUp.length = 0;
      pendingDown.length = 0;
      client.destroy();
      broker.destroy();
      sockets.delete(client);
      sockets.delete(broker);
    };
    client.on("close", close).on("error", close);
    broker.on("close", close).on("error", close);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    /** Stops moving bytes both ways on every connection, keeping them open. */
    hold() {
      holding = true;
      heldDown = [];
    },
    /** Moves bytes again, first those held on connections still open. */
    release() {
      holding = false;
      for (const flush of releases) flush();
    },
    /** Resets every connection (what either side held is lost); new ones are accepted, held if holding. */
    cut() {
      for (const s of sockets) s.destroy();
    },
    /** What the broker sent towards the daemon while held (latin1, so topics and JSON read as text). */
    heldFromBroker: () => Buffer.concat(heldDown).toString("latin1"),
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type HoldProxy = Awaited<ReturnType<typeof startHoldProxy>>;

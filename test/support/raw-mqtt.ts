import { readFileSync } from "node:fs";
import net from "node:net";

/**
 * MQTT 3.1.1 packets written by hand, for clients that misbehave in ways mqtt.js will not (a QoS 2
 * PUBLISH never released with PUBREL), and a socket to send them on.
 */

/** MQTT's remaining-length varint. */
export function varint(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return out;
}

/** A UTF-8 string as MQTT writes it: two bytes of length, then the bytes. */
function str(s: string): Buffer {
  const b = Buffer.from(s, "utf8");
  return Buffer.concat([Buffer.from([b.length >> 8, b.length & 0xff]), b]);
}

/** A CONNECT with user name and password, keepalive 60 s. */
export function connectPacket(o: {
  clientId: string;
  username: string;
  password: string;
  clean: boolean;
}): Buffer {
  const flags = 0x80 | 0x40 | (o.clean ? 0x02 : 0);
  const body = Buffer.concat([
    str("MQTT"),
    Buffer.from([4, flags, 0, 60]),
    str(o.clientId),
    str(o.username),
    str(o.password),
  ]);
  return Buffer.concat([Buffer.from([0x10, ...varint(body.length)]), body]);
}

/** A PUBLISH of `payload` on `topic`; QoS 1 and 2 carry `messageId`. */
export function publishPacket(topic: string, payload: Buffer, qos: 0 | 1 | 2, messageId = 1): Buffer {
  const id = qos > 0 ? Buffer.from([messageId >> 8, messageId & 0xff]) : Buffer.alloc(0);
  const head = Buffer.concat([str(topic), id]);
  return Buffer.concat([
    Buffer.from([0x30 | (qos << 1), ...varint(head.length + payload.length)]),
    head,
    payload,
  ]);
}

export type RawSession = {
  socket: net.Socket;
  /** Bytes the broker sent after the CONNACK. */
  received(): Buffer;
  /** Resolves once the broker has sent at least `n` bytes after the CONNACK. */
  receivedAtLeast(n: number): Promise<Buffer>;
  /** Resolves when the socket has closed; `byBroker` unless we ended it first. */
  closed: Promise<{ byBroker: boolean }>;
  /** Ends our side, if the broker has not closed it. */
  end(): void;
};

/** Connects and logs in; resolves once CONNACK 0 has arrived, rejects with its code otherwise. */
export async function rawLogin(
  port: number,
  login: { clientId: string; username: string; password: string; clean: boolean },
): Promise<RawSession> {
  const socket = net.createConnection({ host: "127.0.0.1", port, noDelay: true });
  socket.on("error", () => {}); // writes after the broker closed fail: the close says what happened
  let ended = false;
  let buffered = Buffer.alloc(0);
  const closed = new Promise<{ byBroker: boolean }>((resolve) =>
    socket.once("close", () => resolve({ byBroker: !ended })),
  );
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 4) return;
      socket.off("data", onData);
      if (buffered[0] !== 0x20 || buffered[3] !== 0) reject(new Error(`CONNACK ${buffered[3]}`));
      else resolve();
      buffered = buffered.subarray(4);
      socket.on("data", (more: Buffer) => {
        buffered = Buffer.concat([buffered, more]);
      });
    };
    socket.on("data", onData);
    void closed.then(() => reject(new Error("closed before CONNACK")));
    socket.once("connect", () => socket.write(connectPacket(login)));
  });
  return {
    socket,
    received: () => buffered,
    receivedAtLeast: (n) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (buffered.length < n) return;
          socket.off("data", check);
          resolve(buffered);
        };
        socket.on("data", check);
        void closed.then(() => reject(new Error(`closed after ${buffered.length} of ${n} bytes`)));
        check();
      }),
    closed,
    end() {
      ended = true;
      socket.end();
    },
  };
}

/** RSS of a process in MB, from /proc. */
export function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;
}

/** Just under the 256 KB packet limit, as the audit sent them: 1,800 of these took the cloud to 795 MB. */
const HOARDED = Buffer.alloc(200 * 1024, 0x61);

/**
 * A gateway credential hoarding QoS 2 messages: `connections` logins with a persistent session (client
 * id = user name), each sending `perConnection` QoS 2 PUBLISHes of 200 KB on `topic` (fresh message ids)
 * and never a PUBREL. What came back: PUBRECs, and how many connections the broker closed itself.
 */
export async function hoardQos2(
  port: number,
  who: { username: string; password: string; topic: string },
  connections: number,
  perConnection: number,
) {
  let pubrecs = 0;
  let closedByBroker = 0;
  let id = 0;
  for (let c = 0; c < connections; c++) {
    const s = await rawLogin(port, {
      clientId: who.username,
      username: who.username,
      password: who.password,
      clean: false,
    });
    for (let i = 0; i < perConnection; i++)
      s.socket.write(publishPacket(who.topic, HOARDED, 2, (id++ % 65_535) + 1));
    // A broker that took them all answers each with a PUBREC and waits for PUBRELs that never come:
    // our side ends then. One that refuses QoS 2 closes the connection first.
    const acknowledgedAll = s.receivedAtLeast(4 * perConnection).then(
      () => s.end(),
      () => {},
    );
    const { byBroker } = await s.closed;
    await acknowledgedAll;
    if (byBroker) closedByBroker++;
    // Nothing but 4-byte PUBRECs can follow the CONNACK here (no subscriptions).
    pubrecs += s.received().length / 4;
  }
  return { pubrecs, closedByBroker, sent: id };
}

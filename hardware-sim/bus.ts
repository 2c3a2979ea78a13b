/**
 * Several lock boards on one multi-drop line (RS-485 style): every board hears every host byte and picks
 * out its own address; each board's frame goes onto the line as one write, so two boards' frames never
 * interleave byte by byte.
 */
import type { Duplex } from "node:stream";
import type { Connector, LinkEndpoint } from "./links.ts";
import { writeTo } from "./links.ts";
import type { LockBoard } from "./lock-controller.ts";

export class LockBus implements LinkEndpoint {
  private readonly byAddress = new Map<number, LockBoard>();
  private link: Duplex | null = null;
  private connector: Connector | null = null;

  constructor(
    readonly name: string,
    boards: readonly LockBoard[] = [],
  ) {
    for (const b of boards) this.add(b);
  }

  get boards(): LockBoard[] {
    return [...this.byAddress.values()];
  }

  /** The board at `address`; throws if none is on this bus. */
  board(address: number): LockBoard {
    const b = this.byAddress.get(address);
    if (!b) throw new Error(`no board ${address} on bus ${this.name}`);
    return b;
  }

  add(board: LockBoard): void {
    if (this.byAddress.has(board.address))
      throw new Error(`bus ${this.name} already has board ${board.address}`);
    this.byAddress.set(board.address, board);
    if (this.link) this.connectBoard(board, this.link);
  }

  attach(link: Duplex): void {
    this.detach();
    this.link = link;
    link.on("data", this.onData);
    link.on("error", ignore);
    for (const b of this.byAddress.values()) this.connectBoard(b, link);
  }

  detach(): void {
    this.link?.off("data", this.onData);
    this.link = null;
    for (const b of this.byAddress.values()) b.disconnect();
  }

  /** Sets how this bus reaches the host and plugs it in (see links.ts connectors). */
  async plugInto(connector: Connector): Promise<void> {
    await this.connector?.disconnect();
    this.connector = connector;
    await connector.connect(this);
  }

  /** Pulls the bus cable: the host's link closes. */
  async unplug(): Promise<void> {
    await this.connector?.disconnect();
  }

  /** Plugs the cable back in through the same connector. */
  async plugIn(): Promise<void> {
    if (!this.connector) throw new Error(`bus ${this.name} has no connector`);
    await this.connector.connect(this);
  }

  close(): Promise<void> {
    for (const b of this.byAddress.values()) b.close();
    return this.unplug();
  }

  private connectBoard(board: LockBoard, link: Duplex): void {
    board.connect((bytes) => writeTo(link, bytes));
  }

  private readonly onData = (chunk: Buffer) => {
    for (const b of this.byAddress.values()) b.receive(chunk);
  };
}

function ignore(): void {}

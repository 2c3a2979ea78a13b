import type { CommandRequest } from "../shared/wire/messages.ts";
import type { CommandRecord } from "./store/command-record.ts";

/** How the cloud reaches gateways (owned by the cloud; the MQTT adapter implements it). */
export interface GatewayPublisher {
  /** Resolves once the broker has acknowledged the message (QoS 1 PUBACK). */
  publishCommand(gatewayId: string, request: CommandRequest): Promise<void>;
  /**
   * Tells a gateway which outbox sequence numbers of outbox `outboxId` ("" : messages that named none) have
   * been applied and may be deleted.
   */
  ack(gatewayId: string, seqs: number[], outboxId?: string): Promise<void>;
  /** The key sets of these gateways changed (whitelists): bring them up to date, without waiting. */
  keysChanged(gatewayIds: string[]): void;
}

/**
 * Where the cloud says, once it is committed, that a command may have ended (SUCCESS or ERROR), so that
 * requests waiting on it (`Prefer: wait`) answer at once. A notice may carry the command as the ending
 * committed it (`ended`): a waiter that has already read the command once (so knows its caller may see
 * it) answers with that, without reading it again. A notice without it is a hint: the waiter reads the
 * store, which is also how it learns of endings another replica wrote. In-process implementation:
 * cloud/commands/command-settled.ts.
 */
export interface CommandSettledNotifier {
  notify(commandId: string, ended?: CommandRecord): void;
  /** Calls `onNotice` on each notice about `commandId` until the returned function is called. */
  subscribe(commandId: string, onNotice: (ended?: CommandRecord) => void): () => void;
}

import type { CommandEvent } from "../../shared/api/command.ts";
import {
  type CommandInput,
  type CommandState,
  type CommandTimeouts,
  transitionCommand,
} from "../../shared/domain/command-machine.ts";
import { onCommandSucceeded } from "../sessions/session-recorder.ts";
import type { CommandRecord } from "../store/command-record.ts";
import type { Executor } from "../store/db.ts";
import { commandRepository } from "./command-repository.ts";

const MAX_CAS_ATTEMPTS = 5;

export type CommandStep = {
  commandId: string;
  /**
   * The command as the caller has just read or written it in this transaction, if it has: the first try
   * starts from it instead of reading it again (a lost compare-and-set reads it afresh all the same).
   */
  known?: CommandRecord;
  input: CommandInput;
  now: Date;
  /**
   * When the hardware did what the step records, on the cloud's clock (a gateway's fact time, `factTime`);
   * `now` when not given. The sessions' events take it: a report that waited out a partition dates them.
   */
  happenedAt?: string;
  cfg: CommandTimeouts;
  /** The events the step adds, given the state it leads to. */
  events: (next: CommandState) => CommandEvent[];
};

/**
 * Moves a command one step through its machine with a compare-and-set on its state; a lost race reads
 * the command again and lets the machine decide on what is there now.
 * Returns the command as written, or null when the input did not apply.
 */
export async function advanceCommand(tx: Executor, step: CommandStep): Promise<CommandRecord | null> {
  const commands = commandRepository(tx);
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    const current = attempt === 0 && step.known ? step.known : await commands.find(step.commandId);
    if (!current) return null;
    const next = transitionCommand(current.state, step.input, step.now, step.cfg);
    if (!next) return null;
    const written = await commands.compareAndSet(current, next, step.events(next), step.now);
    if (!written) continue;
    // The one place a command reaches SUCCESS: what it means for sessions is recorded with it.
    if (written.state.value === "SUCCESS") await onCommandSucceeded(tx, written, step.now, step.happenedAt);
    return written;
  }
  throw new Error(`command ${step.commandId}: too much contention`);
}

import { availableParallelism } from "node:os";

/** Prints what the figures are measured on, first thing in every runner: they move with Node's major. */
export function printRuntime(): void {
  console.log(
    `Node ${process.version} on ${process.platform}-${process.arch}, ${availableParallelism()} cores`,
  );
}

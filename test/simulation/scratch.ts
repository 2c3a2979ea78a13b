import { existsSync } from "node:fs";
import { tmpdir } from "node:os";

/**
 * Where a run keeps its files: memory-backed when the host has /dev/shm, so the stores' fsyncs cost no
 * disk time (durability across a power cut is not what a run checks; a killed daemon's files are).
 */
export const SCRATCH = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();

import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";

/**
 * scrypt as a promise, looked up at each call (not bound once at load like `promisify`), so the seeded
 * simulation's synchronous stand-in is the one that runs (docs/simulation.md).
 */
const scryptAsync = (secret: string, salt: Buffer, len: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scrypt(secret, salt, len, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );

/** scrypt's cost: N = 2^ln, block size r, parallelism p. */
export type ScryptCost = { ln: number; r: number; p: number };
export const DEFAULT_COST: ScryptCost = { ln: 14, r: 8, p: 1 };
const KEY_LEN = 32;
// Bounds on a cost read from a stored hash: never weaker than 2^10, never more memory than 2^16 × r 8 (64 MiB).
const MIN_LN = 10;
const MAX_MEMORY = 128 * 2 ** 16 * 8;

const costPart = (c: ScryptCost) => `ln=${c.ln},r=${c.r},p=${c.p}`;

function parseCost(part: string): ScryptCost | null {
  const m = /^ln=(\d+),r=(\d+),p=(\d+)$/.exec(part);
  if (!m) return null;
  const [ln, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (ln < MIN_LN || r < 1 || p < 1 || p > 16 || 128 * 2 ** ln * r > MAX_MEMORY) return null;
  return { ln, r, p };
}

const run = (secret: string, salt: Buffer, len: number, c: ScryptCost) =>
  scryptAsync(secret, salt, len, { N: 2 ** c.ln, r: c.r, p: c.p, maxmem: 2 * MAX_MEMORY });

/**
 * Secrets are stored only as salted scrypt hashes: `scrypt$<salt b64>$<hash b64>` at the default cost, or
 * `scrypt$ln=…,r=…,p=…$<salt b64>$<hash b64>` when hashed at another one (the cost travels with the hash,
 * so it can be raised later without invalidating what is stored).
 */
export async function hashSecret(secret: string, cost: ScryptCost = DEFAULT_COST): Promise<string> {
  const salt = randomBytes(16);
  const hash = await run(secret, salt, KEY_LEN, cost);
  const tail = `${salt.toString("base64")}$${hash.toString("base64")}`;
  const same = cost.ln === DEFAULT_COST.ln && cost.r === DEFAULT_COST.r && cost.p === DEFAULT_COST.p;
  return same ? `scrypt$${tail}` : `scrypt$${costPart(cost)}$${tail}`;
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  if (parts[0] !== "scrypt" || (parts.length !== 3 && parts.length !== 4)) return false;
  const cost = parts.length === 4 ? parseCost(parts[1] as string) : DEFAULT_COST;
  const [saltB64, hashB64] = parts.slice(-2) as [string, string];
  if (!cost || !saltB64 || !hashB64) return false;
  const expected = Buffer.from(hashB64, "base64");
  if (expected.length === 0) return false;
  const actual = await run(secret, Buffer.from(saltB64, "base64"), expected.length, cost);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

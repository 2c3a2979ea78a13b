import { describe, expect, it } from "vitest";
import { DEFAULT_COST, hashSecret, verifySecret } from "./secrets.ts";

describe("stored secrets", () => {
  it("hashes at the default cost in the three-part form, salted, and verifies only the right secret", async () => {
    const a = await hashSecret("s3cret");
    const b = await hashSecret("s3cret");
    expect(a.split("$")).toHaveLength(3);
    expect(a).not.toBe(b); // a salt of its own
    expect(await verifySecret("s3cret", a)).toBe(true);
    expect(await verifySecret("s3cret!", a)).toBe(false);
    expect(DEFAULT_COST).toEqual({ ln: 14, r: 8, p: 1 });
  });

  it("carries another cost in the hash and verifies at that cost", async () => {
    const h = await hashSecret("s3cret", { ln: 10, r: 8, p: 1 });
    expect(h).toMatch(/^scrypt\$ln=10,r=8,p=1\$[^$]+\$[^$]+$/);
    expect(await verifySecret("s3cret", h)).toBe(true);
    expect(await verifySecret("other", h)).toBe(false);
    // The same salt and hash read at the default cost do not match: the cost is part of the hash.
    const [, , salt, hash] = h.split("$");
    expect(await verifySecret("s3cret", `scrypt$${salt}$${hash}`)).toBe(false);
  });

  it("refuses a stored cost below the floor or above the memory bound, and malformed hashes", async () => {
    const h = await hashSecret("s3cret", { ln: 10, r: 8, p: 1 });
    const [, , salt, hash] = h.split("$");
    for (const cost of [
      "ln=9,r=8,p=1",
      "ln=17,r=8,p=1",
      "ln=16,r=9,p=1",
      "ln=10,r=8,p=17",
      "ln=10,r=0,p=1",
      "x",
    ])
      expect(await verifySecret("s3cret", `scrypt$${cost}$${salt}$${hash}`)).toBe(false);
    for (const bad of ["", "scrypt", "bcrypt$a$b", `scrypt$${salt}$`, `scrypt$a$b$c$d`])
      expect(await verifySecret("s3cret", bad)).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import { closest, didYouMean, editDistance } from "./did-you-mean.ts";

describe("did you mean", () => {
  it("counts insertions, deletions, substitutions and swapped neighbours as one edit each", () => {
    expect(editDistance("channel", "chanel")).toBe(1);
    expect(editDistance("secret_env", "secrte_env")).toBe(1);
    expect(editDistance("attrs", "atrs")).toBe(1);
    expect(editDistance("lock", "lock")).toBe(0);
    expect(editDistance("", "abc")).toBe(3);
  });

  it("offers the closest key within a third of the word, ignoring case, '-' and '_'", () => {
    const keys = ["client_id", "name", "permissions", "secret", "secret_env", "secret_hash"];
    expect(closest("permisions", keys)).toBe("permissions");
    expect(closest("secretEnv", keys)).toBe("secret_env");
    expect(closest("CLIENT-ID", keys)).toBe("client_id");
    expect(closest("colour", ["code", "label", "type"])).toBeNull();
    expect(didYouMean("LOCKR", ["LOCKER", "DOOR"])).toBe(' (did you mean "LOCKER"?)');
    expect(didYouMean("zzz", ["LOCKER", "DOOR"])).toBe("");
  });
});

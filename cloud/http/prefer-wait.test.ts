import { describe, expect, it } from "vitest";
import { MAX_WAIT_SECONDS, waitPreference } from "./prefer-wait.ts";

describe("waitPreference (RFC 7240 Prefer: wait)", () => {
  it.each([
    ["wait=5", 5],
    ["Wait=5", 5],
    ["wait = 10", 10],
    ['wait="7"', 7],
    ["wait=05", 5],
    ["wait=3;foo=bar", 3],
    ["respond-async, wait=5", 5],
    ["wait=5, respond-async", 5],
    ["handling=lenient,, wait=2", 2],
    ['foo="a,wait=3", wait=4', 4],
    ["wait=5, wait=10", 5],
    ["wait=30", 30],
  ])("reads %j as %i s", (header, seconds) => {
    expect(waitPreference(header)).toBe(seconds);
  });

  it("cuts a longer wait to the maximum", () => {
    expect(waitPreference("wait=31")).toBe(MAX_WAIT_SECONDS);
    expect(waitPreference("wait=3600")).toBe(MAX_WAIT_SECONDS);
    expect(waitPreference(`wait=${"9".repeat(400)}`)).toBe(MAX_WAIT_SECONDS);
  });

  it.each([
    [undefined],
    [""],
    ["respond-async"],
    ["waiting=5"],
    ["wait"],
    ["wait="],
    ["wait=0"],
    ["wait=-1"],
    ["wait=5.5"],
    ["wait=abc"],
    ["wait=5s"],
    ['wait="5'],
    // A parameter of another preference, not a preference of its own.
    ["respond-async; wait=9"],
    // Only the first `wait` counts; an invalid one is ignored, not replaced by the next.
    ["wait=abc, wait=5"],
  ])("asks no wait in %j", (header) => {
    expect(waitPreference(header)).toBeNull();
  });

  it("reads a header sent more than once as one list", () => {
    expect(waitPreference(["respond-async", "wait=8"])).toBe(8);
  });
});

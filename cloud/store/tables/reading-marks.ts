/** The sensor fields whose order matters: each keeps the value of the latest report that carried it. */
export const ORDERED_FIELDS = ["lock_state", "door_open", "item_present", "sleep_state"] as const;
export type OrderedField = (typeof ORDERED_FIELDS)[number];

/**
 * Per device (`devices.sensor_marks`): the seq of the last report applied for each field, within one
 * source (cloud/devices/reading-order.ts).
 */
export type ReadingMarks = {
  source: string;
  seq: Partial<Record<OrderedField, number>>;
  /**
   * The seq of the latest report that found the latch open, stale or not: a card's parking applied after
   * it, and earlier in outbox order, was over before the cloud heard of it.
   */
  opened?: number;
};

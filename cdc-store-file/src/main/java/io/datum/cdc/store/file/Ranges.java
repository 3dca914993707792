package io.datum.cdc.store.file;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/** Converts between a set of event indexes and its list of inclusive ranges. */
final class Ranges {

  private Ranges() {}

  /**
   * Returns the set bits as ascending, disjoint, non-adjacent inclusive ranges {@code [from, to]}.
   *
   * @param bits the event indexes
   * @return the ranges, one per run of set bits
   */
  static List<int[]> of(BitSet bits) {
    List<int[]> ranges = new ArrayList<>();
    for (int from = bits.nextSetBit(0); from >= 0; ) {
      int end = bits.nextClearBit(from); // exclusive
      ranges.add(new int[] {from, end - 1});
      from = bits.nextSetBit(end);
    }
    return ranges;
  }

  /**
   * Returns the indexes the ranges cover.
   *
   * @param ranges ascending, disjoint inclusive ranges within {@code [0, count)}
   * @param count the transaction's event count, at least 1
   * @return the set of indexes
   * @throws IllegalArgumentException if a range is not two numbers, is reversed, out of {@code [0,
   *     count)}, or does not start after the previous one ends
   */
  static BitSet toBitSet(List<int[]> ranges, int count) {
    BitSet bits = new BitSet();
    long previousEnd = -1;
    for (int i = 0; i < ranges.size(); i++) {
      int[] range = ranges.get(i);
      if (range == null || range.length != 2) {
        throw new IllegalArgumentException(
            "range " + i + " must be two event indexes [from, to], found " + describe(range));
      }
      int from = range[0];
      int to = range[1];
      if (from < 0 || to >= count || from > to) {
        throw new IllegalArgumentException(
            "range " + i + " [" + from + ", " + to + "] is out of bounds for event_count " + count);
      }
      if (from <= previousEnd) {
        throw new IllegalArgumentException(
            "range " + i + " [" + from + ", " + to + "] overlaps or precedes the range before it");
      }
      bits.set(from, to + 1);
      previousEnd = to;
    }
    return bits;
  }

  private static String describe(int[] range) {
    return range == null ? "null" : java.util.Arrays.toString(range);
  }
}

package io.datum.cdc.store.file;

import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.PgLsn;
import java.util.ArrayList;
import java.util.List;

/** Converts between a set of event indexes and its list of inclusive ranges. */
final class Ranges {

  private Ranges() {}

  /**
   * Returns a transaction's acknowledged events as ascending, disjoint, non-adjacent inclusive
   * ranges {@code [from, to]}, the file format's form.
   *
   * @param tx the transaction
   * @return the ranges, one per run of acknowledged events
   */
  static List<int[]> of(PartialTransaction tx) {
    int[] halfOpen = tx.acknowledgedRanges();
    List<int[]> ranges = new ArrayList<>(halfOpen.length / 2);
    for (int i = 0; i < halfOpen.length; i += 2) {
      ranges.add(new int[] {halfOpen[i], halfOpen[i + 1] - 1});
    }
    return ranges;
  }

  /**
   * Returns the transaction the ranges describe.
   *
   * @param end the transaction's end LSN
   * @param count the transaction's event count, at least 1
   * @param ranges ascending, disjoint inclusive ranges within {@code [0, count)}
   * @return the transaction
   * @throws IllegalArgumentException if a range is not two numbers, is reversed, out of {@code [0,
   *     count)}, or does not start after the previous one ends
   */
  static PartialTransaction toTransaction(PgLsn end, int count, List<int[]> ranges) {
    int[] halfOpen = new int[ranges.size() * 2];
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
      halfOpen[2 * i] = from;
      halfOpen[2 * i + 1] = to + 1;
      previousEnd = to;
    }
    return PartialTransaction.ofRanges(end, count, halfOpen);
  }

  private static String describe(int[] range) {
    return range == null ? "null" : java.util.Arrays.toString(range);
  }
}

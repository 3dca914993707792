package io.datum.cdc.testkit;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.PgLsn;
import java.util.Arrays;

/** Checkpoint values for tests, written as the event indexes they acknowledge. */
public final class Checkpoints {

  private Checkpoints() {}

  /**
   * Returns a partial transaction with the given events acknowledged.
   *
   * @param txEndLsn the transaction's end LSN
   * @param eventCount its event count, at least 1
   * @param acknowledged acknowledged event indexes, in any order, duplicates allowed
   * @return the partial transaction ({@link PartialTransaction#ofRanges} of the indexes' runs)
   * @throws IllegalArgumentException if {@code eventCount < 1} or an index is outside {@code [0,
   *     eventCount)}
   */
  public static PartialTransaction partial(PgLsn txEndLsn, int eventCount, int... acknowledged) {
    return PartialTransaction.ofRanges(txEndLsn, eventCount, ranges(acknowledged));
  }

  /**
   * Returns the runs of consecutive indexes as ranges, the form {@link
   * CdcCheckpoint.PartialTransaction#ofRanges} takes.
   *
   * @param indexes event indexes, in any order, duplicates allowed
   * @return {@code from0, to0, from1, to1, ...}: half-open, ascending, disjoint, not adjacent
   */
  public static int[] ranges(int... indexes) {
    int[] sorted = Arrays.stream(indexes).sorted().distinct().toArray();
    int[] ranges = new int[sorted.length * 2];
    int n = 0;
    for (int i = 0; i < sorted.length; i++) {
      if (n > 0 && ranges[n - 1] == sorted[i]) {
        ranges[n - 1]++;
      } else {
        ranges[n++] = sorted[i];
        ranges[n++] = sorted[i] + 1;
      }
    }
    return Arrays.copyOf(ranges, n);
  }
}

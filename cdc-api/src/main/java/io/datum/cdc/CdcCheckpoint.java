package io.datum.cdc;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * What a {@link CdcCheckpointStore} keeps for one slot: the watermark, and which events of later
 * transactions were already acknowledged.
 *
 * <p>The watermark is the {@code txEndLsn} of the newest transaction such that it and every earlier
 * transaction of the slot have all their events acknowledged; a restarted source resumes streaming
 * there and drops any transaction whose end LSN is at or before it. {@link #acknowledgedBeyond()}
 * lists transactions after the watermark of which some, but not all, events (or all events, when an
 * earlier transaction is still incomplete) were acknowledged, so a restarted source does not
 * deliver those events again.
 *
 * @param slot the slot this checkpoint belongs to; a valid slot name
 * @param watermark the end LSN of the contiguous fully-acknowledged prefix; {@link PgLsn#ZERO} if
 *     nothing was acknowledged yet
 * @param acknowledgedBeyond transactions after the watermark with acknowledged events, in ascending
 *     {@code txEndLsn} order, each at most once; copied, never null
 */
public record CdcCheckpoint(
    String slot, PgLsn watermark, List<PartialTransaction> acknowledgedBeyond) {

  /**
   * Validates and copies the fields.
   *
   * @throws CdcConfigurationException if the slot name is invalid
   * @throws NullPointerException if {@code watermark} or {@code acknowledgedBeyond} is null
   * @throws IllegalArgumentException if a transaction in {@code acknowledgedBeyond} is at or before
   *     the watermark, or two share an end LSN
   */
  public CdcCheckpoint {
    SlotNames.requireValid(slot);
    Objects.requireNonNull(watermark, "watermark");
    List<PartialTransaction> sorted = new ArrayList<>(acknowledgedBeyond);
    sorted.sort(Comparator.comparing(PartialTransaction::txEndLsn));
    PgLsn previous = watermark;
    for (PartialTransaction tx : sorted) {
      if (!tx.txEndLsn().isAfter(previous)) {
        throw new IllegalArgumentException(
            "acknowledged transaction at "
                + tx.txEndLsn()
                + " is not after "
                + (previous == watermark ? "the watermark " : "the transaction at ")
                + previous);
      }
      previous = tx.txEndLsn();
    }
    acknowledgedBeyond = List.copyOf(sorted);
  }

  /**
   * Returns a checkpoint with only a watermark.
   *
   * @param slot a valid slot name
   * @param watermark the watermark, not null
   * @return a checkpoint with no acknowledged events beyond the watermark
   */
  public static CdcCheckpoint atWatermark(String slot, PgLsn watermark) {
    return new CdcCheckpoint(slot, watermark, List.of());
  }

  /**
   * The acknowledged events of one transaction after the watermark, kept as ranges of consecutive
   * event indexes, so that a large transaction acknowledged in order costs one range whatever its
   * size (the checkpoint is written on every durable acknowledgement). Immutable.
   */
  public static final class PartialTransaction {

    private final PgLsn txEndLsn;
    private final int eventCount;

    /** {@code from0, to0, from1, to1, ...}: half-open, ascending, disjoint, not adjacent. */
    private final int[] ranges;

    private PartialTransaction(PgLsn txEndLsn, int eventCount, int[] ranges) {
      this.txEndLsn = txEndLsn;
      this.eventCount = eventCount;
      this.ranges = ranges;
    }

    /**
     * Builds a partial transaction from ranges of acknowledged event indexes, in time proportional
     * to the number of ranges.
     *
     * @param txEndLsn the transaction's end LSN
     * @param eventCount how many events the transaction has, at least 1
     * @param ranges {@code from0, to0, from1, to1, ...}: half-open ranges {@code [from, to)} of
     *     acknowledged indexes, ascending and not overlapping (adjacent ones are merged); copied
     * @return the partial transaction
     * @throws NullPointerException if {@code txEndLsn} or {@code ranges} is null
     * @throws IllegalArgumentException if {@code eventCount < 1}, the array has an odd length, or a
     *     range is empty, reversed, outside {@code [0, eventCount)}, or not after the one before
     */
    public static PartialTransaction ofRanges(PgLsn txEndLsn, int eventCount, int[] ranges) {
      Objects.requireNonNull(txEndLsn, "txEndLsn");
      checkCount(eventCount);
      if ((ranges.length & 1) != 0) {
        throw new IllegalArgumentException(
            "ranges must come in pairs, found " + ranges.length + " numbers");
      }
      int[] merged = new int[ranges.length];
      int n = 0;
      int previousEnd = -1;
      for (int i = 0; i < ranges.length; i += 2) {
        int from = ranges[i];
        int to = ranges[i + 1];
        if (from < 0 || from >= to || to > eventCount) {
          throw new IllegalArgumentException(
              "acknowledged range ["
                  + from
                  + ", "
                  + to
                  + ") is empty or outside [0, "
                  + eventCount
                  + ") of transaction "
                  + txEndLsn);
        }
        if (from < previousEnd) {
          throw new IllegalArgumentException(
              "acknowledged range ["
                  + from
                  + ", "
                  + to
                  + ") of transaction "
                  + txEndLsn
                  + " overlaps or precedes the range before it");
        }
        if (from == previousEnd) {
          merged[n - 1] = to; // adjacent: extend the previous range
        } else {
          merged[n++] = from;
          merged[n++] = to;
        }
        previousEnd = to;
      }
      return new PartialTransaction(txEndLsn, eventCount, Arrays.copyOf(merged, n));
    }

    private static int checkCount(int eventCount) {
      if (eventCount < 1) {
        throw new IllegalArgumentException("eventCount must be at least 1, was " + eventCount);
      }
      return eventCount;
    }

    /** Returns the transaction's end LSN, its identity. */
    public PgLsn txEndLsn() {
      return txEndLsn;
    }

    /** Returns how many events the transaction has, at least 1. */
    public int eventCount() {
      return eventCount;
    }

    /**
     * Returns the acknowledged event indexes as ranges.
     *
     * @return a new array {@code from0, to0, from1, to1, ...} of half-open ranges {@code [from,
     *     to)}, ascending, disjoint and not adjacent; empty if none
     */
    public int[] acknowledgedRanges() {
      return ranges.clone();
    }

    /**
     * Returns whether event {@code eventIndex} was acknowledged. O(log ranges).
     *
     * @param eventIndex an event index
     * @return true if acknowledged
     */
    public boolean isAcknowledged(int eventIndex) {
      int lo = 0;
      int hi = ranges.length / 2 - 1;
      while (lo <= hi) {
        int mid = (lo + hi) >>> 1;
        if (eventIndex < ranges[2 * mid]) {
          hi = mid - 1;
        } else if (eventIndex >= ranges[2 * mid + 1]) {
          lo = mid + 1;
        } else {
          return true;
        }
      }
      return false;
    }

    /** Returns how many of the transaction's events were acknowledged. */
    public int acknowledgedCount() {
      int count = 0;
      for (int i = 0; i < ranges.length; i += 2) {
        count += ranges[i + 1] - ranges[i];
      }
      return count;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof PartialTransaction p
          && p.txEndLsn.equals(txEndLsn)
          && p.eventCount == eventCount
          && Arrays.equals(p.ranges, ranges);
    }

    @Override
    public int hashCode() {
      return (txEndLsn.hashCode() * 31 + eventCount) * 31 + Arrays.hashCode(ranges);
    }

    @Override
    public String toString() {
      StringBuilder s =
          new StringBuilder("PartialTransaction[txEndLsn=")
              .append(txEndLsn)
              .append(", eventCount=")
              .append(eventCount)
              .append(", acknowledged=");
      for (int i = 0; i < ranges.length; i += 2) {
        s.append(i == 0 ? "" : ",")
            .append('[')
            .append(ranges[i])
            .append(", ")
            .append(ranges[i + 1])
            .append(')');
      }
      return s.append(']').toString();
    }
  }
}

package io.datum.cdc;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * What a {@link CdcCheckpointStore} keeps for one slot: the watermark, and which events of later
 * transactions were already acknowledged.
 *
 * <p>The watermark is the {@code txEndLsn} of the newest transaction such that it and every
 * earlier transaction of the slot have all their events acknowledged; a restarted source resumes
 * streaming there and drops any transaction whose end LSN is at or before it. {@link
 * #acknowledgedBeyond()} lists transactions after the watermark of which some, but not all,
 * events (or all events, when an earlier transaction is still incomplete) were acknowledged, so a
 * restarted source does not deliver those events again.
 *
 * @param slot the slot this checkpoint belongs to; a valid slot name
 * @param watermark the end LSN of the contiguous fully-acknowledged prefix; {@link PgLsn#ZERO}
 *     if nothing was acknowledged yet
 * @param acknowledgedBeyond transactions after the watermark with acknowledged events, in
 *     ascending {@code txEndLsn} order, each at most once; copied, never null
 */
public record CdcCheckpoint(String slot, PgLsn watermark, List<PartialTransaction> acknowledgedBeyond) {

  /**
   * Validates and copies the fields.
   *
   * @throws CdcConfigurationException if the slot name is invalid
   * @throws NullPointerException if {@code watermark} or {@code acknowledgedBeyond} is null
   * @throws IllegalArgumentException if a transaction in {@code acknowledgedBeyond} is at or
   *     before the watermark, or two share an end LSN
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
   * The acknowledged events of one transaction after the watermark.
   *
   * @param txEndLsn the transaction's end LSN (its identity, see {@link CdcOffset#txEndLsn()})
   * @param eventCount how many events the transaction has, at least 1
   * @param acknowledged which event indexes in {@code [0, eventCount)} were acknowledged; copied
   */
  public record PartialTransaction(PgLsn txEndLsn, int eventCount, BitSet acknowledged) {

    /**
     * Validates and copies the fields.
     *
     * @throws NullPointerException if {@code txEndLsn} or {@code acknowledged} is null
     * @throws IllegalArgumentException if {@code eventCount < 1} or a set bit is at or beyond
     *     {@code eventCount}
     */
    public PartialTransaction {
      Objects.requireNonNull(txEndLsn, "txEndLsn");
      if (eventCount < 1) {
        throw new IllegalArgumentException("eventCount must be at least 1, was " + eventCount);
      }
      acknowledged = (BitSet) acknowledged.clone();
      if (acknowledged.length() > eventCount) {
        throw new IllegalArgumentException(
            "acknowledged event index "
                + (acknowledged.length() - 1)
                + " outside [0, "
                + eventCount
                + ") of transaction "
                + txEndLsn);
      }
    }

    /** Returns a copy of the acknowledged event indexes. */
    @Override
    public BitSet acknowledged() {
      return (BitSet) acknowledged.clone();
    }

    /**
     * Returns whether event {@code eventIndex} was acknowledged.
     *
     * @param eventIndex an index in {@code [0, eventCount)}
     * @return true if acknowledged
     */
    public boolean isAcknowledged(int eventIndex) {
      return acknowledged.get(eventIndex);
    }

    /** Returns how many of the transaction's events were acknowledged. */
    public int acknowledgedCount() {
      return acknowledged.cardinality();
    }
  }
}

package io.datum.cdc;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * What a {@link CdcCheckpointStore} keeps for one slot: the watermark, which events of later
 * transactions were already acknowledged, and which cluster the positions belong to.
 *
 * <p>The watermark is the {@code txEndLsn} of the newest transaction such that it and every earlier
 * transaction of the slot have all their events acknowledged; a restarted source resumes streaming
 * there and drops any transaction whose end LSN is at or before it. Beyond the watermark, {@link
 * #acknowledgedRuns()} names stretches of consecutive transactions that were fully acknowledged
 * (while an earlier one was not), and {@link #acknowledgedBeyond()} lists single transactions of
 * which some events were acknowledged, so a restarted source delivers none of those events again. A
 * checkpoint's size therefore grows with the number of gaps in what was acknowledged, not with how
 * far acknowledgements ran ahead of the watermark.
 *
 * @param slot the slot this checkpoint belongs to; a valid slot name
 * @param watermark the end LSN of the contiguous fully-acknowledged prefix; {@link PgLsn#ZERO} if
 *     nothing was acknowledged yet
 * @param acknowledgedBeyond transactions after the watermark with acknowledged events, in ascending
 *     {@code txEndLsn} order, each at most once, none inside a run; copied, never null
 * @param acknowledgedRuns runs of fully acknowledged transactions after the watermark, ascending
 *     and disjoint; copied, never null
 * @param cluster the cluster, timeline and database the positions belong to; null if unknown (a
 *     checkpoint written before datum-cdc recorded it, or one built by hand)
 * @param publication the publication the slot was streamed with: the filter that decided which
 *     changes the acknowledged positions passed over (a change of a table it did not publish was
 *     never delivered, yet is behind the watermark); null if unknown; at most 63 UTF-8 bytes
 * @param snapshot the slot's snapshots: whether the initial one completed and what is left of those
 *     in progress; {@link SnapshotProgress#NONE} if none ever ran; never null (null is read as
 *     NONE)
 */
public record CdcCheckpoint(
    String slot,
    PgLsn watermark,
    List<PartialTransaction> acknowledgedBeyond,
    List<AcknowledgedRun> acknowledgedRuns,
    ClusterIdentity cluster,
    String publication,
    SnapshotProgress snapshot) {

  /**
   * Validates and copies the fields.
   *
   * @throws CdcConfigurationException if the slot name is invalid
   * @throws NullPointerException if {@code watermark}, {@code acknowledgedBeyond} or {@code
   *     acknowledgedRuns} is null
   * @throws IllegalArgumentException if a transaction or run is at or before the watermark, two
   *     transactions share an end LSN, runs overlap, a transaction lies inside a run, or the
   *     publication name is empty or longer than 63 UTF-8 bytes
   */
  public CdcCheckpoint {
    SlotNames.requireValid(slot);
    if (snapshot == null) {
      snapshot = SnapshotProgress.NONE;
    }
    if (publication != null) {
      int bytes = publication.getBytes(StandardCharsets.UTF_8).length;
      if (bytes == 0 || bytes > ClusterIdentity.MAX_DATABASE_BYTES) {
        throw new IllegalArgumentException(
            "publication name must take 1 to 63 bytes, took " + bytes);
      }
    }
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
    List<AcknowledgedRun> runs = new ArrayList<>(acknowledgedRuns);
    runs.sort(Comparator.comparing(AcknowledgedRun::firstTxEndLsn));
    previous = watermark;
    int t = 0;
    for (AcknowledgedRun run : runs) {
      if (!run.firstTxEndLsn().isAfter(previous)) {
        throw new IllegalArgumentException(
            "acknowledged run "
                + run
                + " does not start after "
                + (previous == watermark ? "the watermark " : "the run ending at ")
                + previous);
      }
      while (t < sorted.size() && sorted.get(t).txEndLsn().compareTo(run.firstTxEndLsn()) < 0) {
        t++;
      }
      if (t < sorted.size() && run.contains(sorted.get(t).txEndLsn())) {
        throw new IllegalArgumentException(
            "acknowledged transaction at " + sorted.get(t).txEndLsn() + " lies inside run " + run);
      }
      previous = run.lastTxEndLsn();
    }
    acknowledgedRuns = List.copyOf(runs);
  }

  /**
   * A checkpoint without runs and without a cluster identity.
   *
   * @param slot a valid slot name
   * @param watermark the watermark, not null
   * @param acknowledgedBeyond transactions after the watermark with acknowledged events
   * @throws CdcConfigurationException if the slot name is invalid
   * @throws NullPointerException if {@code watermark} or {@code acknowledgedBeyond} is null
   * @throws IllegalArgumentException as the canonical constructor
   */
  public CdcCheckpoint(String slot, PgLsn watermark, List<PartialTransaction> acknowledgedBeyond) {
    this(slot, watermark, acknowledgedBeyond, List.of(), null, null, SnapshotProgress.NONE);
  }

  /**
   * A checkpoint without a publication.
   *
   * @param slot a valid slot name
   * @param watermark the watermark, not null
   * @param acknowledgedBeyond transactions after the watermark with acknowledged events
   * @param acknowledgedRuns runs of fully acknowledged transactions after the watermark
   * @param cluster the cluster identity, or null
   * @throws CdcConfigurationException if the slot name is invalid
   * @throws NullPointerException if a list or the watermark is null
   * @throws IllegalArgumentException as the canonical constructor
   */
  public CdcCheckpoint(
      String slot,
      PgLsn watermark,
      List<PartialTransaction> acknowledgedBeyond,
      List<AcknowledgedRun> acknowledgedRuns,
      ClusterIdentity cluster) {
    this(slot, watermark, acknowledgedBeyond, acknowledgedRuns, cluster, null);
  }

  /**
   * A checkpoint without snapshot progress.
   *
   * @param slot a valid slot name
   * @param watermark the watermark, not null
   * @param acknowledgedBeyond transactions after the watermark with acknowledged events
   * @param acknowledgedRuns runs of fully acknowledged transactions after the watermark
   * @param cluster the cluster identity, or null
   * @param publication the publication, or null
   * @throws CdcConfigurationException if the slot name is invalid
   * @throws NullPointerException if a list or the watermark is null
   * @throws IllegalArgumentException as the canonical constructor
   */
  public CdcCheckpoint(
      String slot,
      PgLsn watermark,
      List<PartialTransaction> acknowledgedBeyond,
      List<AcknowledgedRun> acknowledgedRuns,
      ClusterIdentity cluster,
      String publication) {
    this(
        slot,
        watermark,
        acknowledgedBeyond,
        acknowledgedRuns,
        cluster,
        publication,
        SnapshotProgress.NONE);
  }

  /**
   * Returns a checkpoint with only a watermark.
   *
   * @param slot a valid slot name
   * @param watermark the watermark, not null
   * @return a checkpoint with no acknowledged events beyond the watermark and no cluster identity
   */
  public static CdcCheckpoint atWatermark(String slot, PgLsn watermark) {
    return new CdcCheckpoint(slot, watermark, List.of());
  }

  /**
   * Returns this checkpoint with another cluster identity.
   *
   * @param identity the identity, or null for unknown
   * @return a new checkpoint with the same positions
   */
  public CdcCheckpoint withCluster(ClusterIdentity identity) {
    return new CdcCheckpoint(
        slot, watermark, acknowledgedBeyond, acknowledgedRuns, identity, publication, snapshot);
  }

  /**
   * Returns this checkpoint with another publication.
   *
   * @param name the publication, or null for unknown
   * @return a new checkpoint with the same positions
   * @throws IllegalArgumentException if the name is empty or longer than 63 UTF-8 bytes
   */
  public CdcCheckpoint withPublication(String name) {
    return new CdcCheckpoint(
        slot, watermark, acknowledgedBeyond, acknowledgedRuns, cluster, name, snapshot);
  }

  /**
   * Returns this checkpoint with other snapshot progress.
   *
   * @param progress the progress; null for {@link SnapshotProgress#NONE}
   * @return a new checkpoint with the same positions
   */
  public CdcCheckpoint withSnapshot(SnapshotProgress progress) {
    return new CdcCheckpoint(
        slot, watermark, acknowledgedBeyond, acknowledgedRuns, cluster, publication, progress);
  }

  /**
   * Returns whether every event of the transaction ending at {@code txEndLsn} is acknowledged
   * according to the positions alone: at or before the watermark, or inside a run. (A transaction
   * of {@link #acknowledgedBeyond()} may be fully acknowledged too; compare its count.) O(log
   * runs).
   *
   * @param txEndLsn a transaction's end LSN, not null
   * @return true if it is at or before the watermark or inside a run
   */
  public boolean coversTransaction(PgLsn txEndLsn) {
    if (!txEndLsn.isAfter(watermark)) {
      return true;
    }
    int lo = 0;
    int hi = acknowledgedRuns.size() - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      AcknowledgedRun run = acknowledgedRuns.get(mid);
      if (txEndLsn.compareTo(run.firstTxEndLsn()) < 0) {
        hi = mid - 1;
      } else if (txEndLsn.compareTo(run.lastTxEndLsn()) > 0) {
        lo = mid + 1;
      } else {
        return true;
      }
    }
    return false;
  }

  /**
   * Returns whether this checkpoint says that event {@code eventIndex} of the transaction ending at
   * {@code txEndLsn} was acknowledged: the transaction is at or before the watermark, inside a run,
   * or listed with the index acknowledged. O(log runs + log transactions).
   *
   * @param txEndLsn the transaction's end LSN, not null
   * @param eventIndex the event's index in its transaction, from 0
   * @return true if a source resuming from this checkpoint does not deliver the event again
   */
  public boolean isAcknowledged(PgLsn txEndLsn, int eventIndex) {
    if (coversTransaction(txEndLsn)) {
      return true;
    }
    int lo = 0;
    int hi = acknowledgedBeyond.size() - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      PartialTransaction tx = acknowledgedBeyond.get(mid);
      int c = txEndLsn.compareTo(tx.txEndLsn());
      if (c < 0) {
        hi = mid - 1;
      } else if (c > 0) {
        lo = mid + 1;
      } else {
        return tx.isAcknowledged(eventIndex);
      }
    }
    return false;
  }

  /**
   * A run of consecutive transactions of the slot's stream, all of whose events were acknowledged:
   * every transaction whose end LSN lies in {@code [firstTxEndLsn, lastTxEndLsn]} is fully
   * acknowledged. The walsender sends a slot's transactions in commit order, the same order after a
   * restart from an earlier position (PostgreSQL source, reorderbuffer.c: transactions are replayed
   * in the order of their commit records), so the end LSNs of the first and last transaction of the
   * run name exactly the transactions between them.
   *
   * @param firstTxEndLsn the end LSN of the run's first transaction
   * @param lastTxEndLsn the end LSN of its last transaction; equal to the first for a run of one
   */
  public record AcknowledgedRun(PgLsn firstTxEndLsn, PgLsn lastTxEndLsn) {

    /**
     * Validates the bounds.
     *
     * @throws NullPointerException if a bound is null
     * @throws IllegalArgumentException if {@code lastTxEndLsn} is before {@code firstTxEndLsn}
     */
    public AcknowledgedRun {
      Objects.requireNonNull(firstTxEndLsn, "firstTxEndLsn");
      Objects.requireNonNull(lastTxEndLsn, "lastTxEndLsn");
      if (lastTxEndLsn.compareTo(firstTxEndLsn) < 0) {
        throw new IllegalArgumentException(
            "acknowledged run ends at " + lastTxEndLsn + " before it starts at " + firstTxEndLsn);
      }
    }

    /**
     * Returns whether a transaction ending at {@code txEndLsn} is inside this run.
     *
     * @param txEndLsn an end LSN, not null
     * @return true if {@code firstTxEndLsn <= txEndLsn <= lastTxEndLsn}
     */
    public boolean contains(PgLsn txEndLsn) {
      return txEndLsn.compareTo(firstTxEndLsn) >= 0 && txEndLsn.compareTo(lastTxEndLsn) <= 0;
    }

    /** Returns {@code [first..last]}. */
    @Override
    public String toString() {
      return "[" + firstTxEndLsn + ".." + lastTxEndLsn + ']';
    }
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

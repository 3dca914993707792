package io.datum.cdc.core.feedback;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.PgLsn;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Transactions a {@link FeedbackCoordinator} knows from before a restart (the stored checkpoint's
 * partly acknowledged transactions and runs of fully acknowledged ones) or a reconnect (the pending
 * ones), not registered again yet, with the events acknowledged so far; acknowledgements of them
 * keep counting here until the server sends them again. Keyed by end LSN; a run holds any number of
 * transactions in one entry. Not thread-safe: the coordinator guards it with its monitor.
 */
final class RestoredTransactions {

  /** A transaction's event count and acknowledged event indexes, or every event of any count. */
  static final class Restored {

    /** Any transaction of a run: all its events are acknowledged, whatever their number. */
    static final Restored FULL = new Restored(-1, null);

    final int eventCount;
    final BitSet acknowledged;

    Restored(int eventCount, BitSet acknowledged) {
      this.eventCount = eventCount;
      this.acknowledged = acknowledged;
    }

    /** Returns whether this describes a transaction delivered with {@code count} events. */
    boolean matches(int count) {
      return this == FULL || eventCount == count;
    }

    /** Returns whether no event is known to be acknowledged. */
    boolean noneAcknowledged() {
      return this != FULL && acknowledged.isEmpty();
    }

    /**
     * Returns what a registration again of this transaction with {@code count} events must not
     * deliver again: the acknowledged indexes as a new set, or null if none (or the count differs:
     * then it is another transaction's delivery, and every event is delivered).
     */
    BitSet acknowledgedOf(int count) {
      if (!matches(count) || count == 0 || noneAcknowledged()) {
        return null;
      }
      if (this != FULL) {
        return (BitSet) acknowledged.clone();
      }
      BitSet all = new BitSet(count);
      all.set(0, count);
      return all;
    }

    /**
     * Sets the bits of the acknowledged events in {@code ring}, for the transaction registered
     * again with {@code count} events from position {@code first}; nothing if the count differs.
     */
    void markIn(AckRing ring, long first, int count) {
      if (!matches(count) || count == 0) {
        return;
      }
      if (this == FULL) {
        ring.setBits(first, count);
        return;
      }
      for (int i = acknowledged.nextSetBit(0); i >= 0; i = acknowledged.nextSetBit(i + 1)) {
        ring.setBit(first + i);
      }
    }
  }

  private static final Comparator<Long> UNSIGNED = Long::compareUnsigned;

  /** Single transactions by end LSN. */
  private final TreeMap<Long, Restored> byEnd = new TreeMap<>(UNSIGNED);

  /** Runs of fully acknowledged transactions: first end LSN to last end LSN, disjoint. */
  private final TreeMap<Long, Long> runs = new TreeMap<>(UNSIGNED);

  /** Returns the acknowledged event indexes of a stored partial transaction as a new bit set. */
  static BitSet bits(CdcCheckpoint.PartialTransaction tx) {
    BitSet bits = new BitSet();
    int[] ranges = tx.acknowledgedRanges();
    for (int i = 0; i < ranges.length; i += 2) {
      bits.set(ranges[i], ranges[i + 1]);
    }
    return bits;
  }

  /** Returns the runs of set bits as {@code from0, to0, from1, to1, ...}, half-open. */
  private static int[] ranges(BitSet bits) {
    int[] ranges = new int[2 * bits.cardinality()];
    int n = 0;
    for (int from = bits.nextSetBit(0); from >= 0; ) {
      int to = bits.nextClearBit(from);
      ranges[n++] = from;
      ranges[n++] = to;
      from = bits.nextSetBit(to);
    }
    return Arrays.copyOf(ranges, n);
  }

  /** Holds a stored checkpoint's partly acknowledged transactions and runs, to resume from it. */
  void putAll(CdcCheckpoint checkpoint) {
    for (CdcCheckpoint.PartialTransaction tx : checkpoint.acknowledgedBeyond()) {
      put(tx.txEndLsn().asLong(), tx.eventCount(), bits(tx));
    }
    for (CdcCheckpoint.AcknowledgedRun run : checkpoint.acknowledgedRuns()) {
      putRun(run.firstTxEndLsn().asLong(), run.lastTxEndLsn().asLong());
    }
  }

  /**
   * Holds the pending transactions {@code [head, tail)} of {@code txs} at a reconnect, with their
   * acknowledged events: those before {@code prefix} (the acknowledged prefix: whatever the ring
   * holds there), and those whose bits are set in the ring words {@code captured} from {@code
   * fromWord} on (taken by {@link AckRing#retire}, from the prefix's word). Consecutive fully
   * acknowledged transactions (those without events too) are held as one run, so a large lead stays
   * small.
   */
  void putPending(
      PendingTransactions txs, long head, long tail, long prefix, long[] captured, long fromWord) {
    long runFirst = -1;
    long runLast = -1;
    for (long seq = head; seq < tail; seq++) {
      int count = txs.count(seq);
      long first = txs.first(seq);
      BitSet acknowledged = new BitSet(count);
      for (int i = 0; i < count; i++) {
        long position = first + i;
        if (position < prefix || AckRing.isSetIn(captured, fromWord, position)) {
          acknowledged.set(i);
        }
      }
      long end = txs.end(seq);
      if (acknowledged.cardinality() == count) {
        if (runFirst == -1) {
          runFirst = end;
        }
        runLast = end;
        continue;
      }
      if (runFirst != -1) {
        putRun(runFirst, runLast);
        runFirst = -1;
      }
      put(end, count, acknowledged);
    }
    if (runFirst != -1) {
      putRun(runFirst, runLast);
    }
  }

  /**
   * Records the acknowledgement of event {@code index} (or, with {@code wholeTransaction}, of every
   * event) of the held transaction ending at {@code end}, delivered with {@code count} events
   * before the reconnect and not registered again yet.
   *
   * @return false if no such transaction with that event count is held
   */
  boolean acknowledge(long end, int count, int index, boolean wholeTransaction) {
    Restored known = get(end);
    if (known == null || !known.matches(count)) {
      return false;
    }
    if (known != Restored.FULL) { // in a run every event is acknowledged already
      if (wholeTransaction) {
        known.acknowledged.set(0, known.eventCount);
      } else {
        known.acknowledged.set(index);
      }
    }
    return true;
  }

  /** Returns whether no transaction is held. */
  boolean isEmpty() {
    return byEnd.isEmpty() && runs.isEmpty();
  }

  /** Returns whether a transaction ending at {@code end} is held. */
  boolean contains(long end) {
    return get(end) != null;
  }

  /** Returns the transaction ending at {@code end} ({@link Restored#FULL} in a run), or null. */
  Restored get(long end) {
    Restored single = byEnd.get(end);
    if (single != null) {
      return single;
    }
    Map.Entry<Long, Long> run = runs.floorEntry(end);
    return run != null && Long.compareUnsigned(end, run.getValue()) <= 0 ? Restored.FULL : null;
  }

  /**
   * Removes and returns the transaction ending at {@code end}, or null; in a run, the run then
   * starts after it (transactions are registered again in commit order).
   */
  Restored remove(long end) {
    Restored single = byEnd.remove(end);
    if (single != null) {
      return single;
    }
    Map.Entry<Long, Long> run = runs.floorEntry(end);
    if (run == null || Long.compareUnsigned(end, run.getValue()) > 0) {
      return null;
    }
    runs.remove(run.getKey());
    if (end != run.getValue()) {
      runs.put(end + 1, run.getValue());
    }
    return Restored.FULL;
  }

  /** Holds a transaction (replacing one with the same end LSN). */
  void put(long end, int eventCount, BitSet acknowledged) {
    byEnd.put(end, new Restored(eventCount, acknowledged));
  }

  /** Holds a run of fully acknowledged transactions ending at {@code first} to {@code last}. */
  void putRun(long first, long last) {
    runs.put(first, last);
  }

  /** Forgets every transaction ending at or before {@code end} (behind the watermark). */
  void forgetUpTo(long end) {
    byEnd.headMap(end, true).clear();
    Map.Entry<Long, Long> straddling = runs.floorEntry(end);
    runs.headMap(end, true).clear();
    if (straddling != null && Long.compareUnsigned(straddling.getValue(), end) > 0) {
      runs.put(end + 1, straddling.getValue());
    }
  }

  /**
   * Adds the transactions and runs ending after {@code bound} to a checkpoint's lists: those not
   * registered again yet. Whatever ends at or before the bound was registered again (and is listed
   * from the coordinator's rings) or was not sent again (and will not be).
   *
   * @param bound the watermark, or the end LSN of the newest registered transaction if that is
   *     later
   * @param partial the list of partial transactions to add to
   * @param fullRuns the list of runs to add to, ascending; a restored run that continues the last
   *     one (which then ends at the bound) is merged into it
   */
  void addTo(
      long bound,
      List<CdcCheckpoint.PartialTransaction> partial,
      List<CdcCheckpoint.AcknowledgedRun> fullRuns) {
    for (Map.Entry<Long, Restored> tx : byEnd.tailMap(bound, false).entrySet()) {
      Restored r = tx.getValue();
      if (!r.acknowledged.isEmpty()) {
        partial.add(
            CdcCheckpoint.PartialTransaction.ofRanges(
                PgLsn.of(tx.getKey()), r.eventCount, ranges(r.acknowledged)));
      }
    }
    Map.Entry<Long, Long> straddling = runs.floorEntry(bound);
    if (straddling != null && Long.compareUnsigned(straddling.getValue(), bound) > 0) {
      // registered again up to the bound: the rest continues the run the rings listed last
      PgLsn last = PgLsn.of(straddling.getValue());
      int n = fullRuns.size();
      if (n > 0 && fullRuns.get(n - 1).lastTxEndLsn().asLong() == bound) {
        fullRuns.set(
            n - 1, new CdcCheckpoint.AcknowledgedRun(fullRuns.get(n - 1).firstTxEndLsn(), last));
      } else {
        fullRuns.add(new CdcCheckpoint.AcknowledgedRun(PgLsn.of(bound + 1), last));
      }
    }
    for (Map.Entry<Long, Long> run : runs.tailMap(bound, false).entrySet()) {
      fullRuns.add(
          new CdcCheckpoint.AcknowledgedRun(PgLsn.of(run.getKey()), PgLsn.of(run.getValue())));
    }
  }
}

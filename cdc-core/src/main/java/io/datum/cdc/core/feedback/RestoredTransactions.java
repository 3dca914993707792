package io.datum.cdc.core.feedback;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.PgLsn;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongPredicate;

/**
 * Transactions a {@link FeedbackCoordinator} knows from before a restart (the stored checkpoint's
 * partly acknowledged transactions) or a reconnect (the pending ones), not registered again yet,
 * with the events acknowledged so far; acknowledgements of them keep counting here until the server
 * sends them again. Keyed by end LSN. Not thread-safe: the coordinator guards it with its monitor.
 */
final class RestoredTransactions {

  /** A transaction's event count and acknowledged event indexes. */
  static final class Restored {
    final int eventCount;
    final BitSet acknowledged;

    Restored(int eventCount, BitSet acknowledged) {
      this.eventCount = eventCount;
      this.acknowledged = acknowledged;
    }
  }

  private final Map<Long, Restored> byEnd = new HashMap<>();

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

  /** Returns whether no transaction is held. */
  boolean isEmpty() {
    return byEnd.isEmpty();
  }

  /** Returns whether a transaction ending at {@code end} is held. */
  boolean contains(long end) {
    return byEnd.containsKey(end);
  }

  /** Returns the transaction ending at {@code end}, or null. */
  Restored get(long end) {
    return byEnd.get(end);
  }

  /** Removes and returns the transaction ending at {@code end}, or null. */
  Restored remove(long end) {
    return byEnd.remove(end);
  }

  /** Holds a transaction (replacing one with the same end LSN). */
  void put(long end, int eventCount, BitSet acknowledged) {
    byEnd.put(end, new Restored(eventCount, acknowledged));
  }

  /** Forgets every transaction ending at or before {@code end} (behind the watermark). */
  void forgetUpTo(long end) {
    byEnd.keySet().removeIf(e -> Long.compareUnsigned(e, end) <= 0);
  }

  /**
   * Adds the transactions after {@code watermark} with acknowledged events that are not registered
   * again yet to a checkpoint's partial transactions.
   *
   * @param watermark the checkpoint's watermark
   * @param registered tells whether a transaction with this end LSN is registered again (and so
   *     listed from the coordinator's rings)
   * @param partial the list to add to
   */
  void addTo(
      long watermark, LongPredicate registered, List<CdcCheckpoint.PartialTransaction> partial) {
    for (Map.Entry<Long, Restored> tx : byEnd.entrySet()) {
      long end = tx.getKey();
      Restored r = tx.getValue();
      if (Long.compareUnsigned(end, watermark) > 0
          && !r.acknowledged.isEmpty()
          && !registered.test(end)) {
        partial.add(
            CdcCheckpoint.PartialTransaction.ofRanges(
                PgLsn.of(end), r.eventCount, ranges(r.acknowledged)));
      }
    }
  }
}

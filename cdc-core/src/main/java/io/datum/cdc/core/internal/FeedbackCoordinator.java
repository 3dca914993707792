package io.datum.cdc.core.internal;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointException;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Tracks which events of which delivered transactions the application has acknowledged, and
 * computes the watermark: the end LSN of the newest transaction such that it and every earlier
 * transaction of the slot are fully acknowledged. Only the watermark may be reported to
 * PostgreSQL as flushed: the walsender skips, on reconnect, every transaction whose commit record
 * starts before the confirmed position (PostgreSQL source, decode.c, {@code DecodeCommit} and
 * {@code SnapBuildXactNeedsSkip}).
 *
 * <p>Transactions are registered by the source, in commit order, before any of their events is
 * delivered ({@link #register}); acknowledgements come from any thread in any order. All methods
 * are synchronized; each is O(1) apart from the removal of completed transactions, which is
 * amortised O(1) per transaction.
 *
 * <p>Fixes of the seed's defects (DESIGN.md): an acknowledgement never registers a transaction
 * (defect 5), and a transaction without events completes at once (defect 6).
 */
final class FeedbackCoordinator {

  private final String slot;
  private final ArrayDeque<PendingTransaction> pending = new ArrayDeque<>();
  private final Map<Long, PendingTransaction> byEndLsn = new HashMap<>();
  /** Acknowledgements restored from the store, for transactions not yet registered again. */
  private final Map<Long, CdcCheckpoint.PartialTransaction> restored = new HashMap<>();

  private PgLsn watermark;
  private long lastRegisteredEnd;

  /**
   * @param slot the slot whose acknowledgements this tracks
   * @param checkpoint the stored checkpoint to resume from, or null to start at {@code 0/0}
   */
  FeedbackCoordinator(String slot, CdcCheckpoint checkpoint) {
    this.slot = slot;
    this.watermark = checkpoint == null ? PgLsn.ZERO : checkpoint.watermark();
    this.lastRegisteredEnd = watermark.asLong();
    if (checkpoint != null) {
      for (CdcCheckpoint.PartialTransaction tx : checkpoint.acknowledgedBeyond()) {
        restored.put(tx.txEndLsn().asLong(), tx);
      }
    }
  }

  /** Returns the current watermark. */
  synchronized PgLsn watermark() {
    return watermark;
  }

  /** Returns true if a registered transaction is not yet fully acknowledged. */
  synchronized boolean hasPending() {
    return !pending.isEmpty();
  }

  /** Returns the number of registered transactions not yet behind the watermark. */
  synchronized int pendingTransactions() {
    return pending.size();
  }

  /**
   * Returns whether a transaction with this end LSN is at or before the watermark, that is,
   * already processed before a restart, so the source must not deliver it again.
   *
   * @param txEndLsn the transaction's end LSN
   * @return true if it must be dropped
   */
  synchronized boolean isAtOrBeforeWatermark(PgLsn txEndLsn) {
    return !txEndLsn.isAfter(watermark);
  }

  /**
   * Registers a committed transaction before its events are delivered.
   *
   * @param txEndLsn the transaction's end LSN; after every transaction registered before
   * @param eventCount the number of events it delivers; 0 completes it at once
   * @return the indexes of events already acknowledged before a restart (do not deliver them
   *     again), or null if none
   * @throws IllegalStateException if {@code txEndLsn} is not after the previous registration
   *     (transactions must arrive in commit order)
   */
  synchronized BitSet register(PgLsn txEndLsn, int eventCount) {
    long end = txEndLsn.asLong();
    if (Long.compareUnsigned(end, lastRegisteredEnd) <= 0) {
      throw new IllegalStateException(
          "transaction at "
              + txEndLsn
              + " registered after "
              + PgLsn.of(lastRegisteredEnd)
              + " of slot "
              + slot
              + ": transactions must arrive in commit order");
    }
    lastRegisteredEnd = end;
    PendingTransaction tx = new PendingTransaction(txEndLsn, eventCount);
    CdcCheckpoint.PartialTransaction before = restored.remove(end);
    BitSet alreadyAcknowledged = null;
    if (before != null && before.eventCount() == eventCount) {
      alreadyAcknowledged = before.acknowledged();
      tx.acknowledged.or(alreadyAcknowledged);
      tx.acknowledgedCount = alreadyAcknowledged.cardinality();
    }
    if (pending.isEmpty() && tx.isComplete()) {
      watermark = txEndLsn;
      return alreadyAcknowledged;
    }
    pending.addLast(tx);
    byEndLsn.put(end, tx);
    advance();
    return alreadyAcknowledged;
  }

  /**
   * Records the acknowledgement of one event.
   *
   * @param offset the event's offset
   * @return true if the watermark moved
   * @throws CdcCheckpointException if the offset is of another slot, its transaction was not
   *     registered, its event count differs from the registered one, or its index is outside the
   *     transaction
   */
  synchronized boolean acknowledge(CdcOffset offset) {
    if (!offset.slot().equals(slot)) {
      throw new CdcCheckpointException(
          "offset " + offset + " belongs to slot \"" + offset.slot() + "\", not \"" + slot + '"');
    }
    if (!offset.txEndLsn().isAfter(watermark)) {
      return false; // already behind the watermark: acknowledging again is harmless
    }
    PendingTransaction tx = byEndLsn.get(offset.txEndLsn().asLong());
    if (tx == null) {
      throw new CdcCheckpointException(
          "offset "
              + offset
              + " names a transaction that this source has not delivered (watermark "
              + watermark
              + ')');
    }
    if (tx.eventCount != offset.eventCount()) {
      throw new CdcCheckpointException(
          "offset "
              + offset
              + " says the transaction has "
              + offset.eventCount()
              + " events, but it was delivered with "
              + tx.eventCount);
    }
    if (!tx.mark(offset.eventIndex()) || tx != pending.peekFirst() || !tx.isComplete()) {
      return false;
    }
    return advance();
  }

  /**
   * Moves the watermark to a keepalive's WAL end when nothing is pending: no registered
   * transaction awaits acknowledgement. The caller guarantees that no transaction is open or
   * buffered in the source. The walsender reports a WAL end only after all output for that WAL
   * was sent (PostgreSQL source, walsender.c, {@code WalSndKeepalive} sends {@code sentPtr}).
   *
   * @param walEnd the WAL end of the last keepalive
   * @return true if the watermark moved
   */
  synchronized boolean advanceIdle(PgLsn walEnd) {
    if (!pending.isEmpty() || !walEnd.isAfter(watermark)) {
      return false;
    }
    watermark = walEnd;
    if (Long.compareUnsigned(walEnd.asLong(), lastRegisteredEnd) > 0) {
      lastRegisteredEnd = walEnd.asLong();
    }
    // restored acknowledgements of transactions the server has passed will never be needed
    restored.keySet().removeIf(end -> Long.compareUnsigned(end, walEnd.asLong()) <= 0);
    return true;
  }

  /**
   * Returns what a store must keep: the watermark and the acknowledged events of the
   * transactions after it.
   *
   * @return a new checkpoint
   */
  synchronized CdcCheckpoint snapshot() {
    List<CdcCheckpoint.PartialTransaction> partial = new ArrayList<>();
    for (PendingTransaction tx : pending) {
      if (tx.acknowledgedCount > 0) {
        partial.add(
            new CdcCheckpoint.PartialTransaction(tx.txEndLsn, tx.eventCount, tx.acknowledged));
      }
    }
    // acknowledgements restored from the store whose transactions were not delivered again yet
    for (CdcCheckpoint.PartialTransaction tx : restored.values()) {
      if (tx.txEndLsn().isAfter(watermark)) {
        partial.add(tx);
      }
    }
    return new CdcCheckpoint(slot, watermark, partial);
  }

  private boolean advance() {
    boolean moved = false;
    while (!pending.isEmpty() && pending.peekFirst().isComplete()) {
      PendingTransaction done = pending.removeFirst();
      byEndLsn.remove(done.txEndLsn.asLong());
      watermark = done.txEndLsn;
      moved = true;
    }
    if (moved) {
      restored.keySet().removeIf(end -> Long.compareUnsigned(end, watermark.asLong()) <= 0);
    }
    return moved;
  }

  /** A registered transaction and its acknowledged events. */
  private static final class PendingTransaction {
    final PgLsn txEndLsn;
    final int eventCount;
    final BitSet acknowledged;
    int acknowledgedCount;

    PendingTransaction(PgLsn txEndLsn, int eventCount) {
      this.txEndLsn = txEndLsn;
      this.eventCount = eventCount;
      this.acknowledged = new BitSet(eventCount);
    }

    /** Returns true if the event was not acknowledged before. */
    boolean mark(int eventIndex) {
      if (eventIndex < 0 || eventIndex >= eventCount) {
        throw new CdcCheckpointException(
            "event index "
                + eventIndex
                + " outside [0, "
                + eventCount
                + ") of the transaction at "
                + txEndLsn);
      }
      if (acknowledged.get(eventIndex)) {
        return false;
      }
      acknowledged.set(eventIndex);
      acknowledgedCount++;
      return true;
    }

    boolean isComplete() {
      return acknowledgedCount == eventCount;
    }
  }
}

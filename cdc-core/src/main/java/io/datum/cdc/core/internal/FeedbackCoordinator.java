package io.datum.cdc.core.internal;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointException;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
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
 * delivered ({@link #register}); acknowledgements come from any thread in any order.
 *
 * <p>Layout, chosen so that an acknowledgement allocates nothing and is O(1) when it is for the
 * oldest pending transaction (the usual case), O(log n) in the number of pending transactions
 * otherwise: pending transactions sit in a ring of parallel arrays indexed by a sequence number the
 * coordinator assigns at registration (end LSN, first event position, event count, acknowledged
 * count, acknowledged prefix, highest acknowledged: 32 bytes per pending transaction); their end LSNs ascend, so a transaction is found by
 * checking the oldest, then by interpolation search (binary in the worst case). Events have consecutive positions, and one bit per
 * pending event in a ring of {@code long} words says whether it was acknowledged. Memory therefore grows
 * with the pending events (1 bit each) and transactions, never with the events already behind the
 * watermark. The rings double when full (the only allocation, amortised).
 *
 * <p>All methods are synchronized. Public only for the benchmarks module; not API.
 *
 * <p>Fixes of the seed's defects (DESIGN.md): an acknowledgement never registers a transaction
 * (defect 5), and a transaction without events completes at once (defect 6).
 */
public final class FeedbackCoordinator {

  private final String slot;
  /**
   * Transactions known from before a restart or reconnect (the store's partial transactions, or
   * the pending ones at a reconnect) that were not registered again yet, with the events
   * acknowledged so far; acknowledgements of them keep counting here.
   */
  private final Map<Long, Restored> restored = new HashMap<>();

  // the transaction ring: sequence numbers [head, tail) are pending
  private long[] txEnd = new long[64];
  private long[] txFirstEvent = new long[64];
  private int[] txCount = new int[64];
  private int[] txAcknowledged = new int[64];
  /** Per transaction: its events [0, prefix) are all acknowledged (advanced lazily by snapshot). */
  private int[] txPrefix = new int[64];
  /** Per transaction: one past the highest acknowledged event index (0: none). */
  private int[] txAckedEnd = new int[64];
  private int txMask = 63;
  private long head;
  private long tail;
  /** One past the newest pending transaction with an acknowledged event: snapshots stop there. */
  private long ackedUpTo;

  // the event bit ring: positions [headEvent, nextEvent) are pending
  private long[] bits = new long[64];
  private long bitMask = 64L * 64 - 1;
  private long nextEvent;

  private long watermark;
  private long lastRegisteredEnd;

  /**
   * @param slot the slot whose acknowledgements this tracks
   * @param checkpoint the stored checkpoint to resume from, or null to start at {@code 0/0}
   */
  public FeedbackCoordinator(String slot, CdcCheckpoint checkpoint) {
    this.slot = slot;
    this.watermark = checkpoint == null ? 0L : checkpoint.watermark().asLong();
    this.lastRegisteredEnd = watermark;
    if (checkpoint != null) {
      for (CdcCheckpoint.PartialTransaction tx : checkpoint.acknowledgedBeyond()) {
        restored.put(tx.txEndLsn().asLong(), new Restored(tx.eventCount(), tx.acknowledged()));
      }
    }
  }

  /** Returns the current watermark. */
  public synchronized PgLsn watermark() {
    return PgLsn.of(watermark);
  }

  /** Returns true if a registered transaction is not yet fully acknowledged. */
  public synchronized boolean hasPending() {
    return head != tail;
  }

  /** Returns the number of registered transactions not yet behind the watermark. */
  public synchronized int pendingTransactions() {
    return (int) (tail - head);
  }

  /** Returns the number of events of pending transactions (acknowledged or not). */
  public synchronized long pendingEvents() {
    return head == tail ? 0 : nextEvent - txFirstEvent[(int) head & txMask];
  }

  /**
   * Returns whether a transaction with this end LSN is at or before the watermark, that is,
   * already processed before a restart, so the source must not deliver it again.
   *
   * @param txEndLsn the transaction's end LSN
   * @return true if it must be dropped
   */
  public synchronized boolean isAtOrBeforeWatermark(PgLsn txEndLsn) {
    return Long.compareUnsigned(txEndLsn.asLong(), watermark) <= 0;
  }

  /**
   * Returns whether the transaction ending at {@code txEndLsn} was delivered before, as far as
   * this coordinator knows: pending at a reconnect, or partly acknowledged in the stored
   * checkpoint it started from. Ask before {@link #register}.
   *
   * @param txEndLsn the transaction's end LSN
   * @return true if it is a known redelivery
   */
  public synchronized boolean wasDeliveredBefore(PgLsn txEndLsn) {
    return !restored.isEmpty() && restored.containsKey(txEndLsn.asLong());
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
   * @throws IllegalArgumentException if {@code eventCount} is negative
   */
  public synchronized BitSet register(PgLsn txEndLsn, int eventCount) {
    long end = txEndLsn.asLong();
    if (Long.compareUnsigned(end, lastRegisteredEnd) <= 0) {
      throw new IllegalStateException(
          "transaction at " + txEndLsn + " registered after " + PgLsn.of(lastRegisteredEnd)
              + " of slot " + slot + ": transactions must arrive in commit order");
    }
    if (eventCount < 0) {
      throw new IllegalArgumentException("event count " + eventCount + " is negative");
    }
    lastRegisteredEnd = end;
    BitSet alreadyAcknowledged = null;
    Restored before = restored.isEmpty() ? null : restored.remove(end);
    if (before != null && before.eventCount == eventCount && !before.acknowledged.isEmpty()) {
      alreadyAcknowledged = before.acknowledged;
    }
    int preAcknowledged = alreadyAcknowledged == null ? 0 : alreadyAcknowledged.cardinality();
    if (head == tail && preAcknowledged == eventCount) {
      watermark = end; // nothing pending and nothing to wait for: complete at once
      return alreadyAcknowledged;
    }
    if (tail - head == txEnd.length) {
      growTransactions();
    }
    long pendingFrom = head == tail ? nextEvent : txFirstEvent[(int) head & txMask];
    while (nextEvent + eventCount - pendingFrom > bitMask + 1) {
      growBits(pendingFrom);
    }
    clearBits(nextEvent, eventCount);
    int t = (int) tail & txMask;
    txEnd[t] = end;
    txFirstEvent[t] = nextEvent;
    txCount[t] = eventCount;
    txAcknowledged[t] = preAcknowledged;
    txPrefix[t] = 0;
    txAckedEnd[t] = alreadyAcknowledged == null ? 0 : alreadyAcknowledged.length();
    if (alreadyAcknowledged != null) {
      for (int i = alreadyAcknowledged.nextSetBit(0); i >= 0; i = alreadyAcknowledged.nextSetBit(i + 1)) {
        setBit(nextEvent + i);
      }
    }
    nextEvent += eventCount;
    tail++;
    if (preAcknowledged > 0) {
      ackedUpTo = tail;
    }
    advance();
    return alreadyAcknowledged;
  }

  /**
   * Records the acknowledgement of one event. O(1), allocation-free.
   *
   * @param offset the event's offset
   * @return true if the watermark moved
   * @throws CdcCheckpointException if the offset is of another slot, its transaction was not
   *     registered, its event count differs from the registered one, or its index is outside the
   *     transaction
   */
  public synchronized boolean acknowledge(CdcOffset offset) {
    long seq = locate(offset, false);
    if (seq < 0) {
      return false;
    }
    int t = (int) seq & txMask;
    long position = txFirstEvent[t] + offset.eventIndex(); // index < eventCount by CdcOffset
    int word = (int) ((position & bitMask) >>> 6);
    long bit = 1L << position;
    if ((bits[word] & bit) != 0) {
      return false;
    }
    bits[word] |= bit;
    if (seq >= ackedUpTo) {
      ackedUpTo = seq + 1;
    }
    if (offset.eventIndex() >= txAckedEnd[t]) {
      txAckedEnd[t] = offset.eventIndex() + 1;
    }
    if (++txAcknowledged[t] != txCount[t] || seq != head) {
      return false;
    }
    return advance();
  }

  /**
   * Finds the pending transaction of an acknowledged offset.
   *
   * @param wholeTransaction whether the acknowledgement covers every event (recorded on a known
   *     transaction that is not registered again yet)
   * @return its sequence number, or -1 if there is nothing more to do (behind the watermark, or
   *     recorded for a transaction known from before a reconnect)
   * @throws CdcCheckpointException if the offset is of another slot, of an undelivered
   *     transaction, or disagrees with the delivered event count
   */
  private long locate(CdcOffset offset, boolean wholeTransaction) {
    if (!offset.slot().equals(slot)) {
      throw new CdcCheckpointException(
          "offset " + offset + " belongs to slot \"" + offset.slot() + "\", not \"" + slot + '"');
    }
    long end = offset.txEndLsn().asLong();
    if (Long.compareUnsigned(end, watermark) <= 0) {
      return -1; // already behind the watermark: acknowledging again is harmless
    }
    long seq = find(end);
    if (seq < 0 && !restored.isEmpty()) {
      Restored known = restored.get(end);
      if (known != null && known.eventCount == offset.eventCount()) {
        if (wholeTransaction) {
          known.acknowledged.set(0, known.eventCount);
        } else {
          known.acknowledged.set(offset.eventIndex()); // delivered before a reconnect
        }
        return -1;
      }
    }
    if (seq < 0) {
      throw new CdcCheckpointException(
          "offset " + offset + " names a transaction that this source has not delivered (watermark "
              + PgLsn.of(watermark) + ')');
    }
    int count = txCount[(int) seq & txMask];
    if (count != offset.eventCount()) {
      throw new CdcCheckpointException(
          "offset " + offset + " says the transaction has " + offset.eventCount()
              + " events, but it was delivered with " + count);
    }
    return seq;
  }

  /**
   * Records the acknowledgement of every event of {@code offset}'s transaction. O(events / 64).
   *
   * @param offset the offset of any event of the transaction
   * @return true if the watermark moved
   * @throws CdcCheckpointException as {@link #acknowledge}
   */
  public synchronized boolean acknowledgeTransaction(CdcOffset offset) {
    long seq = locate(offset, true);
    if (seq < 0) {
      return false;
    }
    int t = (int) seq & txMask;
    for (long p = txFirstEvent[t], last = p + txCount[t]; p < last; p++) {
      setBit(p);
    }
    txAcknowledged[t] = txCount[t];
    txAckedEnd[t] = txCount[t];
    if (seq >= ackedUpTo) {
      ackedUpTo = seq + 1;
    }
    return seq == head && advance();
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
  public synchronized boolean advanceIdle(PgLsn walEnd) {
    long end = walEnd.asLong();
    if (head != tail || Long.compareUnsigned(end, watermark) <= 0) {
      return false;
    }
    watermark = end;
    if (Long.compareUnsigned(end, lastRegisteredEnd) > 0) {
      lastRegisteredEnd = end;
    }
    // restored acknowledgements of transactions the server has passed will never be needed
    restored.keySet().removeIf(e -> Long.compareUnsigned(e, end) <= 0);
    return true;
  }

  /**
   * Returns what a store must keep: the watermark and the acknowledged events of the
   * transactions after it.
   *
   * @return a new checkpoint
   */
  public synchronized CdcCheckpoint snapshot() {
    List<CdcCheckpoint.PartialTransaction> partial = new ArrayList<>();
    // transactions after the newest acknowledged one have nothing to store: O(1) when the
    // application acknowledges in commit order, whatever the number of transactions delivered
    for (long seq = head, end = Math.min(tail, ackedUpTo); seq < end; seq++) {
      int t = (int) seq & txMask;
      if (txAcknowledged[t] > 0) {
        partial.add(CdcCheckpoint.PartialTransaction.ofRanges(
            PgLsn.of(txEnd[t]), txCount[t], acknowledgedRanges(t)));
      }
    }
    // acknowledgements from before a restart or reconnect whose transactions were not delivered
    // again yet
    for (Map.Entry<Long, Restored> tx : restored.entrySet()) {
      if (Long.compareUnsigned(tx.getKey(), watermark) > 0 && !tx.getValue().acknowledged.isEmpty()) {
        partial.add(new CdcCheckpoint.PartialTransaction(
            PgLsn.of(tx.getKey()), tx.getValue().eventCount, tx.getValue().acknowledged));
      }
    }
    return new CdcCheckpoint(slot, PgLsn.of(watermark), partial);
  }

  /**
   * Forgets the registrations of pending transactions after the connection was lost, keeping
   * their acknowledged events: the server sends them again from the confirmed position, they are
   * registered again, and only their unacknowledged events are delivered again. Acknowledgements
   * of events delivered before the loss still count.
   */
  public synchronized void resetPending() {
    for (long seq = head; seq < tail; seq++) {
      int t = (int) seq & txMask;
      restored.put(txEnd[t], new Restored(txCount[t], rangeBits(txFirstEvent[t], txCount[t])));
    }
    head = tail;
    lastRegisteredEnd = watermark;
  }

  private boolean advance() {
    boolean moved = false;
    while (head != tail) {
      int t = (int) head & txMask;
      if (txAcknowledged[t] != txCount[t]) {
        break;
      }
      watermark = txEnd[t];
      head++;
      moved = true;
    }
    if (moved && !restored.isEmpty()) {
      long w = watermark;
      restored.keySet().removeIf(e -> Long.compareUnsigned(e, w) <= 0);
    }
    return moved;
  }

  /**
   * Returns the sequence number of the pending transaction ending at {@code end}, or -1: the head
   * first (acknowledgements in commit order hit it), then a search of the ring, whose end LSNs
   * ascend. No index to maintain on register and advance.
   */
  private long find(long end) {
    if (head == tail) {
      return -1;
    }
    if (txEnd[(int) head & txMask] == end) {
      return head;
    }
    // interpolation search: end LSNs of consecutive transactions grow roughly evenly, so the
    // estimate lands on or next to the target; binary steps bound the worst case
    long lo = head + 1;
    long hi = tail - 1;
    boolean interpolate = true;
    while (lo <= hi) {
      long loEnd = txEnd[(int) lo & txMask];
      long hiEnd = txEnd[(int) hi & txMask];
      if (Long.compareUnsigned(end, loEnd) < 0 || Long.compareUnsigned(end, hiEnd) > 0) {
        return -1;
      }
      long mid;
      if (interpolate && hiEnd != loEnd) {
        double fraction = (double) (end - loEnd) / (double) (hiEnd - loEnd); // spans < 2^63
        mid = lo + (long) (fraction * (hi - lo));
      } else {
        mid = (lo + hi) >>> 1;
      }
      interpolate = !interpolate; // alternate, so a skewed distribution still halves the range
      int c = Long.compareUnsigned(txEnd[(int) mid & txMask], end);
      if (c < 0) {
        lo = mid + 1;
      } else if (c > 0) {
        hi = mid - 1;
      } else {
        return mid;
      }
    }
    return -1;
  }

  /** A transaction known from before a restart or reconnect, not registered again yet. */
  private static final class Restored {
    final int eventCount;
    final BitSet acknowledged;

    Restored(int eventCount, BitSet acknowledged) {
      this.eventCount = eventCount;
      this.acknowledged = acknowledged;
    }
  }

  /**
   * Returns the acknowledged events of pending transaction {@code t} as half-open index ranges.
   * Moves the transaction's all-acknowledged prefix forward first (each event is passed once over
   * the transaction's life), then reads only the bits between it and the highest acknowledged
   * event: O(1) for a transaction acknowledged in order, whatever its size.
   */
  private int[] acknowledgedRanges(int t) {
    long first = txFirstEvent[t];
    int prefix = txPrefix[t];
    int end = txAckedEnd[t];
    while (prefix < end && isSet(first + prefix)) {
      prefix++;
    }
    txPrefix[t] = prefix;
    int[] ranges = new int[prefix > 0 ? 2 : 0];
    int n = 0;
    if (prefix > 0) {
      ranges[n++] = 0;
      ranges[n++] = prefix;
    }
    int i = prefix;
    while (i < end) {
      while (i < end && !isSet(first + i)) {
        i++;
      }
      if (i == end) {
        break;
      }
      int from = i;
      while (i < end && isSet(first + i)) {
        i++;
      }
      if (n == ranges.length) {
        ranges = java.util.Arrays.copyOf(ranges, Math.max(4, n * 2));
      }
      ranges[n++] = from;
      ranges[n++] = i;
    }
    return n == ranges.length ? ranges : java.util.Arrays.copyOf(ranges, n);
  }

  private boolean isSet(long position) {
    return (bits[(int) ((position & bitMask) >>> 6)] & (1L << position)) != 0;
  }

  /** Copies the bits of events [first, first + count) into a BitSet, 64 at a time. */
  private BitSet rangeBits(long first, int count) {
    long[] words = new long[(count + 63) >>> 6];
    for (int w = 0; w < words.length; w++) {
      long p = first + ((long) w << 6);
      int n = Math.min(64, count - (w << 6));
      int offset = (int) (p & 63);
      int word = (int) ((p & bitMask) >>> 6);
      long value = bits[word] >>> offset;
      if (offset != 0 && n > 64 - offset) {
        value |= bits[(word + 1) & (bits.length - 1)] << (64 - offset);
      }
      words[w] = n == 64 ? value : value & ((1L << n) - 1);
    }
    return BitSet.valueOf(words);
  }

  private void setBit(long position) {
    bits[(int) ((position & bitMask) >>> 6)] |= 1L << position;
  }

  private void clearBits(long from, int count) {
    for (long p = from, end = from + count; p < end; ) {
      int word = (int) ((p & bitMask) >>> 6);
      if ((p & 63) == 0 && end - p >= 64) {
        bits[word] = 0;
        p += 64;
      } else {
        bits[word] &= ~(1L << p);
        p++;
      }
    }
  }

  private void growTransactions() {
    int capacity = txEnd.length * 2;
    long[] end = new long[capacity];
    long[] first = new long[capacity];
    int[] count = new int[capacity];
    int[] acknowledged = new int[capacity];
    int[] prefix = new int[capacity];
    int[] ackedEnd = new int[capacity];
    int newMask = capacity - 1;
    for (long seq = head; seq < tail; seq++) {
      int from = (int) seq & txMask;
      int to = (int) seq & newMask;
      end[to] = txEnd[from];
      first[to] = txFirstEvent[from];
      count[to] = txCount[from];
      acknowledged[to] = txAcknowledged[from];
      prefix[to] = txPrefix[from];
      ackedEnd[to] = txAckedEnd[from];
    }
    txEnd = end;
    txFirstEvent = first;
    txCount = count;
    txAcknowledged = acknowledged;
    txPrefix = prefix;
    txAckedEnd = ackedEnd;
    txMask = newMask;
  }

  private void growBits(long pendingFrom) {
    long[] old = bits;
    long oldMask = bitMask;
    bits = new long[old.length * 2];
    bitMask = (long) bits.length * 64 - 1;
    for (long p = pendingFrom; p < nextEvent; p++) {
      if ((old[(int) ((p & oldMask) >>> 6)] & (1L << p)) != 0) {
        setBit(p);
      }
    }
  }
}

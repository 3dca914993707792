package io.datum.cdc.core.feedback;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointException;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Tracks which events of which delivered transactions the application has acknowledged, and
 * computes the watermark: the end LSN of the newest transaction such that it and every earlier
 * transaction of the slot are fully acknowledged. Only the watermark may be reported to PostgreSQL
 * as flushed: the walsender skips, on reconnect, every transaction whose commit record starts
 * before the confirmed position (PostgreSQL source, decode.c, {@code DecodeCommit} and {@code
 * SnapBuildXactNeedsSkip}).
 *
 * <p>Transactions are registered by one thread (the source's), in commit order, before any of their
 * events is delivered ({@link #register}); acknowledgements come from any thread in any order.
 *
 * <h2>Layout</h2>
 *
 * Every registered event gets a position: consecutive 64-bit numbers in registration order. A
 * pending transaction is one entry of a ring indexed by a sequence number assigned at registration
 * (end LSN, first event position, event count: 24 bytes; the ring doubles when full, so at most 48
 * bytes per pending transaction). An event's acknowledgement is one bit in a ring of {@code long}
 * words, each holding 48 events and a 16-bit tag (which lap of the ring the word holds): 1.33 bits
 * per ring slot, and the ring is a power of two at most twice the peak of pending events (it
 * doubles when full), so at most 2.7 bits per pending event. Memory therefore grows with the
 * pending events and transactions, never with the events already behind the watermark.
 *
 * <h2>Acknowledging: lock-free, allocation-free</h2>
 *
 * {@link #record} finds the transaction in O(1) in the usual cases (the last one found, the next
 * one, or one guess from the LSN distance and the mean LSN distance of pending transactions; else
 * an interpolation search over the pending transactions, whose end LSNs ascend) and sets the
 * event's bit with one compare-and-set. The common case is a method small enough to inline. It
 * takes no lock and computes no watermark: the watermark moves lazily, when someone asks for it
 * ({@link #watermark}, {@link #snapshot}) or when {@link #acknowledge} is told to find out. The tag
 * makes a late duplicate acknowledgement (of an event whose ring word was reused for a later lap
 * while the caller was descheduled) fail instead of setting a newer event's bit, and since the tag
 * repeats after 65,536 laps, a position behind the acknowledged prefix is never set; when the ring
 * is replaced (grown, or reset at a reconnect), the old words are overwritten with {@code -1} so a
 * late compare-and-set fails and the caller retries on the new ring, and whatever was set before is
 * merged.
 *
 * <h2>The watermark</h2>
 *
 * Under the coordinator's monitor: the acknowledged prefix of positions (the first position not
 * acknowledged) is scanned forward 48 events per word, each event passed once, and the pending
 * transactions whose events all lie before it complete (found by galloping from the oldest). A
 * snapshot then reads the bits only between that prefix and the newest word with an
 * acknowledgement: O(1) for acknowledgements in commit order, whatever the number of transactions
 * delivered ahead.
 *
 * <p>Public only for the benchmarks module; not API.
 *
 * <p>Fixes of the seed's defects (DESIGN.md): an acknowledgement never registers a transaction
 * (defect 5), and a transaction without events completes at once (defect 6).
 */
public final class FeedbackCoordinator {

  /** Events per ring word; the word's top 16 bits are its tag. */
  static final int EVENTS_PER_WORD = 48;

  private static final long EVENT_BITS = (1L << EVENTS_PER_WORD) - 1;
  private static final long TAG_BITS = 0xFFFF;

  /** Written over every word of a replaced ring, so that a late compare-and-set on it fails. */
  private static final long RETIRED = -1L;

  private static final int MIN_WORDS = 64;
  private static final int MIN_TRANSACTIONS = 64;

  private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);
  private static final VarHandle MAX_ACKED_WORD;
  private static final VarHandle TAIL;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      MAX_ACKED_WORD = lookup.findVarHandle(FeedbackCoordinator.class, "maxAckedWord", long.class);
      TAIL = lookup.findVarHandle(FeedbackCoordinator.class, "tail", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final String slot;

  /**
   * Transactions known from before a restart or reconnect (the store's partial transactions, or the
   * pending ones at a reconnect) that were not registered again yet, with the events acknowledged
   * so far; acknowledgements of them keep counting here. Guarded by the monitor.
   */
  private final Map<Long, Restored> restored = new HashMap<>();

  /** Whether {@link #restored} may be non-empty (read without the monitor). */
  private volatile boolean hasRestored;

  /** Pending transactions: sequence numbers [head, tail). Replaced when it grows or resets. */
  private volatile Transactions transactions = new Transactions(MIN_TRANSACTIONS);

  /** Oldest pending transaction; written under the monitor. */
  private volatile long head;

  /** One past the newest registered transaction; written by the registering thread (release). */
  @SuppressWarnings("unused") // through TAIL
  private volatile long tail;

  /** The acknowledgement bits; a power of two of words. Replaced when it grows or resets. */
  private volatile long[] bits = newRing(MIN_WORDS);

  /** Incremented when pending transactions are forgotten at a reconnect (positions change). */
  private volatile int epoch;

  /** The first event position not known to be acknowledged; written under the monitor. */
  private volatile long prefix;

  /** The newest word (position / 48) holding an acknowledgement; only grows. */
  @SuppressWarnings("unused") // through MAX_ACKED_WORD
  private volatile long maxAckedWord = -1;

  /** The position the next registered event gets; the registering thread's. */
  private long nextEvent;

  /** The first position of the first ring word not tagged for its lap yet; registering thread. */
  private long nextWordStart;

  /**
   * Registration may proceed without looking at the rings while the next sequence number is below
   * this and the new events' positions below {@link #positionLimit}: both computed from a head and
   * prefix that only grow (conservative); registering thread.
   */
  private long transactionLimit = MIN_TRANSACTIONS;

  private long positionLimit = (long) MIN_WORDS * EVENTS_PER_WORD;

  /** The sequence number of the last transaction an acknowledgement found (racy, checked). */
  private long hint;

  /** Pending transactions per LSN byte, estimated at each advance: guesses sequence numbers. */
  private double transactionsPerLsn;

  /** Reused by every snapshot; under the monitor. */
  private final Snapshot snapshotScratch = new Snapshot();

  /** Calls of {@link #advance} that had pending transactions; under the monitor. */
  private int advances;

  /** Written under the monitor. */
  private volatile long watermark;

  /** The end LSN of the last registration; the registering thread's. */
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
      hasRestored = !restored.isEmpty();
    }
  }

  /** Returns the current watermark, moving it over the transactions acknowledged since. */
  public synchronized PgLsn watermark() {
    advance();
    return PgLsn.of(watermark);
  }

  /** Returns true if a registered transaction is not yet fully acknowledged. */
  public synchronized boolean hasPending() {
    advance();
    return head != tail;
  }

  /** Returns the number of registered transactions not yet behind the watermark. */
  public synchronized int pendingTransactions() {
    advance();
    return (int) (tail - head);
  }

  /** Returns the number of events of pending transactions (acknowledged or not). */
  public synchronized long pendingEvents() {
    advance();
    long h = head;
    long t = tail;
    return h == t ? 0 : limitOf(transactions, h, t) - transactions.first(h);
  }

  /**
   * Returns whether a transaction with this end LSN is at or before the watermark, that is, already
   * processed before a restart, so the source must not deliver it again. Called by the registering
   * thread.
   *
   * @param txEndLsn the transaction's end LSN
   * @return true if it must be dropped
   */
  public boolean isAtOrBeforeWatermark(PgLsn txEndLsn) {
    return Long.compareUnsigned(txEndLsn.asLong(), watermark) <= 0;
  }

  /**
   * Returns whether the transaction ending at {@code txEndLsn} was delivered before, as far as this
   * coordinator knows: pending at a reconnect, or partly acknowledged in the stored checkpoint it
   * started from. Ask before {@link #register}.
   *
   * @param txEndLsn the transaction's end LSN
   * @return true if it is a known redelivery
   */
  public boolean wasDeliveredBefore(PgLsn txEndLsn) {
    if (!hasRestored) {
      return false;
    }
    synchronized (this) {
      return restored.containsKey(txEndLsn.asLong());
    }
  }

  /**
   * Registers a committed transaction before its events are delivered. Only the source's thread
   * registers. Allocation-free except when a ring grows (amortised) or restored acknowledgements
   * are handed back.
   *
   * @param txEndLsn the transaction's end LSN; after every transaction registered before
   * @param eventCount the number of events it delivers; 0 completes it at once
   * @return the indexes of events already acknowledged before a restart (do not deliver them
   *     again), or null if none
   * @throws IllegalStateException if {@code txEndLsn} is not after the previous registration
   *     (transactions must arrive in commit order)
   * @throws IllegalArgumentException if {@code eventCount} is negative
   */
  public BitSet register(PgLsn txEndLsn, int eventCount) {
    long end = txEndLsn.asLong();
    long first = nextEvent;
    long last = first + eventCount;
    long seq = tail;
    if (eventCount > 0
        && last <= nextWordStart
        && seq < transactionLimit
        && last <= positionLimit
        && !hasRestored
        && Long.compareUnsigned(end, lastRegisteredEnd) > 0) {
      // the common case, kept small enough to inline: room in both rings, no new ring word
      lastRegisteredEnd = end;
      transactions.put(seq, end, first, eventCount);
      nextEvent = last;
      TAIL.setRelease(this, seq + 1);
      return null;
    }
    return registerAnyhow(txEndLsn, eventCount);
  }

  /** {@link #register} for every case. */
  private BitSet registerAnyhow(PgLsn txEndLsn, int eventCount) {
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
    if (eventCount < 0) {
      throw new IllegalArgumentException("event count " + eventCount + " is negative");
    }
    lastRegisteredEnd = end;
    // a known transaction stays in restored until its registration is published: until then an
    // acknowledgement of it is recorded there, and snapshots list it
    boolean known = false;
    BitSet alreadyAcknowledged = null;
    if (hasRestored) {
      synchronized (this) {
        Restored before = restored.get(end);
        known = before != null;
        if (known && before.eventCount == eventCount && !before.acknowledged.isEmpty()) {
          alreadyAcknowledged = (BitSet) before.acknowledged.clone();
        }
      }
    }
    int preAcknowledged = alreadyAcknowledged == null ? 0 : alreadyAcknowledged.cardinality();
    if (preAcknowledged == eventCount && head == tail) {
      // nothing pending and nothing to wait for: complete at once
      synchronized (this) {
        advance();
        if (head == tail) {
          watermark = end;
          if (known) {
            restored.remove(end);
            hasRestored = !restored.isEmpty();
          }
          return alreadyAcknowledged;
        }
      }
    }
    long first = nextEvent;
    long last = first + eventCount; // exclusive
    long seq = tail;
    if (seq >= transactionLimit || last > positionLimit) {
      synchronized (this) {
        advance();
        if (seq - head >= transactions.capacity()) {
          growTransactions();
        }
        long words = wordOf(last - 1) - wordOf(prefix) + 1;
        if (words > bits.length) {
          growBits(words);
        }
        transactionLimit = head + transactions.capacity();
        positionLimit = (wordOf(prefix) + bits.length) * EVENTS_PER_WORD;
      }
    }
    Transactions txs = transactions;
    if (last > nextWordStart) {
      // words whose first position is new start a lap: tag them, bits clear
      long[] ring = bits;
      long w = nextWordStart / EVENTS_PER_WORD;
      for (; w * EVENTS_PER_WORD < last; w++) {
        WORDS.setRelease(ring, index(ring, w), tag(ring, w) << EVENTS_PER_WORD);
      }
      nextWordStart = w * EVENTS_PER_WORD;
    }
    txs.put(seq, end, first, eventCount);
    nextEvent = last;
    TAIL.setRelease(this, seq + 1);
    if (known || eventCount == 0) {
      synchronized (this) {
        if (known) {
          // published: acknowledgements find it now; take over what restored recorded, including
          // acknowledgements that arrived since it was read above (those are delivered again)
          Restored before = restored.remove(end);
          hasRestored = !restored.isEmpty();
          if (before != null && before.eventCount == eventCount) {
            BitSet acknowledged = before.acknowledged;
            for (int i = acknowledged.nextSetBit(0); i >= 0; i = acknowledged.nextSetBit(i + 1)) {
              setBit(first + i);
            }
          }
        }
        advance();
      }
    }
    return alreadyAcknowledged;
  }

  /**
   * Records the acknowledgement of one event without moving the watermark (it moves when next
   * read). Lock-free and allocation-free; O(1) for acknowledgements in or near commit order.
   *
   * @param offset the event's offset
   * @return true if this call acknowledged the event; false if it was acknowledged before, is
   *     behind the watermark, or belongs to a transaction known from before a reconnect and not
   *     delivered again yet (recorded there)
   * @throws CdcCheckpointException if the offset is of another slot, its transaction was not
   *     delivered, its event count differs from the delivered one, or its index is outside the
   *     transaction
   */
  public boolean record(CdcOffset offset) {
    return mark(offset, false) >= 0;
  }

  /**
   * Records the acknowledgement of one event and moves the watermark if this acknowledgement
   * completes the acknowledged prefix. Lock-free unless the event is the first one not
   * acknowledged.
   *
   * @param offset the event's offset
   * @return true if the watermark moved
   * @throws CdcCheckpointException as {@link #record}
   */
  public boolean acknowledge(CdcOffset offset) {
    long position = mark(offset, false);
    return position >= 0 && advanceFrom(position, position + 1);
  }

  /**
   * Records the acknowledgement of every event of {@code offset}'s transaction and moves the
   * watermark if that completes the acknowledged prefix. O(events / 48).
   *
   * @param offset the offset of any event of the transaction
   * @return true if the watermark moved
   * @throws CdcCheckpointException as {@link #record}
   */
  public boolean acknowledgeTransaction(CdcOffset offset) {
    long first = mark(offset, true);
    return first >= 0 && advanceFrom(first, first + offset.eventCount());
  }

  /**
   * Moves the watermark if the acknowledged prefix reaches into {@code [from, to]}, the positions
   * this caller has just acknowledged. If it does not, an earlier event is unacknowledged (its
   * acknowledgement moves the watermark) or another caller already moved it past them.
   */
  private boolean advanceFrom(long from, long to) {
    long z = prefix;
    if (z < from || z > to) {
      return false;
    }
    synchronized (this) {
      return advance();
    }
  }

  /**
   * Marks an offset's event (or, with {@code wholeTransaction}, all its transaction's events).
   *
   * @return the event's (the transaction's first event's) position if this call marked it, else -1
   */
  private long mark(CdcOffset offset, boolean wholeTransaction) {
    if (!wholeTransaction && offset.slot() == slot) {
      // the common case, kept small enough to inline: the transaction is the one the last
      // acknowledgement found or the next one, the compare-and-set succeeds at once
      int e = epoch;
      Transactions txs = transactions;
      long end = offset.txEndLsn().asLong();
      long seq = hint;
      long hintEnd = txs.end(seq);
      if (hintEnd != end) {
        seq++; // in commit order: the next one
        if (txs.end(seq) != end) {
          // out of order: estimate from the LSN distance (spans < 2^63) and the mean LSN
          // distance of consecutive pending transactions
          seq = hint + (long) ((double) (end - hintEnd) * transactionsPerLsn);
        }
      }
      // an entry whose end LSN matches before and after reading it describes this transaction
      long first = txs.first(seq);
      int count = txs.count(seq);
      if (txs.end(seq) == end && count == offset.eventCount()) {
        long position = first + offset.eventIndex();
        long w = wordOf(position);
        long bit = 1L << (position - w * EVENTS_PER_WORD);
        long[] ring = bits;
        int i = index(ring, w);
        long word = (long) WORDS.getVolatile(ring, i);
        if ((word >>> EVENTS_PER_WORD) == tag(ring, w)
            && (word & bit) == 0
            && position >= prefix
            && WORDS.compareAndSet(ring, i, word, word | bit)
            && epoch == e) {
          if (w > maxAckedWord) {
            noteAcknowledged(w);
          }
          if (seq != hint) {
            hint = seq;
          }
          return position;
        }
      }
    }
    return markAnyhow(offset, wholeTransaction);
  }

  /** {@link #mark} for every case: another slot, a search, a duplicate, a race. */
  private long markAnyhow(CdcOffset offset, boolean wholeTransaction) {
    String offsetSlot = offset.slot();
    if (offsetSlot != slot && !offsetSlot.equals(slot)) {
      throw new CdcCheckpointException(
          "offset " + offset + " belongs to slot \"" + offset.slot() + "\", not \"" + slot + '"');
    }
    long end = offset.txEndLsn().asLong();
    int count = offset.eventCount();
    boolean marked = false;
    while (true) {
      int e = epoch;
      Transactions txs = transactions;
      long seq = locate(txs, end);
      if (seq < 0) {
        return markUnlocated(offset, wholeTransaction);
      }
      long first = txs.first(seq);
      int registeredCount = txs.count(seq);
      if (txs.end(seq) != end) {
        continue; // the entry was reused while read: look again
      }
      if (registeredCount != count) {
        throw new CdcCheckpointException(
            "offset "
                + offset
                + " says the transaction has "
                + count
                + " events, but it was delivered with "
                + registeredCount);
      }
      long position = wholeTransaction ? first : first + offset.eventIndex();
      if (wholeTransaction) {
        marked |= setBits(first, count);
      } else {
        marked |= setBit(position);
      }
      if (epoch != e) {
        continue; // pending transactions were forgotten meanwhile: mark where they are now
      }
      if (hint != seq) {
        hint = seq;
      }
      return marked ? position : -1;
    }
  }

  /**
   * Under the monitor: finds the transaction again (the caller's view may have been stale), or
   * records the acknowledgement on a transaction known from before a reconnect, or rejects it.
   */
  private synchronized long markUnlocated(CdcOffset offset, boolean wholeTransaction) {
    long end = offset.txEndLsn().asLong();
    if (Long.compareUnsigned(end, watermark) <= 0) {
      return -1; // already behind the watermark: acknowledging again is harmless
    }
    Transactions txs = transactions;
    long seq = locate(txs, end);
    if (seq >= 0) {
      int registeredCount = txs.count(seq);
      if (registeredCount != offset.eventCount()) {
        throw new CdcCheckpointException(
            "offset "
                + offset
                + " says the transaction has "
                + offset.eventCount()
                + " events, but it was delivered with "
                + registeredCount);
      }
      long first = txs.first(seq);
      if (wholeTransaction) {
        return setBits(first, registeredCount) ? first : -1;
      }
      long position = first + offset.eventIndex();
      return setBit(position) ? position : -1;
    }
    Restored known = restored.get(end);
    if (known != null && known.eventCount == offset.eventCount()) {
      if (wholeTransaction) {
        known.acknowledged.set(0, known.eventCount);
      } else {
        known.acknowledged.set(offset.eventIndex()); // delivered before a reconnect
      }
      return -1;
    }
    throw new CdcCheckpointException(
        "offset "
            + offset
            + " names a transaction that this source has not delivered (watermark "
            + PgLsn.of(watermark)
            + ')');
  }

  /**
   * Moves the watermark to a keepalive's WAL end when nothing is pending: no registered transaction
   * awaits acknowledgement. The caller (the registering thread) guarantees that no transaction is
   * open or buffered in the source. The walsender reports a WAL end only after all output for that
   * WAL was sent (PostgreSQL source, walsender.c, {@code WalSndKeepalive} sends {@code sentPtr}).
   *
   * @param walEnd the WAL end of the last keepalive
   * @return true if the watermark moved
   */
  public synchronized boolean advanceIdle(PgLsn walEnd) {
    long end = walEnd.asLong();
    advance();
    if (head != tail || Long.compareUnsigned(end, watermark) <= 0) {
      return false;
    }
    watermark = end;
    if (Long.compareUnsigned(end, lastRegisteredEnd) > 0) {
      lastRegisteredEnd = end;
    }
    forgetRestoredUpTo(end);
    return true;
  }

  /**
   * Returns what a store must keep: the watermark and the acknowledged events of the transactions
   * after it. Everything recorded before the call is included.
   *
   * @return a new checkpoint
   */
  public synchronized CdcCheckpoint snapshot() {
    advance();
    List<CdcCheckpoint.PartialTransaction> partial = new ArrayList<>();
    long h = head;
    long t = tail;
    if (h != t) {
      Transactions txs = transactions;
      long[] ring = bits;
      long z = prefix;
      long scanEnd = Math.min(limitOf(txs, h, t), ((long) maxAckedWord + 1) * EVENTS_PER_WORD);
      // the events before the prefix are acknowledged without looking
      long headFirst = txs.first(h);
      if (headFirst < z) {
        scanEnd = Math.max(scanEnd, z);
      }
      long runStart = headFirst < z ? headFirst : nextSet(ring, z, scanEnd);
      if (runStart < scanEnd) { // something acknowledged beyond the watermark
        Snapshot collect = snapshotScratch.reset(txs, h, partial);
        long runEnd = runStart < z ? z : nextClear(ring, runStart, scanEnd);
        while (true) {
          collect.run(runStart, runEnd);
          runStart = nextSet(ring, runEnd, scanEnd);
          if (runStart >= scanEnd) {
            break;
          }
          runEnd = nextClear(ring, runStart, scanEnd);
        }
        collect.finish(t);
        collect.reset(null, 0, null);
      }
    }
    // acknowledgements from before a restart or reconnect whose transactions were not delivered
    // again yet
    for (Map.Entry<Long, Restored> tx : restored.entrySet()) {
      if (Long.compareUnsigned(tx.getKey(), watermark) > 0
          && !tx.getValue().acknowledged.isEmpty()
          && locate(transactions, tx.getKey()) < 0) { // not registered again (listed above) yet
        partial.add(
            new CdcCheckpoint.PartialTransaction(
                PgLsn.of(tx.getKey()), tx.getValue().eventCount, tx.getValue().acknowledged));
      }
    }
    return new CdcCheckpoint(slot, PgLsn.of(watermark), partial);
  }

  /**
   * Forgets the registrations of pending transactions after the connection was lost, keeping their
   * acknowledged events: the server sends them again from the confirmed position, they are
   * registered again, and only their unacknowledged events are delivered again. Acknowledgements of
   * events delivered before the loss still count, also those racing with this call. Called by the
   * registering thread.
   */
  public synchronized void resetPending() {
    advance();
    long h = head;
    long t = tail;
    Transactions old = transactions;
    long[] oldBits = bits;
    long firstPending = h == t ? nextEvent : old.first(h);
    // new positions for whatever comes next. Order matters: a reader that sees the new epoch
    // must find only the fresh (empty) transaction ring, and one that sees the fresh bit ring
    // must see the new epoch at its check after the compare-and-set, and look again
    Transactions fresh = new Transactions(old.capacity());
    transactions = fresh;
    epoch++;
    long[] freshBits = newRing(oldBits.length);
    if (nextEvent % EVENTS_PER_WORD != 0) {
      long w = wordOf(nextEvent);
      freshBits[index(freshBits, w)] = tag(freshBits, w) << EVENTS_PER_WORD;
    }
    bits = freshBits;
    // retire the old words: a compare-and-set that lost the race fails and retries; what was set
    // before is in the value taken here
    long fromWord = wordOf(firstPending);
    long[] captured = new long[(int) (h == t ? 0 : wordOf(nextEvent - 1) - fromWord + 1)];
    for (int i = 0; i < captured.length; i++) {
      captured[i] = (long) WORDS.getAndSet(oldBits, index(oldBits, fromWord + i), RETIRED);
    }
    for (long seq = h; seq < t; seq++) {
      int count = old.count(seq);
      BitSet acknowledged = new BitSet(count);
      for (int i = 0; i < count; i++) {
        long p = old.first(seq) + i;
        long word = captured[(int) (wordOf(p) - fromWord)];
        if ((word & (1L << bitOf(p))) != 0) {
          acknowledged.set(i);
        }
      }
      restored.put(old.end(seq), new Restored(count, acknowledged));
    }
    hasRestored = !restored.isEmpty();
    head = t;
    prefix = nextEvent;
    lastRegisteredEnd = watermark;
  }

  // ---- under the monitor -------------------------------------------------------------------

  /**
   * Moves the acknowledged prefix and the watermark as far as the recorded acknowledgements allow.
   * Under the monitor.
   *
   * @return true if the watermark moved
   */
  private boolean advance() {
    long h = head;
    long t = tail;
    if (h == t) {
      return false;
    }
    Transactions txs = transactions;
    long limit = limitOf(txs, h, t);
    long[] ring = bits;
    long z = prefix;
    while (true) {
      long moved = nextClear(ring, z, limit);
      if (moved != z) {
        prefix = moved;
      }
      z = moved;
      // an acknowledgement of z that compared its position with the old prefix before this
      // write left the advance to us: look at z again after publishing it
      if (z >= limit || !isSet(ring, z)) {
        break;
      }
    }
    if (t - h > 1 && (++advances & 15) == 0) {
      transactionsPerLsn = (double) (t - 1 - h) / (double) (txs.end(t - 1) - txs.end(h));
    }
    // the transactions whose events all lie before z complete; their last positions ascend
    if (txs.last(h) > z) {
      return false;
    }
    // gallop from the head (usually only a few complete), then halve
    long lo = h; // completes
    long step = 1;
    while (lo + step < t && txs.last(lo + step) <= z) {
      lo += step;
      step <<= 1;
    }
    long hi = Math.min(t, lo + step); // first that does not, or t
    while (hi - lo > 1) {
      long mid = (lo + hi) >>> 1;
      if (txs.last(mid) <= z) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    long wm = txs.end(lo);
    watermark = wm;
    head = lo + 1;
    forgetRestoredUpTo(wm);
    return true;
  }

  private void forgetRestoredUpTo(long end) {
    if (hasRestored) {
      restored.keySet().removeIf(e -> Long.compareUnsigned(e, end) <= 0);
      hasRestored = !restored.isEmpty();
    }
  }

  /** The position after the last event of the transactions before {@code t}. */
  private long limitOf(Transactions txs, long h, long t) {
    if (t == h) {
      return prefix;
    }
    return txs.last(t - 1);
  }

  private void growTransactions() {
    Transactions old = transactions;
    Transactions grown = new Transactions(old.capacity() * 2);
    for (long seq = head, t = tail; seq < t; seq++) {
      grown.put(seq, old.end(seq), old.first(seq), old.count(seq));
    }
    transactions = grown; // the old one is never written again: late readers stay consistent
  }

  /** Replaces the bit ring with one of at least {@code words} words, keeping every bit set. */
  private void growBits(long words) {
    long[] old = bits;
    int length = old.length;
    while (length < words) {
      length *= 2;
    }
    long[] grown = newRing(length);
    long fromWord = wordOf(prefix);
    long toWord = wordOf(Math.max(nextEvent, prefix + 1) - 1); // inclusive
    for (long w = fromWord; w <= toWord; w++) {
      grown[index(grown, w)] = tag(grown, w) << EVENTS_PER_WORD;
    }
    bits = grown;
    for (long w = fromWord; w <= toWord; w++) {
      long taken = (long) WORDS.getAndSet(old, index(old, w), RETIRED);
      if ((taken >>> EVENTS_PER_WORD) == tag(old, w)) {
        WORDS.getAndBitwiseOr(grown, index(grown, w), taken & EVENT_BITS);
      }
    }
  }

  // ---- lock-free -----------------------------------------------------------------------------

  /**
   * Returns the sequence number of the pending transaction ending at {@code end}, or -1: the last
   * one found and the one after it first (acknowledgements in commit order hit them), then an
   * interpolation search of the ring, whose end LSNs ascend. A stale view (a ring replaced, an
   * entry reused) at worst misses; the caller checks the entry it gets.
   */
  private long locate(Transactions txs, long end) {
    long h = head;
    long t = (long) TAIL.getAcquire(this);
    long s = hint;
    if (s >= h && s < t) {
      if (txs.end(s) == end) {
        return s;
      }
      if (s + 1 < t && txs.end(s + 1) == end) {
        return s + 1;
      }
    }
    if (h == t) {
      return -1;
    }
    if (txs.end(h) == end) {
      return h;
    }
    // interpolation search: end LSNs of consecutive transactions grow roughly evenly, so the
    // estimate lands on or next to the target; binary steps bound the worst case
    long lo = h + 1;
    long hi = Math.min(t, h + txs.capacity()) - 1;
    boolean interpolate = true;
    while (lo <= hi) {
      long loEnd = txs.end(lo);
      long hiEnd = txs.end(hi);
      if (Long.compareUnsigned(end, loEnd) < 0 || Long.compareUnsigned(end, hiEnd) > 0) {
        return -1;
      }
      long mid;
      if (interpolate && hiEnd != loEnd) {
        double fraction = (double) (end - loEnd) / (double) (hiEnd - loEnd); // spans < 2^63
        mid = lo + (long) (fraction * (hi - lo));
        mid = Math.max(lo, Math.min(hi, mid));
      } else {
        mid = (lo + hi) >>> 1;
      }
      interpolate = !interpolate; // alternate, so a skewed distribution still halves the range
      int c = Long.compareUnsigned(txs.end(mid), end);
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

  /**
   * Sets the bit of event {@code position}: one compare-and-set, retried on the new ring if the
   * ring was replaced meanwhile.
   *
   * @return true if this call set it; false if it was set before or the word holds a later lap (the
   *     event was acknowledged and passed long ago)
   */
  boolean setBit(long position) {
    long w = wordOf(position);
    long bit = 1L << bitOf(position);
    while (true) {
      long[] ring = bits;
      int i = index(ring, w);
      long tag = tag(ring, w);
      long word = (long) WORDS.getVolatile(ring, i);
      if (position < prefix) {
        // acknowledged and passed (the tag alone repeats after 65,536 laps of the ring): the
        // prefix that let this word be tagged for a later lap is visible after reading the word
        return false;
      }
      while ((word >>> EVENTS_PER_WORD) == tag && (word & bit) == 0) {
        long witness = (long) WORDS.compareAndExchange(ring, i, word, word | bit);
        if (witness == word) {
          noteAcknowledged(w);
          return true;
        }
        word = witness;
      }
      if (bits == ring) {
        return false;
      }
    }
  }

  /** Sets the bits of events {@code [first, first + count)}; true if any was not set before. */
  private boolean setBits(long first, int count) {
    boolean any = false;
    long p = first;
    long last = first + count;
    while (p < last) {
      long w = wordOf(p);
      int from = bitOf(p);
      int to = (int) Math.min(EVENTS_PER_WORD, last - w * EVENTS_PER_WORD);
      long mask = ((1L << to) - 1) & (-1L << from); // to <= 48
      while (true) {
        long[] ring = bits;
        int i = index(ring, w);
        long tag = tag(ring, w);
        long word = (long) WORDS.getVolatile(ring, i);
        boolean done = w * EVENTS_PER_WORD + to <= prefix; // passed: see setBit
        while (!done && (word >>> EVENTS_PER_WORD) == tag) {
          if ((word & mask) == mask) {
            done = true;
            break;
          }
          long witness = (long) WORDS.compareAndExchange(ring, i, word, word | mask);
          if (witness == word) {
            noteAcknowledged(w);
            any = true;
            done = true;
            break;
          }
          word = witness;
        }
        if (done || bits == ring) {
          break;
        }
      }
      p = (w + 1) * EVENTS_PER_WORD;
    }
    return any;
  }

  private void noteAcknowledged(long word) {
    long max = maxAckedWord;
    while (word > max) {
      long witness = (long) MAX_ACKED_WORD.compareAndExchange(this, max, word);
      if (witness == max) {
        return;
      }
      max = witness;
    }
  }

  // ---- bit ring arithmetic -------------------------------------------------------------------

  private static long[] newRing(int words) {
    return new long[words];
  }

  private static long wordOf(long position) {
    return position / EVENTS_PER_WORD;
  }

  private static int bitOf(long position) {
    return (int) (position - wordOf(position) * EVENTS_PER_WORD);
  }

  private static int index(long[] ring, long word) {
    return (int) word & (ring.length - 1);
  }

  /** The tag of a word: which lap of this ring it holds. */
  private static long tag(long[] ring, long word) {
    return (word >>> Integer.numberOfTrailingZeros(ring.length)) & TAG_BITS;
  }

  private static boolean isSet(long[] ring, long position) {
    long word = (long) WORDS.getVolatile(ring, index(ring, wordOf(position)));
    return (word & (1L << bitOf(position))) != 0;
  }

  /** Returns the first position in [from, limit) whose bit is clear, or limit. */
  private static long nextClear(long[] ring, long from, long limit) {
    long p = from;
    while (p < limit) {
      long w = wordOf(p);
      long word = (long) WORDS.getVolatile(ring, index(ring, w));
      long clear = ~word & EVENT_BITS & (-1L << bitOf(p));
      if (clear != 0) {
        return Math.min(limit, w * EVENTS_PER_WORD + Long.numberOfTrailingZeros(clear));
      }
      p = (w + 1) * EVENTS_PER_WORD;
    }
    return limit;
  }

  /** Returns the first position in [from, limit) whose bit is set, or limit. */
  private static long nextSet(long[] ring, long from, long limit) {
    long p = from;
    while (p < limit) {
      long w = wordOf(p);
      long word = (long) WORDS.getVolatile(ring, index(ring, w));
      long set = word & EVENT_BITS & (-1L << bitOf(p));
      if (set != 0) {
        return Math.min(limit, w * EVENTS_PER_WORD + Long.numberOfTrailingZeros(set));
      }
      p = (w + 1) * EVENTS_PER_WORD;
    }
    return limit;
  }

  // ---- types -----------------------------------------------------------------------------------

  /**
   * The pending transactions' ring: entries of three longs (end LSN, first event position, event
   * count: 24 bytes, mostly on one cache line) indexed by sequence number modulo the capacity.
   * Written by the registering thread only (an entry's end LSN first, then its position and count
   * with release, so a reader that sees either new value sees the new end LSN too).
   */
  private static final class Transactions {
    private static final int STRIDE = 3;
    final long[] entries;
    final int mask;

    Transactions(int capacity) {
      entries = new long[capacity * STRIDE];
      mask = capacity - 1;
    }

    int capacity() {
      return mask + 1;
    }

    private int at(long seq) {
      return ((int) seq & mask) * STRIDE;
    }

    /** The end LSN (read with acquire: entries are reused). */
    long end(long seq) {
      return (long) WORDS.getAcquire(entries, at(seq));
    }

    long first(long seq) {
      return (long) WORDS.getAcquire(entries, at(seq) + 1);
    }

    int count(long seq) {
      return (int) (long) WORDS.getAcquire(entries, at(seq) + 2);
    }

    /** The position after the transaction's last event. */
    long last(long seq) {
      int i = at(seq);
      return entries[i + 1] + entries[i + 2];
    }

    void put(long seq, long txEnd, long txFirst, int txCount) {
      int i = at(seq);
      entries[i] = txEnd;
      WORDS.setRelease(entries, i + 1, txFirst);
      WORDS.setRelease(entries, i + 2, (long) txCount);
    }
  }

  /**
   * Turns runs of acknowledged positions, in ascending order, into the acknowledged ranges of the
   * pending transactions they fall in.
   */
  private static final class Snapshot {
    private Transactions txs;
    private List<CdcCheckpoint.PartialTransaction> partial;
    private long seq;
    private int[] ranges = new int[16];
    private int n;

    /** Starts collecting for one snapshot; the instance is reused (under the monitor). */
    Snapshot reset(Transactions txs, long head, List<CdcCheckpoint.PartialTransaction> partial) {
      this.txs = txs;
      this.seq = head;
      this.partial = partial;
      this.n = 0;
      return this;
    }

    /** Adds the acknowledged positions [from, to), split at transaction boundaries. */
    void run(long from, long to) {
      while (from < to) {
        long txFirst = txs.first(seq);
        long txLast = txs.last(seq);
        if (txLast <= from) {
          flush();
          seq++;
          continue;
        }
        long upTo = Math.min(to, txLast);
        add((int) (from - txFirst), (int) (upTo - txFirst));
        from = upTo;
      }
    }

    void finish(long tail) {
      if (seq < tail) {
        flush();
      }
    }

    private void add(int from, int to) {
      if (n > 0 && ranges[n - 1] == from) {
        ranges[n - 1] = to;
        return;
      }
      if (n == ranges.length) {
        ranges = Arrays.copyOf(ranges, n * 2);
      }
      ranges[n++] = from;
      ranges[n++] = to;
    }

    private void flush() {
      if (n > 0) {
        partial.add(
            CdcCheckpoint.PartialTransaction.ofRanges(
                PgLsn.of(txs.end(seq)), txs.count(seq), Arrays.copyOf(ranges, n)));
        n = 0;
      }
    }
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
}

package io.datum.cdc.core.feedback;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointException;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.ClusterIdentity;
import io.datum.cdc.PgLsn;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Objects;

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
 * (end LSN, first event position, event count, commit time: 32 bytes; the ring doubles when full,
 * so at most 64 bytes per pending transaction). An event's acknowledgement is one bit in a ring of
 * {@code long} words, each holding 48 events and a 16-bit tag (which lap of the ring the word
 * holds): 1.33 bits per ring slot, and the ring is a power of two at most twice the peak of pending
 * events (it doubles when full), so at most 2.7 bits per pending event. Memory therefore grows with
 * the pending events and transactions, never with the events already behind the watermark.
 *
 * <h2>Acknowledging: lock-free, allocation-free</h2>
 *
 * {@link #record} finds the transaction in O(1) in the usual cases (the last one found, the next
 * one, or one guess from the LSN distance and the mean LSN distance of pending transactions; else
 * an interpolation search over the pending transactions, whose end LSNs ascend) and sets the
 * event's bit with one compare-and-set. The common case is a method small enough to inline. It
 * takes no lock and computes no watermark: the watermark moves lazily, when someone asks for it
 * ({@link #watermark}, {@link #checkpoint}) or when {@link #acknowledge} is told to find out. The
 * tag makes a late duplicate acknowledgement (of an event whose ring word was reused for a later
 * lap while the caller was descheduled) fail instead of setting a newer event's bit, and since the
 * tag repeats after 65,536 laps, a position behind the acknowledged prefix is never set; when the
 * ring is replaced (grown, or reset at a reconnect), the old words are overwritten with {@code -1}
 * so a late compare-and-set fails and the caller retries on the new ring, and whatever was set
 * before is merged.
 *
 * <h2>The watermark</h2>
 *
 * Under the coordinator's monitor: the acknowledged prefix of positions (the first position not
 * acknowledged) is scanned forward 48 events per word, each event passed once, and the pending
 * transactions whose events all lie before it complete (found by galloping from the oldest). A
 * checkpoint then reads the bits only between that prefix and the newest word with an
 * acknowledgement, skipping 64 words at a time where a summary bit per word says a word holds no
 * acknowledgement, and skipping the longest run of acknowledged events the previous checkpoint
 * found; a stretch of whole transactions inside a run becomes one {@link
 * io.datum.cdc.CdcCheckpoint.AcknowledgedRun}, found by galloping search. So a checkpoint costs
 * O(gaps in what was acknowledged), whatever the number of transactions delivered or acknowledged
 * ahead.
 *
 * <h2>Parts</h2>
 *
 * {@link PendingTransactions} is the ring of pending transactions and finds one by end LSN; {@link
 * AckRing}, this class's base, holds the bit ring and its lock-free writes; {@link
 * RestoredTransactions} holds what is known from before a restart or reconnect (read from the
 * stored checkpoint, or from the pending transactions and the bit ring at a reset) and hands it
 * back when a transaction is registered again; {@link CheckpointCollector} turns the bits into a
 * checkpoint's ranges. This class registers, records, and moves the watermark.
 *
 * <p>Unlike the checkpoint code this project ports, an acknowledgement never registers a
 * transaction, and a transaction without events completes at once.
 *
 * <p>Public only for the benchmarks module; not API.
 */
public final class FeedbackCoordinator extends AckRing {

  private static final int MIN_WORDS = 64;
  private static final int MIN_TRANSACTIONS = 64;

  private static final VarHandle TAIL;

  static {
    try {
      TAIL = MethodHandles.lookup().findVarHandle(FeedbackCoordinator.class, "tail", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final String slot;

  /** The cluster the positions belong to, carried by every checkpoint; null while unknown. */
  private volatile ClusterIdentity cluster;

  /** The publication the positions were streamed with, carried by every checkpoint; or null. */
  private volatile String publication;

  /**
   * Transactions known from before a restart or reconnect (the store's partial transactions, or the
   * pending ones at a reconnect) that were not registered again yet, with the events acknowledged
   * so far; acknowledgements of them keep counting here. Guarded by the monitor.
   */
  private final RestoredTransactions restored = new RestoredTransactions();

  /** Whether {@link #restored} may be non-empty (read without the monitor). */
  private volatile boolean hasRestored;

  /** Pending transactions: sequence numbers [head, tail). Replaced when it grows or resets. */
  private volatile PendingTransactions transactions = new PendingTransactions(MIN_TRANSACTIONS);

  /** Oldest pending transaction; written under the monitor. */
  private volatile long head;

  /** One past the newest registered transaction; written by the registering thread (release). */
  @SuppressWarnings("unused") // through TAIL
  private volatile long tail;

  /** Incremented when pending transactions are forgotten at a reconnect (positions change). */
  private volatile int epoch;

  /** The position the next registered event gets; the registering thread's. */
  private long nextEvent;

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

  /** Reused by every checkpoint; under the monitor. */
  private final CheckpointCollector checkpointScratch = new CheckpointCollector();

  /** Calls of {@link #advance} that had pending transactions; under the monitor. */
  private int advances;

  /** Written under the monitor. */
  private volatile long watermark;

  /** The end LSN of the last registration; the registering thread's. */
  private long lastRegisteredEnd;

  /**
   * The events of the transactions the watermark passed, counted once per transaction when it
   * passes; written under the monitor (once per watermark move, not per acknowledgement).
   */
  private volatile long eventsAcknowledged;

  /**
   * @param slot the slot whose acknowledgements this tracks
   * @param checkpoint the stored checkpoint to resume from, or null to start at {@code 0/0}
   */
  public FeedbackCoordinator(String slot, CdcCheckpoint checkpoint) {
    super(MIN_WORDS);
    this.slot = slot;
    this.watermark = checkpoint == null ? 0L : checkpoint.watermark().asLong();
    this.lastRegisteredEnd = watermark;
    if (checkpoint != null) {
      restored.putAll(checkpoint);
      hasRestored = !restored.isEmpty();
      cluster = checkpoint.cluster();
      publication = checkpoint.publication();
    }
  }

  /**
   * Returns the publication checkpoints carry: the stored checkpoint's until {@link
   * #publication(String)} sets the one streamed with.
   *
   * @return the publication, or null if unknown
   */
  public String publication() {
    return publication;
  }

  /**
   * Sets the publication every later checkpoint carries, once streaming with it started.
   *
   * @param name the publication, not null
   */
  public void publication(String name) {
    this.publication = Objects.requireNonNull(name, "name");
  }

  /**
   * Returns the cluster identity checkpoints carry: the stored checkpoint's until {@link
   * #cluster(ClusterIdentity)} sets the server's.
   *
   * @return the identity, or null if unknown
   */
  public ClusterIdentity cluster() {
    return cluster;
  }

  /**
   * Sets the cluster identity every later checkpoint carries, once the server was identified and
   * found to match (or accepted as a change).
   *
   * @param identity the server's identity, not null
   */
  public void cluster(ClusterIdentity identity) {
    this.cluster = Objects.requireNonNull(identity, "identity");
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
   * Returns the events of the transactions the watermark passed since this coordinator was made,
   * each transaction's counted once, when the watermark passes it (events acknowledged before a
   * restart or reconnect and not delivered again included). Moves the watermark first.
   *
   * @return the count, never negative
   */
  public synchronized long eventsAcknowledged() {
    advance();
    return eventsAcknowledged;
  }

  /**
   * Returns the commit time of the oldest transaction not behind the watermark, the one the
   * watermark waits for, as given to {@link #register(PgLsn, int, long)}. Moves the watermark
   * first.
   *
   * @return microseconds since 1970-01-01 UTC; 0 if that transaction's commit time is unknown;
   *     {@link Long#MIN_VALUE} if no registered transaction is pending
   */
  public synchronized long oldestPendingCommitMicros() {
    advance();
    return head == tail ? Long.MIN_VALUE : transactions.commitMicros(head);
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
      return restored.contains(txEndLsn.asLong());
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
    return register(txEndLsn, eventCount, 0);
  }

  /**
   * {@link #register(PgLsn, int)} with the transaction's commit time, which {@link
   * #oldestPendingCommitMicros()} reports while the transaction is pending.
   *
   * @param txEndLsn the transaction's end LSN; after every transaction registered before
   * @param eventCount the number of events it delivers; 0 completes it at once
   * @param commitMicros the commit time in microseconds since 1970-01-01 UTC, 0 if unknown
   * @return as {@link #register(PgLsn, int)}
   * @throws IllegalStateException as {@link #register(PgLsn, int)}
   * @throws IllegalArgumentException as {@link #register(PgLsn, int)}
   */
  public BitSet register(PgLsn txEndLsn, int eventCount, long commitMicros) {
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
      transactions.put(seq, end, first, eventCount, commitMicros);
      nextEvent = last;
      TAIL.setRelease(this, seq + 1);
      return null;
    }
    return registerAnyhow(txEndLsn, eventCount, commitMicros);
  }

  /** {@link #register} for every case. */
  private BitSet registerAnyhow(PgLsn txEndLsn, int eventCount, long commitMicros) {
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
    // acknowledgement of it is recorded there, and checkpoints list it
    boolean known = false;
    BitSet alreadyAcknowledged = null;
    if (hasRestored) {
      synchronized (this) {
        RestoredTransactions.Restored before = restored.get(end);
        known = before != null;
        alreadyAcknowledged = known ? before.acknowledgedOf(eventCount) : null;
      }
    }
    int preAcknowledged = alreadyAcknowledged == null ? 0 : alreadyAcknowledged.cardinality();
    if (preAcknowledged == eventCount && head == tail) {
      // nothing pending and nothing to wait for: complete at once
      synchronized (this) {
        advance();
        if (head == tail) {
          watermark = end;
          eventsAcknowledged += eventCount;
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
        transactionLimit = head + transactions.capacity();
        positionLimit = makeRoom(last, nextEvent);
      }
    }
    PendingTransactions txs = transactions;
    if (last > nextWordStart) {
      startLaps(last); // words whose first position is new start a lap
    }
    txs.put(seq, end, first, eventCount, commitMicros);
    nextEvent = last;
    TAIL.setRelease(this, seq + 1);
    if (known || eventCount == 0) {
      synchronized (this) {
        if (known) {
          // published: acknowledgements find it now; take over what restored recorded, including
          // acknowledgements that arrived since it was read above (those are delivered again),
          // unless a checkpoint did so already
          takeOver(txs, seq);
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
    return mark(offset, wholeTransaction, epoch);
  }

  /**
   * {@link #mark(CdcOffset, boolean)} by a thread that read the epoch {@code e} before anything
   * else (a test passes an epoch read before a reset: a thread descheduled after reading it).
   */
  long mark(CdcOffset offset, boolean wholeTransaction, int e) {
    if (!wholeTransaction && offset.slot() == slot) {
      // the common case, kept small enough to inline: the transaction is the one the last
      // acknowledgement found or the next one, the compare-and-set succeeds at once
      PendingTransactions txs = transactions;
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
        // the epoch again before the compare-and-set: a thread descheduled between reading the
        // epoch and the transactions may find its transaction registered again after a reset, at
        // its fresh position in the fresh ring. Its compare-and-set there acknowledges the event,
        // but the check after it would fail, and markAnyhow would find the bit set and return -1
        // (record false, acknowledge not moving the watermark it completed). Unchanged here, the
        // epoch says the rings read above are its own; changed after, the bit went to the old
        // ring, which resetPending retires, taking it
        if ((word >>> EVENTS_PER_WORD) == tag(ring, w)
            && (word & bit) == 0
            && position >= prefix
            && epoch == e) {
          // noted before the bit is set, so whoever sees the bit sees them (see occupied)
          if ((word & EVENT_BITS) == 0) {
            noteOccupied(i);
          }
          if (w > maxAckedWord) {
            noteAcknowledged(w);
          }
          if (WORDS.compareAndSet(ring, i, word, word | bit) && epoch == e) {
            if (seq != hint) {
              hint = seq;
            }
            return position;
          }
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
      PendingTransactions txs = transactions;
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
        throw countMismatch(offset, registeredCount);
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
    PendingTransactions txs = transactions;
    long seq = locate(txs, end);
    if (seq >= 0) {
      int registeredCount = txs.count(seq);
      if (registeredCount != offset.eventCount()) {
        throw countMismatch(offset, registeredCount);
      }
      long first = txs.first(seq);
      if (wholeTransaction) {
        return setBits(first, registeredCount) ? first : -1;
      }
      long position = first + offset.eventIndex();
      return setBit(position) ? position : -1;
    }
    if (restored.acknowledge(end, offset.eventCount(), offset.eventIndex(), wholeTransaction)) {
      return -1; // delivered before a reconnect, not registered again yet
    }
    throw new CdcCheckpointException(
        "offset "
            + offset
            + " names a transaction that this source has not delivered (watermark "
            + PgLsn.of(watermark)
            + ')');
  }

  private static CdcCheckpointException countMismatch(CdcOffset offset, int registeredCount) {
    return new CdcCheckpointException(
        "offset "
            + offset
            + " says the transaction has "
            + offset.eventCount()
            + " events, but it was delivered with "
            + registeredCount);
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
  public synchronized CdcCheckpoint checkpoint() {
    advance();
    List<CdcCheckpoint.PartialTransaction> partial = new ArrayList<>();
    List<CdcCheckpoint.AcknowledgedRun> runs = new ArrayList<>();
    long h = head;
    long t = tail;
    // restored entries ending at or before this were registered again (listed from the rings) or
    // not sent again (and will not be)
    long bound = watermark;
    if (h != t) {
      PendingTransactions txs = transactions;
      if (hasRestored) {
        // the newest registration may be published without its restored acknowledgements taken
        // over yet: take them over now, so that they are listed from the rings
        takeOver(txs, t - 1);
      }
      bound = txs.end(t - 1);
      checkpointScratch.collect(txs, h, t, this, partial, runs);
    }
    // acknowledgements from before a restart or reconnect whose transactions were not delivered
    // again yet
    if (hasRestored) {
      restored.addTo(bound, partial, runs);
    }
    return new CdcCheckpoint(slot, PgLsn.of(watermark), partial, runs, cluster, publication);
  }

  /**
   * Under the monitor: moves what {@link #restored} recorded for the registered transaction {@code
   * seq} into the bit ring, if it still holds it.
   */
  private void takeOver(PendingTransactions txs, long seq) {
    long end = txs.end(seq);
    RestoredTransactions.Restored before = restored.remove(end);
    if (before == null) {
      return;
    }
    hasRestored = !restored.isEmpty();
    before.markIn(this, txs.first(seq), txs.count(seq));
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
    PendingTransactions old = transactions;
    // the events before the prefix are acknowledged whatever the ring holds there: a grown ring
    // kept only the words from the prefix's on, and a word before it may hold a later lap already
    // (registration may tag words up to a ring's length past the prefix's)
    long z = prefix;
    // new positions for whatever comes next. Order matters: a reader that sees the new epoch
    // must find only the fresh (empty) transaction ring, and one that sees the fresh bit ring
    // must see the new epoch at its check after the compare-and-set, and look again
    transactions = new PendingTransactions(old.capacity());
    epoch++;
    // retire the old words from the prefix's on (at most the ring's length): a compare-and-set
    // that lost the race fails and retries on the fresh ring; what was set before is in the value
    // taken here
    long fromWord = wordOf(z);
    int words = (int) (h == t ? 0 : Math.max(0, wordOf(nextEvent - 1) - fromWord + 1));
    long[] captured = resetBits(nextEvent, fromWord, words);
    restored.putPending(old, h, t, z, captured, fromWord);
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
    PendingTransactions txs = transactions;
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
    long lo = txs.newestCompleteBefore(h, t, z);
    long wm = txs.end(lo);
    eventsAcknowledged += txs.last(lo) - txs.first(h); // consecutive positions
    watermark = wm;
    head = lo + 1;
    forgetRestoredUpTo(wm);
    return true;
  }

  private void forgetRestoredUpTo(long end) {
    if (hasRestored) {
      restored.forgetUpTo(end);
      hasRestored = !restored.isEmpty();
    }
  }

  /** The position after the last event of the transactions before {@code t}. */
  private long limitOf(PendingTransactions txs, long h, long t) {
    if (t == h) {
      return prefix;
    }
    return txs.last(t - 1);
  }

  private void growTransactions() {
    // the old ring is never written again: late readers stay consistent
    transactions = transactions.grown(head, tail);
  }

  // ---- lock-free -----------------------------------------------------------------------------

  /**
   * Finds the pending transaction ending at {@code end} (see {@link PendingTransactions#locate}).
   */
  private long locate(PendingTransactions txs, long end) {
    return txs.locate(end, head, (long) TAIL.getAcquire(this), hint);
  }
}

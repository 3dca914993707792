package io.datum.cdc.core.feedback;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcException;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SnapshotProgress;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The application's acknowledgement path: marks the event in the {@link FeedbackCoordinator} and
 * stores the resulting {@link CdcCheckpoint} (the watermark and the acknowledged events beyond it).
 * The replication loop reports only {@link #durableWatermark()} as flushed, so PostgreSQL never
 * confirms a position the store does not hold.
 *
 * <p>When a store happens depends on the durability mode:
 *
 * <ul>
 *   <li>per transaction: when the watermark moves (once per transaction acknowledged in order), at
 *       a keepalive advance, and at stop. After a crash, events acknowledged since the last store
 *       are delivered again.
 *   <li>per event (default): every acknowledgement returns only once a stored checkpoint includes
 *       it, so no event whose acknowledgement returned is delivered again. Concurrent
 *       acknowledgements are group-committed here (one snapshot and one store for all the callers
 *       waiting while the previous store ran) and again by the store. Cost for a single caller: one
 *       snapshot (O(1) for acknowledgements in commit order; at most O(positions between the first
 *       unacknowledged and the newest acknowledged event / 48)) and one store write per call. The
 *       acknowledgement itself is recorded lock-free; only the stores are serialised.
 * </ul>
 *
 * <p>Stores are serialised by one lock, so stored checkpoints never go backwards.
 *
 * <p>Public only for the benchmarks module; not API.
 */
public final class SourceCheckpointHandle implements CdcCheckpointHandle {

  private final FeedbackCoordinator coordinator;
  private final SnapshotAcknowledgements snapshots;
  private final CdcCheckpointStore store;
  private final Executor asyncExecutor;
  private final Consumer<CdcException> onStoreFailure;
  private final Runnable onWatermarkMoved;
  private final boolean durableEachAcknowledgement;
  private final Object storeLock = new Object();

  /** Guards {@link #nextAsync}. */
  private final Object asyncLock = new Object();

  /**
   * The future of the acknowledgements of {@link #acknowledgeAsync} waiting for a background store
   * that was scheduled but did not begin yet; null when none is scheduled. Guarded by asyncLock.
   */
  private CompletableFuture<Void> nextAsync;

  /**
   * The least time from the start of a store's write to the start of a background store of {@link
   * #acknowledgeAsync} (measured where the store is handed the checkpoint). Under a steady stream
   * of acknowledgements, stores ran back to back: with a {@code file:} store, one per transaction
   * at 1,000 transactions/s, each a file created, written, fsynced and renamed and its directory
   * fsynced, a seventh of a core in this thread plus the kernel's writeback, taken from the threads
   * that deliver changes (docs/benchmarks.md, "Latency under a steady load"). The first store after
   * a quiet spell begins at once; under load at most 100 stores a second are made, and an
   * acknowledgement's future completes at most this much later than it would have.
   */
  static final long ASYNC_STORE_GAP_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  /** When the last store began writing ({@link System#nanoTime}); written under storeLock. */
  private volatile long lastStoreBeganNanos;

  /** Whether a store began writing already; written under storeLock. */
  private volatile boolean storeBegan;

  private volatile PgLsn durableWatermark;
  private volatile PgLsn durableHold;
  private volatile Supplier<PgLsn> flushLimit;

  /**
   * Stores begun so far, each numbered by this count; written under storeLock. An acknowledgement
   * that reads {@code n} after it was recorded is included by every store numbered above n.
   */
  private volatile long storesBegun;

  /** The number of the last store that completed; written under storeLock. */
  private volatile long storesDone;

  /** The thread that stores for a group of acknowledging threads ({@link #persistAfter}). */
  private final java.util.concurrent.locks.ReentrantLock leader =
      new java.util.concurrent.locks.ReentrantLock();

  /** Notified when the leader of {@link #persistAfter} is done, however its store ended. */
  private final Object storeEnded = new Object();

  /** What the last completed store wrote; storeLock. */
  private CdcCheckpoint lastStored;

  /**
   * @param coordinator the source's coordinator
   * @param snapshots the source's snapshot acknowledgements
   * @param store where checkpoints go
   * @param asyncExecutor runs the stores of {@link #acknowledgeAsync}
   * @param onStoreFailure told about a failed store before it is thrown (stops the source)
   * @param onWatermarkMoved told after a store moved the durable watermark (wakes the loop)
   * @param durableEachAcknowledgement per-event durability: every acknowledgement is stored before
   *     it returns
   */
  public SourceCheckpointHandle(
      FeedbackCoordinator coordinator,
      SnapshotAcknowledgements snapshots,
      CdcCheckpointStore store,
      Executor asyncExecutor,
      Consumer<CdcException> onStoreFailure,
      Runnable onWatermarkMoved,
      boolean durableEachAcknowledgement) {
    this.coordinator = coordinator;
    this.snapshots = snapshots;
    this.store = store;
    this.asyncExecutor = asyncExecutor;
    this.onStoreFailure = onStoreFailure;
    this.onWatermarkMoved = onWatermarkMoved;
    this.durableEachAcknowledgement = durableEachAcknowledgement;
    this.durableWatermark = coordinator.watermark();
    // what the store holds, as far as it matters
    this.lastStored = coordinator.checkpoint().withSnapshot(snapshots.progress());
    this.durableHold = snapshots.holdLsn();
  }

  /**
   * A handle of a source without snapshots (benchmarks and tests).
   *
   * @param coordinator the source's coordinator
   * @param store where checkpoints go
   * @param asyncExecutor runs the stores of {@link #acknowledgeAsync}
   * @param onStoreFailure told about a failed store before it is thrown
   * @param onWatermarkMoved told after a store moved the durable watermark
   * @param durableEachAcknowledgement per-event durability
   */
  public SourceCheckpointHandle(
      FeedbackCoordinator coordinator,
      CdcCheckpointStore store,
      Executor asyncExecutor,
      Consumer<CdcException> onStoreFailure,
      Runnable onWatermarkMoved,
      boolean durableEachAcknowledgement) {
    this(
        coordinator,
        new SnapshotAcknowledgements(SnapshotProgress.NONE),
        store,
        asyncExecutor,
        onStoreFailure,
        onWatermarkMoved,
        durableEachAcknowledgement);
  }

  /**
   * One kind of acknowledged event's bookkeeping behind the handle's one entry point: the stream's
   * changes ({@link FeedbackCoordinator}: transactions, the watermark) or the snapshots' read rows
   * ({@link SnapshotAcknowledgements}: chunks, the snapshot progress). Each says when an
   * acknowledgement needs a store, under the source's durability; the handle stores the same way
   * for both.
   */
  private interface Tracker {
    /**
     * Records one acknowledged event.
     *
     * @return whether a store must include it before it counts as done
     */
    boolean record(CdcOffset offset);

    /**
     * Records the acknowledgement of the event's whole unit: its transaction, or a read row's
     * chunk.
     *
     * @return whether a store must follow (always with per-event durability)
     */
    boolean recordUnit(CdcOffset offset);
  }

  /** The stream's changes. */
  private final class Changes implements Tracker {
    @Override
    public boolean record(CdcOffset offset) {
      if (durableEachAcknowledgement) {
        coordinator.record(offset); // lock-free: the store's checkpoint moves the watermark
        return true;
      }
      return coordinator.acknowledge(offset); // per transaction: when the prefix grew
    }

    @Override
    public boolean recordUnit(CdcOffset offset) {
      return coordinator.acknowledgeTransaction(offset) || durableEachAcknowledgement;
    }
  }

  /** The snapshots' read rows; per transaction durability, a row's chunk plays its part. */
  private final class Reads implements Tracker {
    @Override
    public boolean record(CdcOffset offset) {
      int recorded = snapshots.recordRow(offset); // one lock for the row and its chunk
      return recorded == SnapshotAcknowledgements.ROW_SETTLED_CHUNK
          || (recorded == SnapshotAcknowledgements.ROW_RECORDED && durableEachAcknowledgement);
    }

    @Override
    public boolean recordUnit(CdcOffset offset) {
      return snapshots.recordChunk(offset) || durableEachAcknowledgement;
    }
  }

  private final Tracker changes = new Changes();
  private final Tracker reads = new Reads();

  private Tracker tracker(CdcOffset offset) {
    return offset.isSnapshotRead() ? reads : changes;
  }

  @Override
  public void acknowledge(CdcOffset offset) {
    if (tracker(offset).record(offset)) {
      persistAfter(storesBegun);
    }
  }

  @Override
  public void acknowledgeTransaction(CdcOffset offset) {
    if (tracker(offset).recordUnit(offset)) {
      persistAfter(storesBegun);
    }
  }

  /**
   * Acknowledges several events with at most one store write: each is recorded as by {@link
   * #acknowledge}, then the checkpoint is stored once if one of them needs it (a parallel handler
   * thread's share of a transaction, {@code acknowledgeTransaction}).
   *
   * @param offsets offsets of delivered events, not null, none null
   * @throws io.datum.cdc.CdcCheckpointException as {@link #acknowledge}, for the first offset that
   *     is not valid; the ones before it are recorded
   * @throws CdcStoreException if the store failed
   */
  public void acknowledgeEach(java.util.List<CdcOffset> offsets) {
    boolean store = false;
    for (CdcOffset offset : offsets) {
      store |= tracker(offset).record(offset);
    }
    if (store) {
      persistAfter(storesBegun);
    }
  }

  /**
   * Returns whether an event's acknowledgement needs nothing more: for a change, its transaction is
   * at or before the stored watermark; for a read row, its chunk was completely acknowledged (or
   * given up: it is read again).
   *
   * @param offset a delivered event's offset, not null
   * @return true if acknowledging it again would change nothing
   */
  public boolean acknowledged(CdcOffset offset) {
    if (offset.isSnapshotRead()) {
      return snapshots.chunkSettled(offset);
    }
    return !offset.txEndLsn().isAfter(durableWatermark);
  }

  @Override
  public CompletableFuture<Void> acknowledgeAsync(CdcOffset offset) {
    try {
      if (!tracker(offset).record(offset)) {
        return CompletableFuture.completedFuture(null);
      }
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    // the acknowledgements recorded while no background store is scheduled form one cohort,
    // completed by one store that begins after the last of them joined: one executor task per
    // store, not one per acknowledgement (each task woke the executor's thread)
    CompletableFuture<Void> cohort;
    boolean schedule = false;
    synchronized (asyncLock) {
      cohort = nextAsync;
      if (cohort == null) {
        cohort = new CompletableFuture<>();
        nextAsync = cohort;
        schedule = true;
      }
    }
    if (schedule) {
      try {
        asyncExecutor.execute(this::storeAsyncCohort);
      } catch (RuntimeException e) {
        synchronized (asyncLock) {
          if (nextAsync == cohort) {
            nextAsync = null;
          }
        }
        cohort.completeExceptionally(e);
      }
    }
    // a future of the caller's own: completing or cancelling it does not touch the others'
    return cohort.copy();
  }

  /**
   * Runs on the executor of {@link #acknowledgeAsync}: closes the current cohort, then returns once
   * a store that began after that completed (every acknowledgement of the cohort was recorded
   * before it joined the cohort), and completes the cohort's future with the outcome.
   */
  private void storeAsyncCohort() {
    if (storeBegan) {
      // acknowledgements made meanwhile join this cohort; an interrupt (the executor shutting
      // down) ends the wait: the store then comes sooner
      long wait;
      while ((wait = lastStoreBeganNanos + ASYNC_STORE_GAP_NANOS - System.nanoTime()) > 0
          && !Thread.currentThread().isInterrupted()) {
        LockSupport.parkNanos(this, wait);
      }
    }
    CompletableFuture<Void> cohort;
    synchronized (asyncLock) {
      cohort = nextAsync;
      nextAsync = null;
    }
    if (cohort == null) {
      return;
    }
    try {
      persistAfter(storesBegun);
      cohort.complete(null);
    } catch (Throwable t) {
      cohort.completeExceptionally(t);
      if (t instanceof Error e) {
        throw e;
      }
    }
  }

  @Override
  public PgLsn watermark() {
    return durableWatermark;
  }

  /** Returns the newest watermark the store holds. */
  public PgLsn durableWatermark() {
    return durableWatermark;
  }

  /**
   * Returns the only position that may be confirmed to PostgreSQL: the durable watermark, but not
   * past the stored initial snapshot's consistent point while that snapshot is not complete.
   */
  public PgLsn flushPosition() {
    PgLsn w = durableWatermark;
    PgLsn hold = durableHold;
    if (hold != null && w.isAfter(hold)) {
      w = hold;
    }
    Supplier<PgLsn> limit = flushLimit;
    if (limit != null) {
      PgLsn cap = Objects.requireNonNull(limit.get(), "the confirmed flush limit returned null");
      if (w.isAfter(cap)) {
        w = cap;
      }
    }
    return w;
  }

  /**
   * Caps {@link #flushPosition()} at what {@code limit} returns (the builder's {@code
   * confirmedFlushLimit}).
   *
   * @param limit fast, non-blocking, thread-safe; returns never null
   */
  public void limitFlush(Supplier<PgLsn> limit) {
    this.flushLimit = Objects.requireNonNull(limit, "limit");
  }

  /** Returns the snapshot progress the store holds (what was loaded, or stored since). */
  public SnapshotProgress storedSnapshot() {
    synchronized (storeLock) {
      return lastStored.snapshot();
    }
  }

  /** Returns true once a stored checkpoint records the slot's initial snapshot as complete. */
  public boolean storedInitialCompleted() {
    synchronized (storeLock) {
      return lastStored.snapshot().initialCompleted();
    }
  }

  /**
   * Stores the current acknowledgements and snapshot progress now (the plan of a snapshot that
   * starts, so a restart knows it), whether or not anything changed.
   *
   * @throws CdcException if the store failed
   */
  public void persistNow() {
    synchronized (storeLock) {
      store(snapshotForStore());
    }
  }

  /**
   * Moves the watermark to a keepalive's WAL end when nothing is pending, and stores it.
   *
   * @return true if it moved
   */
  public boolean advanceIdle(PgLsn walEnd) {
    synchronized (storeLock) {
      if (!coordinator.advanceIdle(walEnd)) {
        return false;
      }
      store(snapshotForStore());
      return true;
    }
  }

  /**
   * Stores the acknowledgements recorded since the last store (events of incomplete transactions),
   * so that a source restarted after a stop does not deliver them again.
   *
   * @return true if a checkpoint was stored
   * @throws CdcException if the store failed
   */
  public boolean persistIfChanged() {
    synchronized (storeLock) {
      CdcCheckpoint checkpoint = snapshotForStore();
      if (checkpoint.equals(lastStored)) {
        return false;
      }
      store(checkpoint);
      return true;
    }
  }

  /**
   * Returns once a store numbered above {@code begunBefore} (one that began after the caller's
   * acknowledgement was recorded) completed. Callers that queue on the lock while a store runs
   * usually find their acknowledgement included by it.
   */
  private void persistAfter(long begunBefore) {
    boolean interrupted = false;
    try {
      // group commit: one thread (the leader) stores; the others wait for the leader to finish,
      // then return if its store began after their acknowledgement, or one of them leads the next
      // store. Waiting threads never queue on storeLock one after the other
      while (storesDone <= begunBefore) {
        if (leader.tryLock()) {
          try {
            synchronized (storeLock) {
              if (storesDone <= begunBefore) {
                store(snapshotForStore());
              }
            }
          } finally {
            leader.unlock();
            synchronized (storeEnded) {
              storeEnded.notifyAll();
            }
          }
          return;
        }
        synchronized (storeEnded) {
          // the leader notifies after it unlocked: seen locked here, the wait sees its notify
          while (storesDone <= begunBefore && leader.isLocked()) {
            try {
              storeEnded.wait();
            } catch (InterruptedException e) {
              interrupted = true; // the acknowledgement is still made durable before returning
            }
          }
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Called with storeLock held: numbers the store about to be written, then takes its snapshot. */
  private CdcCheckpoint snapshotForStore() {
    storesBegun = storesBegun + 1;
    // the snapshot progress first: a chunk whose rows were all acknowledged may end a range; the
    // stream positions taken after it can only be newer, never hide an acknowledgement. A table
    // read at a reset ends once the watermark passed its position: that watermark is taken first,
    // so the checkpoint's own is at least as far
    SnapshotProgress progress = snapshots.progress(coordinator.watermark());
    CdcCheckpoint positions = coordinator.checkpoint();
    return progress == SnapshotProgress.NONE ? positions : positions.withSnapshot(progress);
  }

  /** Called with storeLock held, after {@link #snapshotForStore}. */
  private void store(CdcCheckpoint checkpoint) {
    lastStoreBeganNanos = System.nanoTime(); // the gap of background stores counts from here
    storeBegan = true;
    try {
      store.store(checkpoint);
    } catch (CdcException e) {
      onStoreFailure.accept(e);
      throw e;
    } catch (RuntimeException e) {
      CdcStoreException failure =
          new CdcStoreException("checkpoint store " + store.location() + " failed: " + e, e);
      onStoreFailure.accept(failure);
      throw failure;
    }
    storesDone = storesBegun;
    lastStored = checkpoint;
    durableHold = checkpoint.snapshot().holdLsn();
    PgLsn previous = durableWatermark;
    durableWatermark = checkpoint.watermark();
    if (!previous.equals(durableWatermark)) {
      onWatermarkMoved.run();
    }
  }
}

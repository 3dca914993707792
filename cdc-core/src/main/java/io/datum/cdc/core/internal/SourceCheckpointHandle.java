package io.datum.cdc.core.internal;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcException;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.PgLsn;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * The application's acknowledgement path: marks the event in the {@link FeedbackCoordinator} and
 * stores the resulting {@link CdcCheckpoint} (the watermark and the acknowledged events beyond
 * it). The replication loop reports only {@link #durableWatermark()} as flushed, so PostgreSQL
 * never confirms a position the store does not hold.
 *
 * <p>When a store happens depends on the durability mode:
 *
 * <ul>
 *   <li>per transaction: when the watermark moves (once per transaction acknowledged in
 *       order), at a keepalive advance, and at stop. After a crash, events acknowledged since the
 *       last store are delivered again.
 *   <li>per event (default): every acknowledgement returns only once a stored checkpoint includes it, so no
 *       event whose acknowledgement returned is delivered again. Concurrent acknowledgements are
 *       group-committed here (one snapshot and one store for all the callers waiting while the
 *       previous store ran) and again by the store. Cost for a single caller: one snapshot
 *       (O(acknowledged events beyond the watermark / 64)) and one store write per call.
 * </ul>
 *
 * <p>Stores are serialised by one lock, so stored checkpoints never go backwards.
 *
 * <p>Public only for the benchmarks module; not API.
 */
public final class SourceCheckpointHandle implements CdcCheckpointHandle {

  private final FeedbackCoordinator coordinator;
  private final CdcCheckpointStore store;
  private final Executor asyncExecutor;
  private final Consumer<CdcException> onStoreFailure;
  private final Runnable onWatermarkMoved;
  private final boolean durableEachAcknowledgement;
  private final Object storeLock = new Object();
  private volatile PgLsn durableWatermark;
  /** Acknowledgements recorded so far; guarded by the coordinator's monitor. */
  private long recorded;
  /** The number of recorded acknowledgements the last stored checkpoint includes; storeLock. */
  private long stored;

  /**
   * @param coordinator the source's coordinator; its monitor guards the acknowledgement count
   * @param store where checkpoints go
   * @param asyncExecutor runs the stores of {@link #checkpointAsync}
   * @param onStoreFailure told about a failed store before it is thrown (stops the source)
   * @param onWatermarkMoved told after a store moved the durable watermark (wakes the loop)
   * @param durableEachAcknowledgement per-event durability: every acknowledgement is stored
   *     before it returns
   */
  public SourceCheckpointHandle(
      FeedbackCoordinator coordinator,
      CdcCheckpointStore store,
      Executor asyncExecutor,
      Consumer<CdcException> onStoreFailure,
      Runnable onWatermarkMoved,
      boolean durableEachAcknowledgement) {
    this.coordinator = coordinator;
    this.store = store;
    this.asyncExecutor = asyncExecutor;
    this.onStoreFailure = onStoreFailure;
    this.onWatermarkMoved = onWatermarkMoved;
    this.durableEachAcknowledgement = durableEachAcknowledgement;
    this.durableWatermark = coordinator.watermark();
  }

  @Override
  public void checkpoint(CdcOffset offset) {
    long mine = record(offset);
    if (mine > 0) {
      persistAtLeast(mine);
    }
  }

  /**
   * Marks the event in the coordinator.
   *
   * @return the acknowledgement's number if it must be stored before it counts as done, else 0
   */
  private long record(CdcOffset offset) {
    synchronized (coordinator) {
      boolean moved = coordinator.acknowledge(offset);
      long mine = ++recorded;
      return moved || durableEachAcknowledgement ? mine : 0;
    }
  }

  @Override
  public void checkpointTransaction(CdcOffset offset) {
    long mine;
    boolean moved;
    synchronized (coordinator) {
      moved = coordinator.acknowledgeTransaction(offset);
      mine = ++recorded;
    }
    if (moved || durableEachAcknowledgement) {
      persistAtLeast(mine);
    }
  }

  @Override
  public CompletableFuture<Void> checkpointAsync(CdcOffset offset) {
    long mine;
    try {
      mine = record(offset);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (mine == 0) {
      return CompletableFuture.completedFuture(null);
    }
    // the executor runs one store at a time; a store covers every acknowledgement recorded
    // before it began, so the tasks queued behind it usually return at once
    return CompletableFuture.runAsync(() -> persistAtLeast(mine), asyncExecutor);
  }

  @Override
  public PgLsn watermark() {
    return durableWatermark;
  }

  /** Returns the newest watermark the store holds: the only position that may be confirmed. */
  PgLsn durableWatermark() {
    return durableWatermark;
  }

  /**
   * Moves the watermark to a keepalive's WAL end when nothing is pending, and stores it.
   *
   * @return true if it moved
   */
  boolean advanceIdle(PgLsn walEnd) {
    synchronized (storeLock) {
      long upTo;
      synchronized (coordinator) {
        if (!coordinator.advanceIdle(walEnd)) {
          return false;
        }
        upTo = recorded;
      }
      store(upTo);
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
  boolean persistIfChanged() {
    long upTo;
    synchronized (coordinator) {
      upTo = recorded;
    }
    synchronized (storeLock) {
      if (stored >= upTo) {
        return false;
      }
    }
    persistAtLeast(upTo);
    return true;
  }

  /**
   * Returns once a stored checkpoint includes the first {@code version} acknowledgements. Callers
   * that queue on the lock while a store runs usually find their acknowledgement included by it.
   */
  private void persistAtLeast(long version) {
    synchronized (storeLock) {
      if (stored >= version) {
        return; // a store that ran while this caller waited included it
      }
      long upTo;
      synchronized (coordinator) {
        upTo = recorded;
      }
      store(upTo);
    }
  }

  /** Called with storeLock held. */
  private void store(long upTo) {
    CdcCheckpoint checkpoint = coordinator.snapshot();
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
    stored = Math.max(stored, upTo);
    PgLsn previous = durableWatermark;
    durableWatermark = checkpoint.watermark();
    if (!previous.equals(durableWatermark)) {
      onWatermarkMoved.run();
    }
  }
}

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
 * The application's acknowledgement path: marks the event in the {@link FeedbackCoordinator} and,
 * when the watermark moves, stores the new {@link CdcCheckpoint} before returning. The replication
 * loop reports only {@link #durableWatermark()} as flushed, so PostgreSQL never confirms a
 * position the store does not hold.
 *
 * <p>Acknowledgements and the store write they cause are serialised by one lock, so stored
 * checkpoints never go backwards. Cost: one store write per transaction acknowledged in order
 * (the write happens when the watermark moves), none for an acknowledgement inside an incomplete
 * transaction.
 */
final class SourceCheckpointHandle implements CdcCheckpointHandle {

  private final FeedbackCoordinator coordinator;
  private final CdcCheckpointStore store;
  private final Executor asyncExecutor;
  private final Consumer<CdcException> onStoreFailure;
  private final Runnable onWatermarkMoved;
  private final Object storeLock = new Object();
  private volatile PgLsn durableWatermark;
  /** Acknowledgements recorded since the last store; guarded by storeLock. */
  private long unstoredAcknowledgements;

  SourceCheckpointHandle(
      FeedbackCoordinator coordinator,
      CdcCheckpointStore store,
      Executor asyncExecutor,
      Consumer<CdcException> onStoreFailure,
      Runnable onWatermarkMoved) {
    this.coordinator = coordinator;
    this.store = store;
    this.asyncExecutor = asyncExecutor;
    this.onStoreFailure = onStoreFailure;
    this.onWatermarkMoved = onWatermarkMoved;
    this.durableWatermark = coordinator.watermark();
  }

  @Override
  public void checkpoint(CdcOffset offset) {
    synchronized (storeLock) {
      if (coordinator.acknowledge(offset)) {
        persist();
      } else {
        unstoredAcknowledgements++;
      }
    }
  }

  @Override
  public void checkpointTransaction(CdcOffset offset) {
    synchronized (storeLock) {
      if (coordinator.acknowledgeTransaction(offset)) {
        persist();
      } else {
        unstoredAcknowledgements++;
      }
    }
  }

  @Override
  public CompletableFuture<Void> checkpointAsync(CdcOffset offset) {
    return CompletableFuture.runAsync(() -> checkpoint(offset), asyncExecutor);
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
      if (!coordinator.advanceIdle(walEnd)) {
        return false;
      }
      persist();
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
    synchronized (storeLock) {
      if (unstoredAcknowledgements == 0) {
        return false;
      }
      persist();
      return true;
    }
  }

  private void persist() {
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
    unstoredAcknowledgements = 0;
    durableWatermark = checkpoint.watermark();
    onWatermarkMoved.run();
  }
}

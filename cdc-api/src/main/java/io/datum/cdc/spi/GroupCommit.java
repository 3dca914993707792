package io.datum.cdc.spi;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcException;
import io.datum.cdc.CdcStoreException;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Group commit for checkpoint stores: concurrent {@link #store} calls share one durable write.
 *
 * <p>The first caller to find no write in progress becomes the leader: it takes every checkpoint
 * submitted so far (for each slot only the newest; an older one is superseded) and hands them to
 * the {@link BatchWriter} in one call, on its own thread. Callers that arrive meanwhile wait; when
 * the write returns, the next of them leads the following batch. So with {@code n} concurrent
 * callers a store pays about one write and one fsync per batch instead of {@code n}, and durable
 * throughput grows with the number of callers. A single caller pays exactly one batch per call (no
 * added latency: there is no timer).
 *
 * <p>Guarantees: when {@link #store} returns, a batch holding its checkpoint, or a newer one of the
 * same slot submitted after it, was written durably. Batches are written one at a time in
 * submission order, so a slot's stored checkpoint never goes back to an older one. If the writer
 * throws, every caller of that batch gets a {@link CdcStoreException}; later batches are tried
 * again.
 *
 * <p>Thread-safe. Used by the {@code file:}, {@code rocksdb:} and {@code mapdb:} stores; plugin
 * authors may use it too.
 */
public final class GroupCommit {

  /** Writes a batch of checkpoints durably. */
  @FunctionalInterface
  public interface BatchWriter {
    /**
     * Writes the checkpoints, at most one per slot, and returns once all are durable.
     *
     * @param batch the checkpoints, not empty
     * @throws Exception if any could not be made durable; the whole batch counts as failed
     */
    void write(Collection<CdcCheckpoint> batch) throws Exception;
  }

  private final String storeName;
  private final BatchWriter writer;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition batchDone = lock.newCondition();
  private Batch collecting = new Batch();
  private boolean writing;
  private long batches;
  private long checkpoints;

  /**
   * @param storeName the store's location, for error messages
   * @param writer the durable batch write
   */
  public GroupCommit(String storeName, BatchWriter writer) {
    this.storeName = Objects.requireNonNull(storeName, "storeName");
    this.writer = Objects.requireNonNull(writer, "writer");
  }

  /**
   * Submits a checkpoint and returns once it (or a newer one of its slot) is durable.
   *
   * @param checkpoint the checkpoint, not null
   * @throws CdcStoreException if the batch holding it failed (naming the store), or the thread was
   *     interrupted while waiting (the checkpoint may or may not be durable then)
   */
  public void store(CdcCheckpoint checkpoint) {
    Objects.requireNonNull(checkpoint, "checkpoint");
    lock.lock();
    try {
      Batch mine = collecting;
      mine.checkpoints.put(checkpoint.slot(), checkpoint);
      checkpoints++;
      while (!mine.done) {
        if (!writing) {
          lead();
        } else {
          try {
            batchDone.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CdcStoreException(
                "interrupted while waiting for checkpoint store "
                    + storeName
                    + "; the checkpoint of slot "
                    + checkpoint.slot()
                    + " may not be durable",
                e);
          }
        }
      }
      if (mine.failure != null) {
        if (mine.failure instanceof CdcException cdc) {
          throw new CdcStoreException(cdc.getMessage(), cdc);
        }
        throw new CdcStoreException(
            "checkpoint store "
                + storeName
                + " failed to write a batch of "
                + mine.checkpoints.size()
                + " checkpoint(s): "
                + mine.failure,
            mine.failure);
      }
    } finally {
      lock.unlock();
    }
  }

  /** Returns how many batches were written (or attempted) so far. */
  public long batches() {
    lock.lock();
    try {
      return batches;
    } finally {
      lock.unlock();
    }
  }

  /** Returns how many checkpoints were submitted so far. */
  public long checkpoints() {
    lock.lock();
    try {
      return checkpoints;
    } finally {
      lock.unlock();
    }
  }

  /** Called with the lock held; writes the collecting batch with the lock released. */
  private void lead() {
    Batch batch = collecting;
    collecting = new Batch();
    writing = true;
    batches++;
    Throwable failure = null;
    lock.unlock();
    try {
      writer.write(batch.checkpoints.values());
    } catch (Throwable t) {
      failure = t;
    } finally {
      lock.lock();
    }
    batch.failure = failure;
    batch.done = true;
    writing = false;
    batchDone.signalAll();
  }

  /** The checkpoints submitted between two writes, newest per slot. */
  private static final class Batch {
    final Map<String, CdcCheckpoint> checkpoints = new LinkedHashMap<>();
    boolean done;
    Throwable failure;
  }
}

package io.datum.cdc;

import java.util.concurrent.CompletableFuture;

/**
 * How the application acknowledges events it has durably processed. Obtained from the source; safe
 * for concurrent use; events may be acknowledged in any order.
 *
 * <p>An acknowledgement marks the event's slot in the coordinator, recomputes the watermark (the
 * end LSN of the contiguous fully acknowledged prefix of transactions) and stores the resulting
 * {@link CdcCheckpoint} in the {@link CdcCheckpointStore}. Only the watermark is ever reported to
 * PostgreSQL as flushed, in the Standby Status Update the replication loop sends next (PostgreSQL
 * docs, 55.4 Streaming Replication Protocol).
 */
public interface CdcCheckpointHandle {

  /**
   * Acknowledges one event. When the source stores every acknowledgement (per-event durability, the
   * default of {@code PgCdcSource}), this returns only after a stored {@link CdcCheckpoint}
   * includes the acknowledgement: after a crash the event is never delivered again. Concurrent
   * callers share one store write. With per-transaction durability, the checkpoint is stored before
   * return only when the acknowledgement moves the watermark; otherwise it is recorded in memory
   * and becomes durable with the next store, and after a crash before that the event may be
   * delivered again. Acknowledging an event again is harmless; acknowledging an event of a
   * transaction at or before the watermark does nothing.
   *
   * @param offset the offset of a delivered event, not null
   * @throws CdcCheckpointException if the offset belongs to another slot, or its transaction was
   *     not delivered by this source, or its event count differs from the transaction's, or its
   *     index is outside {@code [0, eventCount)}; the message says which
   * @throws CdcStoreException if the store failed; the acknowledgement is then not durable and the
   *     source stops
   */
  void acknowledge(CdcOffset offset);

  /**
   * Acknowledges every event of the transaction {@code offset} belongs to, for handlers that
   * process a transaction at once: one call (and at most one store write) instead of one per event.
   * Events of the transaction already acknowledged stay acknowledged; durability as for {@link
   * #acknowledge}.
   *
   * @param offset the offset of any event of the transaction, not null
   * @throws CdcCheckpointException as {@link #acknowledge}
   * @throws CdcStoreException if the store failed
   */
  void acknowledgeTransaction(CdcOffset offset);

  /**
   * Acknowledges one event without blocking the caller on the store: the acknowledgement is
   * recorded at once and stored in the background, where the stores of many calls in a row are
   * combined (one store write for every acknowledgement recorded before it began). A
   * single-threaded handler that acknowledges event by event gets batched stores this way. The
   * source's own implementation begins such background stores at least 10 ms apart: the first after
   * a quiet spell at once, and under a steady stream of acknowledgements at most 100 a second (a
   * store that fsyncs a file costs far more than one event), so a future may complete up to 10 ms
   * after the store it would otherwise have waited for.
   *
   * @param offset the offset of a delivered event, not null
   * @return a future completed when a stored checkpoint includes the acknowledgement (with
   *     per-transaction durability: when {@link #acknowledge} would have returned), or completed
   *     exceptionally with the exceptions {@link #acknowledge} would throw
   */
  CompletableFuture<Void> acknowledgeAsync(CdcOffset offset);

  /**
   * Returns the current watermark: the end LSN of the newest transaction such that it and every
   * earlier one are fully acknowledged.
   *
   * @return the watermark, {@link PgLsn#ZERO} before anything was acknowledged
   */
  PgLsn watermark();
}

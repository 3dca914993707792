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
   * Acknowledges one event. If the acknowledgement moves the watermark, the new {@link
   * CdcCheckpoint} (the watermark and the acknowledged events beyond it) is stored before this
   * method returns, and the event is then durably acknowledged. An acknowledgement that does not
   * move the watermark (its transaction, or an earlier one, is still incomplete) is recorded in
   * memory and becomes durable with the next store; after a crash before that, the event may be
   * delivered again. Acknowledging an event again is harmless; acknowledging an event of a
   * transaction at or before the watermark does nothing.
   *
   * @param offset the offset of a delivered event, not null
   * @throws CdcCheckpointException if the offset belongs to another slot, or its transaction was
   *     not delivered by this source, or its event count differs from the transaction's, or its
   *     index is outside {@code [0, eventCount)}; the message says which
   * @throws CdcStoreException if the store failed; the acknowledgement is then not durable and
   *     the source stops
   */
  void checkpoint(CdcOffset offset);

  /**
   * Acknowledges every event of the transaction {@code offset} belongs to, for handlers that
   * process a transaction at once: one call (and at most one store write) instead of one per
   * event. Events of the transaction already acknowledged stay acknowledged; durability as for
   * {@link #checkpoint}.
   *
   * @param offset the offset of any event of the transaction, not null
   * @throws CdcCheckpointException as {@link #checkpoint}
   * @throws CdcStoreException if the store failed
   */
  void checkpointTransaction(CdcOffset offset);

  /**
   * Acknowledges one event without blocking the caller on the store.
   *
   * @param offset the offset of a delivered event, not null
   * @return a future completed when {@link #checkpoint} would have returned, or completed
   *     exceptionally with
   *     the exceptions {@link #checkpoint} would throw
   */
  CompletableFuture<Void> checkpointAsync(CdcOffset offset);

  /**
   * Returns the current watermark: the end LSN of the newest transaction such that it and every
   * earlier one are fully acknowledged.
   *
   * @return the watermark, {@link PgLsn#ZERO} before anything was acknowledged
   */
  PgLsn watermark();
}

package io.datum.cdc.event;

import io.datum.cdc.CdcOffset;

/**
 * One committed change, delivered to the application's handler in commit order. Acknowledge it with
 * {@link io.datum.cdc.CdcCheckpointHandle#acknowledge(CdcOffset)} passing {@link #offset()}.
 *
 * <p>The kinds are {@link InsertEvent}, {@link UpdateEvent}, {@link DeleteEvent}, {@link
 * TruncateEvent}, {@link MessageEvent} and, from a snapshot, {@link ReadEvent}; switch on {@link
 * #kind()} or use pattern matching.
 */
public sealed interface ChangeEvent permits RowChange, TruncateEvent, MessageEvent {

  /** Returns the kind of change. */
  ChangeKind kind();

  /** Returns the event's position, to pass to the checkpoint handle; never null. */
  CdcOffset offset();

  /** Returns the transaction the event belongs to; never null. */
  TransactionInfo transaction();
}

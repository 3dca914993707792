package io.datum.cdc.core;

import io.datum.cdc.PgLsn;

/**
 * A snapshot of a running source's progress, from {@link PgCdcSource#metrics()}. Immutable. New
 * figures may be added as new accessors in later versions; none is removed without a major version.
 * For the slot's lag as the server sees it (bytes of WAL behind {@code pg_current_wal_lsn()}), use
 * {@code pgcdc status} or {@code pg_replication_slots}.
 */
public final class SourceMetrics {

  private final PgLsn watermark;
  private final int pendingTransactions;
  private final long pendingEvents;
  private final long transactionsDelivered;
  private final long eventsHandled;
  private final double eventsPerSecond;
  private final long reconnects;
  private final long transactionsSpilled;
  private final long eventsSkipped;
  private final long eventsWithUndecoded;

  SourceMetrics(
      PgLsn watermark,
      int pendingTransactions,
      long pendingEvents,
      long transactionsDelivered,
      long eventsHandled,
      double eventsPerSecond,
      long reconnects,
      long transactionsSpilled,
      long eventsSkipped,
      long eventsWithUndecoded) {
    this.watermark = watermark;
    this.pendingTransactions = pendingTransactions;
    this.pendingEvents = pendingEvents;
    this.transactionsDelivered = transactionsDelivered;
    this.eventsHandled = eventsHandled;
    this.eventsPerSecond = eventsPerSecond;
    this.reconnects = reconnects;
    this.transactionsSpilled = transactionsSpilled;
    this.eventsSkipped = eventsSkipped;
    this.eventsWithUndecoded = eventsWithUndecoded;
  }

  /** Returns the durable watermark: the position confirmed to PostgreSQL; never null. */
  public PgLsn watermark() {
    return watermark;
  }

  /**
   * Returns the transactions delivered (handed to the handler or queued for it) and not yet behind
   * the watermark.
   */
  public int pendingTransactions() {
    return pendingTransactions;
  }

  /** Returns the events of the pending transactions, acknowledged or not. */
  public long pendingEvents() {
    return pendingEvents;
  }

  /** Returns the transactions handed to delivery since the source started. */
  public long transactionsDelivered() {
    return transactionsDelivered;
  }

  /** Returns the events the handler returned from since the source started. */
  public long eventsHandled() {
    return eventsHandled;
  }

  /** Returns the events handled per second, averaged since the source started. */
  public double eventsPerSecond() {
    return eventsPerSecond;
  }

  /** Returns the connection losses survived by reconnecting. */
  public long reconnects() {
    return reconnects;
  }

  /**
   * Returns the transactions that exceeded the memory budget and went to a spill file since the
   * source started (on the current connection).
   */
  public long transactionsSpilled() {
    return transactionsSpilled;
  }

  /**
   * Returns the changes skipped since the source started because a column value could not be
   * decoded, under {@link DecodeErrorPolicy#SKIP} (each logged at WARN); 0 under the other
   * policies.
   */
  public long eventsSkipped() {
    return eventsSkipped;
  }

  /**
   * Returns the events delivered since the source started with at least one column value undecoded
   * (raw), under {@link DecodeErrorPolicy#RAW}; 0 under the other policies.
   */
  public long eventsWithUndecoded() {
    return eventsWithUndecoded;
  }

  @Override
  public String toString() {
    return "SourceMetrics[watermark="
        + watermark
        + ", pendingTransactions="
        + pendingTransactions
        + ", pendingEvents="
        + pendingEvents
        + ", transactionsDelivered="
        + transactionsDelivered
        + ", eventsHandled="
        + eventsHandled
        + ", eventsPerSecond="
        + eventsPerSecond
        + ", reconnects="
        + reconnects
        + ", transactionsSpilled="
        + transactionsSpilled
        + ", eventsSkipped="
        + eventsSkipped
        + ", eventsWithUndecoded="
        + eventsWithUndecoded
        + ']';
  }
}

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
  private final long[] snapshot;
  private final long snapshotChunksRetried;
  private final String snapshotWaiting;
  private final long bytesSpilled;
  private final long eventsAcknowledged;
  private final double watermarkAgeSeconds;
  private final double secondsSinceLastEvent;
  private final long[] handlerQueues;

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
      long eventsWithUndecoded,
      long[] snapshot,
      long snapshotChunksRetried,
      String snapshotWaiting,
      long bytesSpilled,
      long eventsAcknowledged,
      double watermarkAgeSeconds,
      double secondsSinceLastEvent,
      long[] handlerQueues) {
    this.handlerQueues = handlerQueues;
    this.bytesSpilled = bytesSpilled;
    this.eventsAcknowledged = eventsAcknowledged;
    this.watermarkAgeSeconds = watermarkAgeSeconds;
    this.secondsSinceLastEvent = secondsSinceLastEvent;
    this.snapshot = snapshot;
    this.snapshotChunksRetried = snapshotChunksRetried;
    this.snapshotWaiting = snapshotWaiting;
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

  /**
   * Returns the stream's change events the handler returned from since the source started; a
   * snapshot's read rows and resets are not counted here but in {@link #snapshotRowsRead()} (so a
   * long snapshot does not look like delivery that is never acknowledged).
   */
  public long eventsHandled() {
    return eventsHandled;
  }

  /**
   * Returns the events of the transactions the watermark passed since the source started: each
   * transaction's events are counted once, when the watermark passes it (so this lags single
   * acknowledgements until their transaction and every earlier one are fully acknowledged). Events
   * acknowledged before a restart or reconnect whose transaction the watermark passes now are
   * included.
   */
  public long eventsAcknowledged() {
    return eventsAcknowledged;
  }

  /**
   * Returns how far behind in time the watermark is: the seconds since the commit of the oldest
   * delivered transaction not yet behind the watermark (the one the watermark waits for; its commit
   * timestamp as pgoutput's Commit message carries it, PostgreSQL docs, Logical Replication Message
   * Formats; for a prepared transaction its prepare time, for a non-transactional message the time
   * it arrived). 0 when no delivered transaction is pending: everything delivered is behind the
   * watermark, so an idle database does not look late. The commit time is the server's clock and
   * the age this process's: clock skew shifts it (never below 0). NaN if the commit time is
   * unknown.
   */
  public double watermarkAgeSeconds() {
    return watermarkAgeSeconds;
  }

  /**
   * Returns the seconds since the handler last returned from an event (measured at the last event
   * of each transaction and every 1,024th event of a large one, so a large transaction being
   * handled may add up to 1,023 events' handling time); since the source started if no event was
   * handled yet; 0 before start. Grows while the database is idle: alert on it together with the
   * replication lag.
   */
  public double secondsSinceLastEvent() {
    return secondsSinceLastEvent;
  }

  /**
   * Returns the events handled per second, averaged since the source started. For a recent rate,
   * take the rate of {@link #eventsHandled()} over a window (Prometheus {@code rate()}).
   */
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
   * Returns the bytes written to spill files since the source started (on the current connection,
   * like {@link #transactionsSpilled()}): each spilled change's pgoutput message plus a few bytes
   * of framing.
   */
  public long bytesSpilled() {
    return bytesSpilled;
  }

  /**
   * Returns the changes skipped since the source started because a column value could not be
   * decoded, under {@link io.datum.cdc.core.config.DecodeErrorPolicy#SKIP} (each logged at WARN); 0
   * under the other policies.
   */
  public long eventsSkipped() {
    return eventsSkipped;
  }

  /**
   * Returns the events delivered since the source started with at least one column value undecoded
   * (raw), under {@link io.datum.cdc.core.config.DecodeErrorPolicy#RAW}; 0 under the other
   * policies.
   */
  public long eventsWithUndecoded() {
    return eventsWithUndecoded;
  }

  /** Returns true while a snapshot has rows left to read or acknowledge. */
  public boolean snapshotInProgress() {
    return snapshot[0] > 0;
  }

  /** Returns the tables whose snapshot has rows left to read or acknowledge. */
  public long snapshotTablesLeft() {
    return snapshot[0];
  }

  /** Returns the tables whose snapshot this source completed (every row acknowledged). */
  public long snapshotTablesDone() {
    return snapshot[1];
  }

  /** Returns the key ranges of the tables in progress not yet read and acknowledged. */
  public long snapshotRangesLeft() {
    return snapshot[2];
  }

  /** Returns the snapshot chunks this source delivered. */
  public long snapshotChunksDone() {
    return snapshot[3];
  }

  /**
   * Returns the online chunks read and discarded to be read again (a transaction committed before
   * the chunk's low watermark but not yet visible to its snapshot, or a change without its key).
   */
  public long snapshotChunksRetried() {
    return snapshotChunksRetried;
  }

  /** Returns the rows this source read and delivered as {@code ReadEvent}s. */
  public long snapshotRowsRead() {
    return snapshot[4];
  }

  /** Returns the read rows acknowledged. */
  public long snapshotRowsAcknowledged() {
    return snapshot[5];
  }

  /**
   * Returns the rows read and delivered by the current run of snapshots: those in progress, since
   * one started while none was; after they complete, the last run's, until another starts. Unlike
   * {@link #snapshotRowsRead()} (since the source started) it matches {@link
   * #snapshotRowsEstimated()}.
   */
  public long snapshotRunRowsRead() {
    return snapshot[8];
  }

  /**
   * Returns the rows of the current run of snapshots acknowledged ({@link #snapshotRunRowsRead}).
   */
  public long snapshotRunRowsAcknowledged() {
    return snapshot[9];
  }

  /**
   * Returns true if the current run of snapshots resumed snapshots a restart interrupted: the rows
   * read before the restart are not counted, and the estimate counts those tables whole (an upper
   * bound of what is left).
   */
  public boolean snapshotResumed() {
    return snapshot[10] == 1;
  }

  /**
   * Returns the rows of the current run of snapshots delivered and then given up to be read again
   * (chunks in flight at a lost connection, the rows of a table without a key whose read failed);
   * they count in {@link #snapshotRunRowsRead()} again when read again.
   */
  public long snapshotRunRowsReadAgain() {
    return snapshot[11];
  }

  /** Returns the tables the current run of snapshots completed. */
  public long snapshotRunTablesDone() {
    return snapshot[12];
  }

  /** Returns the chunks the current run of snapshots delivered. */
  public long snapshotRunChunks() {
    return snapshot[13];
  }

  /**
   * Returns what the snapshot in progress waits for while it reads no row, in words (the creation
   * of a temporary slot for a table without a key, which waits for transactions open when it began;
   * the stream reaching that slot's position); null when it does not wait.
   */
  public String snapshotWaiting() {
    return snapshotWaiting;
  }

  /**
   * Returns the read rows delivered per second by the current run of snapshots ({@link
   * #snapshotRunRowsRead()}), since it started.
   */
  public double snapshotRowsPerSecond() {
    return snapshot[7] == 0 ? 0 : snapshot[8] / (snapshot[7] / 1e9);
  }

  /**
   * Returns the rows the current run of snapshots is expected to read in all, from the tables'
   * statistics ({@code pg_class.reltuples}, as of their last ANALYZE; a table counts once the
   * snapshot described it); 0 if unknown. Of a resumed run ({@link #snapshotResumed()}) an upper
   * bound.
   */
  public long snapshotRowsEstimated() {
    return snapshot[6];
  }

  /**
   * Returns the estimated seconds until the snapshots in progress are read, from the estimated rows
   * left ({@link #snapshotRowsEstimated()} less {@link #snapshotRunRowsRead()}) and the run's rate;
   * NaN if unknown, 0 when none is in progress. Of a resumed run an upper bound.
   */
  public double snapshotSecondsLeft() {
    if (snapshot[0] == 0) {
      return 0;
    }
    double rate = snapshotRowsPerSecond();
    if (snapshot[6] == 0 || rate <= 0) {
      return Double.NaN;
    }
    return Math.max(0, snapshot[6] - snapshot[8]) / rate;
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
        + ", snapshotTablesLeft="
        + snapshot[0]
        + ", snapshotRowsRead="
        + snapshot[4]
        + ", snapshotChunksRetried="
        + snapshotChunksRetried
        + ", eventsAcknowledged="
        + eventsAcknowledged
        + ", watermarkAgeSeconds="
        + watermarkAgeSeconds
        + ", secondsSinceLastEvent="
        + secondsSinceLastEvent
        + ']';
  }

  /**
   * Returns how many handler threads call the handler ({@code handlerThreads} of the builder).
   *
   * @return at least 1
   */
  public int handlerThreads() {
    return handlerQueues.length - 1;
  }

  /**
   * Returns the events waiting for one handler thread: taken from the hand-off and routed to that
   * thread's queue, not yet handled. With one handler thread, the events waiting in the hand-off. A
   * queue that stays full while the others are empty is a slow ordering unit (docs/library.md,
   * "Parallel handlers").
   *
   * @param thread the thread's index, 0 to {@link #handlerThreads()} - 1
   * @return the events waiting, at least 0
   * @throws IndexOutOfBoundsException if {@code thread} is outside that range
   */
  public long handlerQueueDepth(int thread) {
    java.util.Objects.checkIndex(thread, handlerQueues.length - 1);
    return handlerQueues[thread];
  }

  /**
   * Returns the events waiting for the handler threads, summed over the threads.
   *
   * @return the events waiting, at least 0
   */
  public long handlerQueueDepth() {
    long sum = 0;
    for (int i = 0; i < handlerQueues.length - 1; i++) {
      sum += handlerQueues[i];
    }
    return sum;
  }

  /**
   * Returns how long the oldest event waiting in a handler thread's queue has waited, in seconds:
   * with several handler threads, the delay a slow ordering unit imposes on the events queued
   * behind it. 0 with one handler thread or when no event waits.
   *
   * @return seconds, at least 0
   */
  public double oldestWaitingSeconds() {
    return handlerQueues[handlerQueues.length - 1] / 1e9;
  }
}

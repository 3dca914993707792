package io.datum.cdc.core.replication;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcConnectionException;
import io.datum.cdc.CdcException;
import io.datum.cdc.CdcReplicationException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SnapshotProgress;
import io.datum.cdc.core.config.AcknowledgementDurability;
import io.datum.cdc.core.config.SourceConfiguration;
import io.datum.cdc.core.config.SourceOptions;
import io.datum.cdc.core.config.SourceState;
import io.datum.cdc.core.delivery.Delivery;
import io.datum.cdc.core.delivery.HandlerThread;
import io.datum.cdc.core.delivery.Handoff;
import io.datum.cdc.core.delivery.ParallelDelivery;
import io.datum.cdc.core.errors.PgErrors;
import io.datum.cdc.core.feedback.FeedbackCoordinator;
import io.datum.cdc.core.feedback.SnapshotAcknowledgements;
import io.datum.cdc.core.feedback.SourceCheckpointHandle;
import io.datum.cdc.core.server.ServerRole;
import io.datum.cdc.core.snapshot.SourceSnapshots;
import io.datum.cdc.event.CdcHandler;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running parts of one source: the replication loop thread, the handler thread, the hand-off
 * between them, the coordinator and the checkpoint handle. Not API; use {@code PgCdcSource}.
 */
public final class SourceRuntime {

  private static final Logger LOG = LoggerFactory.getLogger(SourceRuntime.class);

  private final SourceConfiguration config;
  private final AtomicBoolean started = new AtomicBoolean();
  private final AtomicReference<SourceState> state = new AtomicReference<>(SourceState.NEW);
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final AtomicLong reconnects = new AtomicLong();
  private volatile long transactionsDeliveredBefore;
  private volatile long startNanos;
  private final CompletableFuture<Void> termination = new CompletableFuture<>();
  private final CountDownLatch threadsDone = new CountDownLatch(2);
  private final CountDownLatch handlerDone = new CountDownLatch(1);
  private final ExecutorService asyncAcks;
  private volatile boolean stopping;
  private volatile boolean loopDone;
  private final FeedbackCoordinator coordinator;
  private final DecodeErrorHandling decodeErrors;
  private final SourceCheckpointHandle handle;
  private final SourceSnapshots snapshots;

  /** Whether the server is a primary or a hot standby; where the source writes. */
  private final ServerRole role;

  private volatile ReplicationLoop loop;

  /** The loop {@link #start} is opening, before it becomes {@link #loop}; or null. */
  private volatile ReplicationLoop opening;

  private Handoff handoff;
  private volatile Delivery delivery;
  private final CountDownLatch stopSignal = new CountDownLatch(1);

  /**
   * @param config the validated settings
   */
  public SourceRuntime(SourceConfiguration config) {
    this.config = config;
    this.asyncAcks =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "datum-cdc-ack-" + config.slot());
              t.setDaemon(true);
              return t;
            });
    CdcCheckpoint stored = config.store().load(config.slot()).orElse(null);
    this.coordinator = new FeedbackCoordinator(config.slot(), stored);
    this.decodeErrors =
        new DecodeErrorHandling(
            config.slot(), config.get(SourceOptions.ON_DECODE_ERROR).name(), coordinator);
    SnapshotAcknowledgements tracker =
        new SnapshotAcknowledgements(stored == null ? SnapshotProgress.NONE : stored.snapshot());
    this.handle =
        new SourceCheckpointHandle(
            coordinator,
            tracker,
            config.store(),
            asyncAcks,
            this::fail,
            this::wakeLoop,
            config.get(SourceOptions.ACKNOWLEDGEMENT_DURABILITY)
                == AcknowledgementDurability.EVENT);
    if (config.confirmedFlushLimit() != null) {
      handle.limitFlush(config.confirmedFlushLimit());
    }
    this.role = new ServerRole(config);
    this.snapshots = new SourceSnapshots(config, tracker, handle, role);
    if (stored != null) {
      LOG.info(
          "slot {}: resuming at stored watermark {} ({} partly acknowledged transactions, {} runs"
              + " of acknowledged ones beyond it; written for {})",
          config.slot(),
          stored.watermark(),
          stored.acknowledgedBeyond().size(),
          stored.acknowledgedRuns().size(),
          stored.cluster() == null ? "an unnamed cluster" : stored.cluster());
    }
  }

  /** The cluster identity checkpoints carry now; null if unknown. */
  public io.datum.cdc.ClusterIdentity cluster() {
    return coordinator.cluster();
  }

  /** The checkpoint handle given to the handler. */
  public CdcCheckpointHandle handle() {
    return handle;
  }

  /**
   * Returns the position confirmed to PostgreSQL in status updates ({@link
   * SourceCheckpointHandle#flushPosition()}).
   */
  public PgLsn confirmedPosition() {
    return handle.flushPosition();
  }

  /**
   * Opens the replication connection and starts both threads.
   *
   * @param handler the application's handler
   * @return the termination future
   * @throws IllegalStateException if started before
   */
  public CompletableFuture<Void> start(CdcHandler handler) {
    if (!started.compareAndSet(false, true)) {
      throw new IllegalStateException("source of slot " + config.slot() + " was already started");
    }
    state.compareAndSet(SourceState.NEW, SourceState.STARTING);
    Path spill = config.get(SourceOptions.SPILL_DIRECTORY);
    if (!Files.isDirectory(spill) || !Files.isWritable(spill)) {
      asyncAcks.shutdown();
      state.set(SourceState.FAILED);
      throw new CdcConfigurationException(
          "spill directory "
              + spill
              + " is not a writable directory (spillDirectory, pgcdc --spill-dir)");
    }
    handoff = new Handoff(config.get(SourceOptions.HANDOFF_CAPACITY));
    ReplicationLoop opened = newLoop();
    opening = opened; // a stop() meanwhile cancels a slot's creation
    try {
      opened.open();
    } catch (RuntimeException e) {
      asyncAcks.shutdown();
      state.set(SourceState.FAILED);
      throw e;
    }
    loop = opened; // from here on stop() waits for the threads
    startNanos = System.nanoTime();
    Thread reader = new Thread(this::runLoop, "datum-cdc-replication-" + config.slot());
    Delivery d = delivery(handler);
    reader.start();
    d.start();
    Thread waiter = new Thread(this::awaitTermination, "datum-cdc-termination-" + config.slot());
    waiter.setDaemon(true);
    waiter.start();
    state.compareAndSet(SourceState.STARTING, SourceState.STREAMING);
    return termination;
  }

  /** Stops gracefully and waits for the threads up to the stop timeout. Idempotent. */
  public void stop() {
    stopping = true;
    stopSignal.countDown();
    ReplicationLoop starting = opening;
    if (loop == null && starting != null) {
      starting.requestStop(); // start() is opening it: a slot being created is cancelled
    }
    if (loop == null) {
      asyncAcks.shutdown();
      state.compareAndSet(SourceState.NEW, SourceState.STOPPED);
      return;
    }
    toStopping();
    loop.requestStop();
    Delivery d = delivery;
    if (d != null && d.isHandlerThread(Thread.currentThread())) {
      return; // called from the handler: it returns to its thread's loop, which then ends
    }
    try {
      termination.get(config.get(SourceOptions.STOP_TIMEOUT).toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      // the failure is reported through the termination future
    } catch (TimeoutException e) {
      LOG.warn(
          "slot {}: source did not stop within {}",
          config.slot(),
          config.get(SourceOptions.STOP_TIMEOUT));
    }
  }

  /**
   * Stops and drops the slot.
   *
   * @param force terminate the walsender holding the slot first
   */
  public void dropSlot(boolean force) {
    stop();
    try (Connection admin = DriverManager.getConnection(config.jdbcUrl(), config.properties())) {
      new SlotAdmin(admin)
          .dropSlot(config.slot(), force, config.get(SourceOptions.STOP_TIMEOUT).toMillis());
    } catch (SQLException e) {
      throw PgErrors.map("cannot drop slot \"" + config.slot() + '"', e);
    }
  }

  private void runLoop() {
    try {
      while (true) {
        try {
          loop.run();
          return;
        } catch (CdcConnectionException e) {
          if (stopping || config.get(SourceOptions.RECONNECT_ATTEMPTS) == 0) {
            throw e;
          }
          reconnect(e);
        }
      }
    } catch (Throwable t) {
      failFromLoop(t);
    } finally {
      loopDone = true;
      threadsDone.countDown();
    }
  }

  /**
   * Opens a new replication connection after a connection loss, with exponential backoff and
   * jitter, resuming at the durable watermark. Events queued for the handler are dropped and the
   * coordinator forgets its pending registrations: the server sends those transactions again and
   * their unacknowledged events are delivered again.
   *
   * @throws CdcException the last failure once the attempts are used up, or a failure that retrying
   *     cannot fix (slot or publication dropped, permission denied, authentication failed)
   */
  private void reconnect(CdcConnectionException lost) throws InterruptedException {
    LOG.warn("slot {}: connection lost ({}); reconnecting", config.slot(), lost.getMessage());
    state.compareAndSet(SourceState.STREAMING, SourceState.RECONNECTING);
    delivery.clear();
    coordinator.resetPending();
    snapshots.connectionLost();
    long backoff = config.get(SourceOptions.RECONNECT_INITIAL_BACKOFF).toMillis();
    for (int attempt = 1; ; attempt++) {
      long jittered = backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1);
      if (stopSignal.await(jittered, TimeUnit.MILLISECONDS) || stopping) {
        throw lost;
      }
      ReplicationLoop next = newLoop();
      try {
        next.open(true, loop);
        transactionsDeliveredBefore += loop.transactionsDelivered();
        loop = next;
        reconnects.incrementAndGet();
        state.compareAndSet(SourceState.RECONNECTING, SourceState.STREAMING);
        LOG.info("slot {}: reconnected after {} attempt(s)", config.slot(), attempt);
        return;
      } catch (CdcConnectionException | CdcReplicationException e) {
        // a terminated walsender may still hold the slot for a moment: a busy slot is retried
        boolean retryable =
            (e instanceof CdcConnectionException && !PgErrors.isAuthenticationFailure(e))
                || (e instanceof CdcReplicationException r
                    && r.reason() == CdcReplicationException.Reason.SLOT_ACTIVE);
        if (!retryable || attempt >= config.get(SourceOptions.RECONNECT_ATTEMPTS)) {
          e.addSuppressed(lost);
          throw e;
        }
        LOG.debug(
            "slot {}: reconnect attempt {} failed: {}", config.slot(), attempt, e.getMessage());
      }
      backoff = Math.min(backoff * 2, config.get(SourceOptions.RECONNECT_MAX_BACKOFF).toMillis());
    }
  }

  /**
   * Asks for an online snapshot of tables.
   *
   * @param tables the tables, at least one
   * @return the snapshot's id
   * @throws io.datum.cdc.CdcConfigurationException as {@code PgCdcSource.snapshot}
   * @throws IllegalStateException if the source is not running
   */
  public String requestSnapshot(java.util.List<io.datum.cdc.TableId> tables) {
    if (loop == null || loopDone) {
      throw new IllegalStateException("the source of slot " + config.slot() + " is not running");
    }
    return snapshots.request(tables);
  }

  /** Returns the online snapshot chunks read again so far. */
  public long snapshotChunksRetried() {
    return snapshots.chunksRetried();
  }

  /** Returns what a snapshot in progress waits for, or null ({@link SourceSnapshots#waiting()}). */
  public String snapshotWaiting() {
    return snapshots.waiting();
  }

  /** Returns the source's snapshot acknowledgements (for metrics). */
  public SnapshotAcknowledgements snapshotTracker() {
    return snapshots.tracker();
  }

  /** A replication loop over this source's parts, for the first connection or a reconnect. */
  private ReplicationLoop newLoop() {
    return new ReplicationLoop(
        config,
        coordinator,
        handle,
        handoff,
        decodeErrors,
        snapshots,
        role,
        this::beforeFinalFeedback);
  }

  /** Returns how many times the source reconnected after a connection loss. */
  public long reconnects() {
    return reconnects.get();
  }

  /**
   * Returns the progress figures of {@code SourceMetrics}, in its component order: pending
   * transactions, pending events, transactions delivered, events handled, nanoseconds since start,
   * transactions spilled on the current connection, events skipped and events delivered with
   * undecoded values (the decode-error policy), bytes spilled on the current connection, events
   * behind the watermark, the oldest pending transaction's commit time in microseconds since 1970
   * (0 unknown, {@link Long#MIN_VALUE} none pending), nanoseconds since the handler last returned
   * from an event (since start if none yet; 0 before start).
   */
  public long[] progress() {
    ReplicationLoop l = loop;
    return new long[] {
      coordinator.pendingTransactions(),
      coordinator.pendingEvents(),
      transactionsDeliveredBefore + (l == null ? 0 : l.transactionsDelivered()),
      delivery == null ? 0 : delivery.eventsHandled(),
      startNanos == 0 ? 0 : System.nanoTime() - startNanos,
      l == null ? 0 : l.transactionsSpilled(),
      decodeErrors.eventsSkipped(),
      decodeErrors.eventsWithUndecoded(),
      l == null ? 0 : l.bytesSpilled(),
      coordinator.eventsAcknowledged(),
      coordinator.oldestPendingCommitMicros(),
      sinceLastHandled()
    };
  }

  private long sinceLastHandled() {
    long start = startNanos;
    if (start == 0) {
      return 0;
    }
    Delivery d = delivery;
    long last = d == null ? 0 : d.lastHandledNanos();
    return System.nanoTime() - (last == 0 ? start : last);
  }

  /**
   * Returns the events waiting for each handler thread (one element per thread; with one thread,
   * the hand-off's events), and as the last element the age in nanoseconds of the oldest event
   * waiting for a handler thread (0 with one thread or none waiting).
   */
  public long[] handlerQueues() {
    Delivery d = delivery;
    if (d == null) {
      return new long[config.get(SourceOptions.HANDLER_THREADS) + 1]; // not started: none waits
    }
    int[] depths = d.queueDepths();
    long[] out = new long[depths.length + 1];
    for (int i = 0; i < depths.length; i++) {
      out[i] = depths[i];
    }
    long oldest = d.oldestWaitingNanos();
    out[depths.length] = oldest == 0 ? 0 : Math.max(0, System.nanoTime() - oldest);
    return out;
  }

  private Delivery delivery(CdcHandler handler) {
    // loopDone only after the last reconnect attempt: the handler keeps polling meanwhile
    Runnable onExit =
        () -> {
          handlerDone.countDown();
          threadsDone.countDown();
        };
    int threads = config.get(SourceOptions.HANDLER_THREADS);
    String name = "datum-cdc-handler-" + config.slot();
    Delivery d =
        threads == 1
            ? new HandlerThread(
                handoff, handler, handle, () -> stopping, () -> loopDone, this::fail, onExit, name)
            : new ParallelDelivery(
                handoff,
                handler,
                handle,
                handle::acknowledgeEach,
                handle::acknowledged,
                threads,
                config.get(SourceOptions.HANDLER_ORDERING),
                // every thread can be busy, whatever the hand-off's capacity
                Math.max(config.get(SourceOptions.HANDOFF_CAPACITY), threads),
                () -> stopping,
                () -> loopDone,
                this::fail,
                onExit,
                name);
    delivery = d;
    return d;
  }

  /**
   * Called by the replication loop after a stop request, before its final Standby Status Update:
   * waits (up to the stop timeout) for the handler to finish its event, then stores the
   * acknowledgements not stored yet (asynchronous ones, per-transaction mode's partial ones), so
   * that the final update confirms everything acknowledged.
   */
  private void beforeFinalFeedback() {
    try {
      if (!handlerDone.await(
          config.get(SourceOptions.STOP_TIMEOUT).toMillis(), TimeUnit.MILLISECONDS)) {
        return;
      }
      handle.persistIfChanged();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      // not a loss: those events are delivered again after a restart; awaitTermination retries
      LOG.warn(
          "slot {}: could not store the last acknowledgements before the final status update: {}",
          config.slot(),
          e.toString());
    }
  }

  private void awaitTermination() {
    try {
      threadsDone.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    asyncAcks.shutdown();
    snapshots.close();
    try {
      // acknowledged events of incomplete transactions: keep them from being delivered again
      if (handle.persistIfChanged()) {
        LOG.info("slot {}: stored the acknowledgements of incomplete transactions", config.slot());
      }
    } catch (RuntimeException e) {
      // not a loss: those events are delivered again after a restart
      LOG.warn(
          "slot {}: could not store the last acknowledgements; their events will be delivered"
              + " again: {}",
          config.slot(),
          e.toString());
    }
    Throwable t = failure.get();
    // the state first: whoever sees the future completed sees the final state
    state.set(t == null ? SourceState.STOPPED : SourceState.FAILED);
    if (t == null) {
      termination.complete(null);
    } else {
      termination.completeExceptionally(t);
    }
  }

  /**
   * The replication thread failed for good (a change that does not decode under the STOP policy, a
   * malformed message, a failure reconnecting cannot fix): the source fails, but the handler first
   * takes the events already in the hand-off, decoded before the failure (the earlier transactions,
   * and the failing transaction's events before the failing change), so that what was decoded is
   * delivered and can be acknowledged; the termination future completes after that. A {@code
   * stop()} meanwhile ends the handler at once.
   */
  private void failFromLoop(Throwable t) {
    if (failure.compareAndSet(null, t)) {
      LOG.info(
          "slot {}: source failed: {}; delivering the {} event(s) decoded before the failure",
          config.slot(),
          t.toString(),
          handoff.size());
    } else if (failure.get() != t) {
      failure.get().addSuppressed(t);
    }
    toStopping();
    stopSignal.countDown();
  }

  private void fail(Throwable t) {
    stopping = true; // first: the other handler threads take no more events from here on
    if (failure.compareAndSet(null, t)) {
      // also reported to the application through the termination future
      LOG.error("slot {}: source failed: {}", config.slot(), t.toString());
    } else if (failure.get() != t) {
      failure.get().addSuppressed(t);
    }
    stopSignal.countDown();
    if (loop != null) {
      toStopping();
      loop.requestStop();
    }
  }

  /**
   * Returns the lifecycle state: {@link SourceState#SNAPSHOTTING} while started and reading the
   * initial snapshot exported at the slot's creation, before streaming starts.
   */
  public SourceState state() {
    SourceState s = state.get();
    if (s == SourceState.STREAMING) {
      ReplicationLoop l = loop;
      if (l != null && l.snapshotting()) {
        return SourceState.SNAPSHOTTING;
      }
    }
    return s;
  }

  private void toStopping() {
    state.getAndUpdate(s -> s.isTerminal() || s == SourceState.NEW ? s : SourceState.STOPPING);
  }

  private void wakeLoop() {
    ReplicationLoop l = loop;
    if (l != null) {
      l.wakeUp();
    }
  }
}

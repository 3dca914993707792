package io.datum.cdc.cli.stream;

import io.datum.cdc.CdcCheckpointException;
import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.CdcConnectionException;
import io.datum.cdc.CdcException;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.cli.common.ExitStatus;
import io.datum.cdc.cli.common.ServerFailures;
import io.datum.cdc.cli.json.JsonLinesWriter;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one source until an event limit, an idle timeout, a signal, the end of the reader's
 * acknowledgements or a failure. Each event is written as one JSON line; when it is acknowledged
 * depends on the mode:
 *
 * <ul>
 *   <li>stdout (default): once its line was written and flushed to stdout. Lines are flushed when
 *       the source has no further event ready ({@code batchEnd}), or after {@value #FLUSH_EVERY}
 *       lines or {@value #FLUSH_BYTES} bytes, always at a line end: a busy stream writes many lines
 *       per system call, a quiet one flushes each line at once.
 *   <li>{@code --output FILE}: once an fsync of FILE covered its line ({@link SyncedFileOutput}).
 *   <li>{@code --acks-from SOURCE}: once the reader wrote it back ({@link ReaderAcks}).
 * </ul>
 *
 * Acknowledgements are stored in the background with {@code acknowledgeAsync}, many per store
 * write; an event acknowledged whose acknowledgement was not yet stored when the process died comes
 * again, a stored one never does (with the default per-event durability). A graceful stop stores
 * every acknowledgement made.
 */
final class StreamSession {

  private static final Logger LOG = LoggerFactory.getLogger(StreamSession.class);

  /** The most lines written to stdout before a flush, when events keep coming. */
  static final int FLUSH_EVERY = 256;

  /** The most bytes held for stdout before a flush, when events keep coming. */
  static final int FLUSH_BYTES = 1 << 16;

  /** Where the lines go and who says an event was processed. */
  interface Output {

    /**
     * Writes an event's line; acknowledges it now or later through the handle.
     *
     * @param redelivered whether this process printed the event before
     */
    void write(ChangeEvent event, boolean redelivered, CdcCheckpointHandle checkpoints);

    /**
     * The source has no further event ready: write out what is buffered and acknowledge what that
     * makes final. Called on the handler thread.
     */
    default void batchEnd(CdcCheckpointHandle checkpoints) {}

    /**
     * Returns how many of the lines {@link #write} took were never written out (their flush failed
     * because stdout was closed): they were counted, but not printed nor acknowledged.
     */
    default int unprinted() {
      return 0;
    }

    /** Returns whether no event written awaits its acknowledgement. */
    boolean idle();

    /** Returns whether no more events can be written or acknowledged: time to stop. */
    boolean ended();

    /** Writes nothing more; releases what can be released. Idempotent. */
    void close() throws InterruptedException;

    /**
     * Returns why the output ended when that ends pgcdc with a status of its own (stdout closed by
     * its reader), or null.
     */
    default String endedBecause() {
      return null;
    }
  }

  /** When to stop on positions, and how to start; all optional. */
  record Limits(
      long maxEvents,
      long idleExitMillis,
      PgLsn stopAt,
      boolean stopAtCurrent,
      ServerPosition server,
      int startAttempts,
      long initialBackoffMillis,
      long maxBackoffMillis) {}

  private final Supplier<PgCdcSource> sources;
  private final Output output;
  private final Limits limits;
  private final long maxEvents;
  private final CountDownLatch stopRequested = new CountDownLatch(1);
  private volatile PgCdcSource source;
  private final AtomicLong events = new AtomicLong();
  private final CountDownLatch wake = new CountDownLatch(1);
  private final AtomicReference<CdcException> failure = new AtomicReference<>();
  private volatile long lastActivityNanos = System.nanoTime();
  private volatile boolean closing;

  /** The offset of the newest event printed (handler thread only); 0/0 and -1 before any. */
  private long printedEnd;

  private int printedIndex = -1;

  /** Milliseconds between two progress lines of a snapshot on stderr; 0: none. */
  private final long progressIntervalMillis;

  private SnapshotProgressReporter progress; // guarded by this

  /**
   * @param sources builds a source (again for each start attempt)
   * @param output where the lines go
   * @param limits when to stop
   * @param progressIntervalMillis milliseconds between two lines of a snapshot's progress on stderr
   *     (a terminal redraws its line more often), 0 for none
   */
  StreamSession(
      Supplier<PgCdcSource> sources, Output output, Limits limits, long progressIntervalMillis) {
    this.sources = sources;
    this.output = output;
    this.limits = limits;
    this.maxEvents = limits.maxEvents();
    this.progressIntervalMillis = progressIntervalMillis;
  }

  /** The running source (null before it started). */
  PgCdcSource source() {
    return source;
  }

  /** Events written so far (not those whose lines were lost when stdout closed). */
  long events() {
    return events.get() - output.unprinted();
  }

  /** Stops the session with a failure of its output (a write, a sync, the reader's acks). */
  void fail(CdcException e) {
    if (!failure.compareAndSet(null, e)) {
      failure.get().addSuppressed(e);
    }
    wake.countDown();
  }

  /** Counts activity for the idle timeout (an acknowledgement from the reader, say). */
  void touch() {
    lastActivityNanos = System.nanoTime();
  }

  /**
   * Streams until done: the event limit reached and acknowledged, the stop position confirmed, the
   * idle condition met, the output ended, a signal, or a failure.
   *
   * @throws Exception the source's failure, or the output's
   */
  void run() throws Exception {
    // named after the thread that starts it (pgcdc-stream-SLOT): its log lines name the slot
    Thread hook = new Thread(this::stopOnSignal, Thread.currentThread().getName() + "-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      CompletableFuture<Void> termination = start();
      if (termination == null) {
        return; // stopped by a signal while waiting for the server
      }
      startProgress();
      PgLsn stopAt = limits.stopAt();
      if (limits.stopAtCurrent()) {
        stopAt = limits.server().read(); // the server's position at start
        LOG.info("streaming until {} is confirmed (--stop-at-lsn current)", stopAt);
      }
      long idleNanos = TimeUnit.MILLISECONDS.toNanos(limits.idleExitMillis());
      long idleSince = -1;
      PgLsn idleTarget = null;
      while (!termination.isDone() && failure.get() == null && !output.ended()) {
        if (wake.await(100, TimeUnit.MILLISECONDS)) {
          continue; // a failure
        }
        boolean limitReached = events.get() >= maxEvents;
        if (limitReached && output.idle()) {
          break;
        }
        // the position confirmed to the server, not the watermark: an initial snapshot that is
        // not complete holds the slot at its consistent point
        if (stopAt != null && output.idle() && !source.confirmedPosition().isBefore(stopAt)) {
          LOG.info(
              "confirmed {}, at or beyond --stop-at-lsn {}", source.confirmedPosition(), stopAt);
          break;
        }
        if (idleNanos > 0) {
          long since = lastActivityNanos;
          if (since != idleSince) {
            idleSince = since; // an event or an acknowledgement: idle starts again
            idleTarget = null;
          }
          if (output.idle() && System.nanoTime() - since > idleNanos) {
            if (idleTarget == null) {
              idleTarget = limits.server().flushLsn(); // null while the server is unreachable
            }
            if (idleTarget != null && !source.confirmedPosition().isBefore(idleTarget)) {
              break; // idle long enough, and caught up with what the server had then
            }
          }
        }
      }
      finish();
      termination.join();
      CdcException failed = failure.get();
      if (failed != null) {
        throw failed;
      }
      String because = output.endedBecause();
      if (because != null) {
        throw new ExitStatus(ExitStatus.CLOSED_PIPE, because + "; " + stoppedAt());
      }
    } catch (CompletionException e) {
      throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // the JVM is exiting on a signal; the hook stops the session
      }
    }
  }

  /**
   * Starts a source; with start-up retries, retries a start that failed to reach the server (not
   * one refused by it, nor an authentication failure) with exponential backoff and jitter.
   *
   * @return the termination future, or null if stopped while waiting to retry
   */
  private CompletableFuture<Void> start() throws InterruptedException {
    long backoff = limits.initialBackoffMillis();
    PgCdcSource next = sources.get();
    for (int attempt = 1; ; attempt++) {
      try {
        source = next;
        return next.start(
            new CdcHandler() {
              @Override
              public void handle(ChangeEvent event, CdcCheckpointHandle checkpoints) {
                StreamSession.this.handle(event, checkpoints);
              }

              @Override
              public void batchEnd(CdcCheckpointHandle checkpoints) {
                output.batchEnd(checkpoints);
              }
            });
      } catch (CdcConnectionException e) {
        // an authentication failure is a CdcConfigurationException (PgErrors): never retried
        if (attempt >= limits.startAttempts()) {
          throw limits.startAttempts() > 1
              ? e
              : new CdcConnectionException(
                  e.getMessage()
                      + " ("
                      + ServerFailures.whyTransient(e)
                      + "; --retry-start waits for it)",
                  e);
        }
        // the next attempt's source, built now: while it waits, --metrics-port shows it starting
        // (new), not the failed one of this attempt
        next = sources.get();
        source = next;
        long jittered = backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1);
        LOG.warn(
            "cannot start (attempt {}): {}; retrying in {} ms (--retry-start)",
            attempt,
            e.getMessage(),
            jittered);
        if (stopRequested.await(jittered, TimeUnit.MILLISECONDS)) {
          return null;
        }
        backoff = Math.min(backoff * 2, limits.maxBackoffMillis());
      }
    }
  }

  /** Starts showing a snapshot's progress on stderr, unless turned off. */
  private synchronized void startProgress() {
    if (progressIntervalMillis <= 0 || closing) {
      return;
    }
    PgCdcSource running = source;
    progress =
        new SnapshotProgressReporter(
            () -> SnapshotProgressReporter.Figures.of(running.metrics()),
            System.err,
            SnapshotProgressReporter.stderrIsATerminal(),
            progressIntervalMillis,
            System::nanoTime);
    progress.start();
  }

  /**
   * Stops writing, lets the output release what it can, stops the source, then writes the last
   * progress line of a snapshot. Idempotent.
   */
  private synchronized void finish() throws InterruptedException {
    closing = true;
    stopRequested.countDown();
    output.close();
    PgCdcSource running = source;
    if (running != null) {
      CountDownLatch stopped = new CountDownLatch(1);
      Thread watch =
          new Thread(
              () -> {
                try {
                  if (!stopped.await(5, TimeUnit.SECONDS)) {
                    LOG.warn(
                        "stopping: still waiting after 5 s for the handler to return from an event"
                            + " (a line that cannot be written: has the reader of stdout stopped"
                            + " reading?)");
                  }
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              },
              // named after the thread that starts it (pgcdc-stream-SLOT): its log lines name the
              // slot
              Thread.currentThread().getName() + "-stop-watch");
      watch.setDaemon(true);
      watch.start();
      try {
        running.stop(); // stores every acknowledgement made so far
      } finally {
        stopped.countDown();
      }
    }
    if (progress != null) {
      progress.stop(); // after the stop: the acknowledgements it stored count
    }
  }

  /** The shutdown hook: SIGTERM or SIGINT while streaming. Says so, stops, says where. */
  private void stopOnSignal() {
    System.err.println(
        "pgcdc: stopping on a signal (SIGTERM or SIGINT): storing the acknowledgements made so far");
    System.err.flush();
    try {
      finish();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    System.err.println("pgcdc: stopped; " + stoppedAt());
    System.err.flush();
  }

  /** Where a stop leaves the slot, for the last line on stderr. */
  private String stoppedAt() {
    PgCdcSource running = source;
    return events()
        + " events printed"
        + (running == null
            ? ""
            : ", the slot confirmed up to "
                + running.confirmedPosition()
                + "; a restart with the same --slot and --store goes on from there (what was"
                + " printed and not acknowledged comes again)");
  }

  private void handle(ChangeEvent event, CdcCheckpointHandle checkpoints) {
    if (closing || events.get() >= maxEvents) {
      // not written, not acknowledged, delivered again next time; the lines before it are final
      output.batchEnd(checkpoints);
      return;
    }
    CdcOffset offset = event.offset();
    if (offset.isSnapshotRead()) {
      // a read row is never printed twice by one process: a chunk read again (after a reconnect)
      // is a new read of its rows, with a new chunk number; its position is not the stream's
      output.write(event, false, checkpoints);
      if (output.endedBecause() != null) {
        return; // not written (stdout closed): not counted, not acknowledged
      }
      lastActivityNanos = System.nanoTime();
      events.incrementAndGet();
      return;
    }
    long end = offset.txEndLsn().asLong();
    // printed in commit order: everything at or before the newest printed event was printed,
    // and comes again only after a reconnect
    int byEnd = Long.compareUnsigned(end, printedEnd);
    boolean redelivered = byEnd < 0 || (byEnd == 0 && offset.eventIndex() <= printedIndex);
    // a failure stops the source; the event is not acknowledged
    output.write(event, redelivered, checkpoints);
    if (output.endedBecause() != null) {
      return; // not written (stdout closed): not counted, not acknowledged
    }
    if (!redelivered) {
      printedEnd = end;
      printedIndex = offset.eventIndex();
    }
    lastActivityNanos = System.nanoTime();
    events.incrementAndGet();
  }

  /**
   * Acknowledges in the background; a store failure stops the source by itself, an offset the
   * source no longer knows (its transaction was delivered again after a reconnect) is logged.
   */
  static CompletableFuture<Void> acknowledge(CdcCheckpointHandle checkpoints, CdcOffset offset) {
    CompletableFuture<Void> done = checkpoints.acknowledgeAsync(offset);
    done.whenComplete(
        (ignored, e) -> {
          Throwable cause = e instanceof CompletionException c ? c.getCause() : e;
          if (cause instanceof CdcCheckpointException stale) {
            LOG.info("acknowledgement of {} not recorded: {}", offset, stale.getMessage());
          }
        });
    return done;
  }

  /**
   * The default: stdout, acknowledged once flushed ({@code heldBytes}: the bytes written and not
   * flushed yet, from a {@link HeldOutput} under {@code out}). When stdout is closed by its reader
   * ({@code head}), the event whose line could not be written is not acknowledged, nothing more is
   * written, and pgcdc stops with one line and status 141.
   */
  static Output stdout(JsonLinesWriter out, java.util.function.IntSupplier heldBytes) {
    return new Output() {
      private volatile boolean closed;

      /** Offsets of the lines written since the last flush; the handler thread's. */
      private final ArrayList<CdcOffset> unflushed = new ArrayList<>();

      /** {@code unflushed.size()}, for {@link #idle} on other threads. */
      private volatile int waiting;

      /** The lines lost when stdout was closed before they were flushed. */
      private volatile int lost;

      @Override
      public void write(ChangeEvent event, boolean redelivered, CdcCheckpointHandle checkpoints) {
        if (closed) {
          return;
        }
        try {
          out.write(event, redelivered);
        } catch (UncheckedIOException e) {
          stdoutClosed(e);
          return;
        }
        unflushed.add(event.offset());
        waiting = unflushed.size();
        if (unflushed.size() >= FLUSH_EVERY || heldBytes.getAsInt() >= FLUSH_BYTES) {
          batchEnd(checkpoints);
        }
      }

      @Override
      public void batchEnd(CdcCheckpointHandle checkpoints) {
        if (closed || unflushed.isEmpty()) {
          return;
        }
        try {
          out.flush();
        } catch (UncheckedIOException e) {
          stdoutClosed(e); // the unflushed lines are not acknowledged: they come again
          return;
        }
        for (CdcOffset offset : unflushed) {
          acknowledge(checkpoints, offset);
        }
        unflushed.clear();
        waiting = 0;
      }

      private void stdoutClosed(UncheckedIOException e) {
        closed = true;
        lost = unflushed.size();
        unflushed.clear();
        waiting = 0;
        LOG.debug("stdout closed", e);
      }

      @Override
      public int unprinted() {
        return lost;
      }

      @Override
      public boolean idle() {
        return waiting == 0;
      }

      @Override
      public boolean ended() {
        return closed;
      }

      @Override
      public void close() {}

      @Override
      public String endedBecause() {
        return closed ? "stdout was closed (its reader stopped reading); stopped" : null;
      }
    };
  }

  /** {@code --output FILE}: acknowledged once synced. */
  static Output file(SyncedFileOutput file) {
    return new Output() {
      @Override
      public void write(ChangeEvent event, boolean redelivered, CdcCheckpointHandle checkpoints) {
        file.write(event, redelivered);
      }

      @Override
      public boolean idle() {
        return file.idle();
      }

      @Override
      public boolean ended() {
        return false;
      }

      @Override
      public void close() throws InterruptedException {
        file.close();
      }
    };
  }

  /**
   * {@code --acks-from}: stdout, acknowledged once the reader says so. When stdout is closed (the
   * reader stopped reading: {@code head}), nothing more is printed and the session ends with the
   * reader's acknowledgements (their end of file).
   */
  static Output readerAcknowledged(JsonLinesWriter out, ReaderAcks acks) {
    return new Output() {
      private volatile boolean stdoutClosed;

      @Override
      public void write(ChangeEvent event, boolean redelivered, CdcCheckpointHandle checkpoints) {
        if (stdoutClosed) {
          return;
        }
        boolean acknowledgedBefore = acks.printed(event.offset());
        try {
          out.write(event, redelivered);
          out.flush();
          if (acknowledgedBefore) {
            acknowledge(checkpoints, event.offset());
          }
        } catch (UncheckedIOException e) {
          stdoutClosed = true;
          acks.outputClosed();
          LOG.info("stdout closed ({}); waiting for the reader's acknowledgements to end", e);
        }
      }

      @Override
      public boolean idle() {
        return acks.awaiting() == 0;
      }

      @Override
      public boolean ended() {
        return acks.ended();
      }

      @Override
      public void close() {}
    };
  }
}

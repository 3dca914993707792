package io.datum.cdc.cli;

import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.cli.json.JsonLinesWriter;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.event.ChangeEvent;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs one source until an event limit, an idle timeout, a signal or a failure; writes each event
 * as one JSON line, flushes, then acknowledges it with {@code checkpointAsync}: the acknowledgement
 * is recorded at once and stored in the background, many per store write, so printing does not wait
 * for an fsync per event. An event printed whose acknowledgement was not yet stored when the
 * process died comes again; a stored one never does (with the default per-event durability). A
 * graceful stop stores every acknowledgement.
 */
final class StreamSession {

  private final PgCdcSource source;
  private final JsonLinesWriter out;
  private final long maxEvents;
  private final AtomicLong events = new AtomicLong();
  private final CountDownLatch limitReached = new CountDownLatch(1);
  private volatile long lastEventNanos = System.nanoTime();

  StreamSession(PgCdcSource source, JsonLinesWriter out, long maxEvents) {
    this.source = source;
    this.out = out;
    this.maxEvents = maxEvents;
  }

  /** Events written and acknowledged so far. */
  long events() {
    return events.get();
  }

  /**
   * Streams until done.
   *
   * @param idleExitMillis stop after this long without an event; 0 for never
   * @throws Exception the source's failure
   */
  void run(long idleExitMillis) throws Exception {
    Thread hook = new Thread(source::stop, "pgcdc-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    CompletableFuture<Void> termination = source.start(this::handle);
    try {
      while (!termination.isDone()) {
        if (limitReached.await(100, TimeUnit.MILLISECONDS)) {
          break;
        }
        if (idleExitMillis > 0
            && System.nanoTime() - lastEventNanos > TimeUnit.MILLISECONDS.toNanos(idleExitMillis)) {
          break;
        }
      }
      source.stop();
      termination.join();
    } catch (CompletionException e) {
      throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // the JVM is exiting on a signal; the hook stops the source
      }
    }
  }

  private void handle(ChangeEvent event, CdcCheckpointHandle checkpoints) {
    if (events.get() >= maxEvents) {
      return; // beyond the limit: not written, not acknowledged, delivered again next time
    }
    out.write(event); // an UncheckedIOException stops the source; the event stays unacknowledged
    out.flush();
    // a failed store stops the source, which ends run() with that failure
    checkpoints.acknowledgeAsync(event.offset());
    lastEventNanos = System.nanoTime();
    if (events.incrementAndGet() >= maxEvents) {
      limitReached.countDown();
    }
  }
}

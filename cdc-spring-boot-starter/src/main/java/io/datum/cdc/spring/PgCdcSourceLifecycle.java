package io.datum.cdc.spring;

import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.SourceState;
import io.datum.cdc.event.CdcHandler;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs a {@link PgCdcSource} with the application context: {@link #start()} calls {@code
 * source.start(handler)}, {@link #stop()} drains it with {@code source.stop()}. A failure of the
 * source's future is logged and kept ({@link #failure()}); with fail-fast, a source that fails
 * before it streams fails the context's start.
 */
public class PgCdcSourceLifecycle implements SmartLifecycle {

  private static final Logger log = LoggerFactory.getLogger(PgCdcSourceLifecycle.class);

  private final PgCdcSource source;
  private final CdcHandler handler;
  private final CdcProperties properties;
  private volatile CompletableFuture<Void> future;
  private volatile Throwable failure;
  private volatile boolean stopping;

  /**
   * Creates the lifecycle of a source.
   *
   * @param source the source to run
   * @param handler the application's handler
   * @param properties fail-fast, start timeout and phase
   */
  public PgCdcSourceLifecycle(PgCdcSource source, CdcHandler handler, CdcProperties properties) {
    this.source = source;
    this.handler = handler;
    this.properties = properties;
  }

  /**
   * Starts the source; with fail-fast, waits until it has started: it streams, or it reads a new
   * slot's initial snapshot ({@code SNAPSHOTTING}, which may last hours), or it fails (then
   * throws).
   *
   * @throws IllegalStateException with fail-fast, when the source fails or times out before it
   *     started
   */
  @Override
  public void start() {
    stopping = false;
    failure = null;
    CompletableFuture<Void> f;
    try {
      f = source.start(handler);
    } catch (RuntimeException e) {
      failure = e;
      log.error("datum-cdc: source on slot {} failed to start", source.slot(), e);
      if (properties.isFailFast()) {
        throw new IllegalStateException("datum-cdc: source failed to start: " + e.getMessage(), e);
      }
      return;
    }
    future = f;
    f.whenComplete(
        (v, e) -> {
          if (e != null) {
            failure = e;
            log.error("datum-cdc: source on slot {} failed", source.slot(), e);
          } else if (!stopping) {
            log.warn("datum-cdc: source on slot {} ended without being stopped", source.slot());
          }
        });
    if (properties.isFailFast()) {
      awaitStreaming(f, properties.getStartTimeout());
    }
  }

  private void awaitStreaming(CompletableFuture<Void> f, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    // a new slot's initial snapshot (SNAPSHOTTING) may take hours: started is enough
    while (source.state() == SourceState.NEW || source.state() == SourceState.STARTING) {
      if (f.isDone()) {
        Throwable e = failure;
        throw new IllegalStateException(
            "datum-cdc: source on slot "
                + source.slot()
                + " failed to start: "
                + (e == null ? "ended" : e.getMessage()),
            e);
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new IllegalStateException(
            "datum-cdc: source on slot "
                + source.slot()
                + " not started after datum.cdc.start-timeout="
                + timeout
                + " (state "
                + source.state()
                + ")");
      }
      try {
        f.get(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)), TimeUnit.NANOSECONDS);
      } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
        // polled again above
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("datum-cdc: interrupted while starting", e);
      }
    }
  }

  /**
   * Stops the source and waits for it to drain (up to the source's stop timeout), then logs at INFO
   * the durable watermark it stopped at (where the next start resumes).
   */
  @Override
  public void stop() {
    stopping = true;
    CompletableFuture<Void> f = future;
    if (f != null && !f.isDone()) {
      source.stop();
      log.info(
          "datum-cdc: source on slot {} stopped at durable watermark {}",
          source.slot(),
          source.watermark());
    }
    future = null;
  }

  /** Returns whether the source was started and has not ended. */
  @Override
  public boolean isRunning() {
    CompletableFuture<Void> f = future;
    return f != null && !f.isDone();
  }

  /** Returns the phase from {@code datum.cdc.phase}: late start, early stop. */
  @Override
  public int getPhase() {
    return properties.getPhase();
  }

  /** Returns the failure of the source's start or future, or null if it has not failed. */
  public Throwable failure() {
    return failure;
  }

  /** Returns whether {@link #stop()} was called since the last start. */
  public boolean stopRequested() {
    return stopping;
  }

  /** Returns the source. */
  public PgCdcSource source() {
    return source;
  }
}

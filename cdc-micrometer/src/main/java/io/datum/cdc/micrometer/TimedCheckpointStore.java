package io.datum.cdc.micrometer;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedSet;

/**
 * A {@link CdcCheckpointStore} that times every {@code load} and {@code store} of another with a
 * Micrometer {@link Timer} named {@code <prefix>.checkpoint.store}, tagged {@code
 * operation=load|store} and {@code outcome=success|failure}. Give it to {@code
 * PgCdcSource.Builder.checkpointStore}: the source stores once per acknowledged batch (or per
 * acknowledgement with {@code AcknowledgementDurability.EVENT}), off the per-event path. Closing it
 * closes the wrapped store.
 */
public final class TimedCheckpointStore implements CdcCheckpointStore {

  private final CdcCheckpointStore store;
  private final Timer loadOk;
  private final Timer loadFailed;
  private final Timer storeOk;
  private final Timer storeFailed;

  private TimedCheckpointStore(
      CdcCheckpointStore store, MeterRegistry registry, String prefix, Tags tags) {
    this.store = store;
    this.loadOk = timer(registry, prefix, tags, "load", "success");
    this.loadFailed = timer(registry, prefix, tags, "load", "failure");
    this.storeOk = timer(registry, prefix, tags, "store", "success");
    this.storeFailed = timer(registry, prefix, tags, "store", "failure");
  }

  /**
   * Wraps a store, with meters named under {@code datum.cdc}.
   *
   * @param store the store to time, not null
   * @param registry where the timers are registered, not null
   * @param tags extra tags for the timers (for example {@code slot}), not null
   * @return the timed store
   */
  public static TimedCheckpointStore of(
      CdcCheckpointStore store, MeterRegistry registry, Tags tags) {
    return of(store, registry, "datum.cdc", tags);
  }

  /**
   * Wraps a store.
   *
   * @param store the store to time, not null
   * @param registry where the timers are registered, not null
   * @param prefix the meter name prefix, not null
   * @param tags extra tags for the timers, not null
   * @return the timed store
   */
  public static TimedCheckpointStore of(
      CdcCheckpointStore store, MeterRegistry registry, String prefix, Tags tags) {
    return new TimedCheckpointStore(
        Objects.requireNonNull(store, "store"),
        Objects.requireNonNull(registry, "registry"),
        Objects.requireNonNull(prefix, "prefix"),
        Objects.requireNonNull(tags, "tags"));
  }

  private static Timer timer(
      MeterRegistry registry, String prefix, Tags tags, String operation, String outcome) {
    return Timer.builder(prefix + ".checkpoint.store")
        .description("latency of the checkpoint store's load and store calls")
        .tags(tags.and("operation", operation, "outcome", outcome))
        .register(registry);
  }

  /** Loads through the wrapped store, timed; throws what it throws. */
  @Override
  public Optional<CdcCheckpoint> load(String slot) {
    long start = System.nanoTime();
    try {
      Optional<CdcCheckpoint> loaded = store.load(slot);
      loadOk.record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
      return loaded;
    } catch (RuntimeException e) {
      loadFailed.record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
      throw e;
    }
  }

  /** Stores through the wrapped store, timed; throws what it throws. */
  @Override
  public void store(CdcCheckpoint checkpoint) {
    long start = System.nanoTime();
    try {
      store.store(checkpoint);
      storeOk.record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
    } catch (RuntimeException e) {
      storeFailed.record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
      throw e;
    }
  }

  /** Returns the wrapped store's slots (not timed). */
  @Override
  public SortedSet<String> slots() {
    return store.slots();
  }

  /** Returns the wrapped store's location. */
  @Override
  public String location() {
    return store.location();
  }

  /** Returns the timed store's ({@link CdcCheckpointStore#checkpointTable()}). */
  @Override
  public java.util.Optional<io.datum.cdc.CheckpointTable> checkpointTable() {
    return store.checkpointTable();
  }

  /** Closes the wrapped store. */
  @Override
  public void close() {
    store.close();
  }
}

package io.datum.cdc.micrometer;

import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.SlotStatus;
import io.datum.cdc.core.SourceMetrics;
import io.datum.cdc.core.config.SourceState;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

/**
 * Binds a {@link PgCdcSource}'s figures to a Micrometer {@link MeterRegistry}: the slot's status
 * (replication lag, active, wal_status, safe_wal_size), delivery and acknowledgement counters, the
 * watermark's age, pending work, snapshot progress and the lifecycle state. Every meter is tagged
 * {@code slot} and {@code publication} (plus the extra tags given) and named under a prefix, {@code
 * datum.cdc} by default; docs/metrics.md lists them. The source's figures are read only when the
 * registry reads a meter (nothing is added to the per-event path); the slot's status ({@link
 * PgCdcSource#readSlotStatus()}'s query) is read on a separate JDBC connection at most once per lag
 * interval, shared by every gauge over it. Close it (after the source) to close that connection.
 *
 * <pre>{@code
 * PgCdcSourceMetrics metrics = PgCdcSourceMetrics.builder(source).build();
 * metrics.bindTo(registry);
 * }</pre>
 */
public final class PgCdcSourceMetrics implements MeterBinder, AutoCloseable {

  private final PgCdcSource source;
  private final String prefix;
  private final Tags tags;
  private final LagProbe lag;

  private PgCdcSourceMetrics(Builder b) {
    this.source = b.source;
    this.prefix = b.prefix;
    this.tags = Tags.of("slot", source.slot(), "publication", source.publication()).and(b.tags);
    this.lag =
        new LagProbe(
            source.slot(),
            source::openConnection,
            b.lagInterval.toNanos(),
            System::nanoTime,
            () -> source.state() == SourceState.NEW || source.state() == SourceState.STARTING);
  }

  /**
   * Returns a builder for the source's metrics.
   *
   * @param source the source, not null; it may be started before or after binding
   * @return a builder with the default options
   * @throws NullPointerException if source is null
   */
  public static Builder builder(PgCdcSource source) {
    return new Builder(Objects.requireNonNull(source, "source"));
  }

  /**
   * Registers the meters. Binding to several registries shares one lag reading.
   *
   * @param registry the registry, not null
   */
  @Override
  public void bindTo(MeterRegistry registry) {
    Gauge.builder(prefix + ".replication.lag", lag, LagProbe::bytes)
        .description(
            "WAL bytes between the server's current position (on a standby its replay position)"
                + " and the slot's confirmed_flush_lsn")
        .baseUnit("bytes")
        .tags(tags)
        .register(registry);
    FunctionCounter.builder(prefix + ".replication.lag.read.errors", lag, LagProbe::errors)
        .description("failed reads of the slot's status (logged at WARN)")
        .tags(tags)
        .register(registry);
    Gauge.builder(prefix + ".slot.active", lag, LagProbe::active)
        .description("1 while a walsender streams from the slot (pg_replication_slots.active)")
        .tags(tags)
        .register(registry);
    for (SlotStatus.WalStatus status : SlotStatus.WalStatus.values()) {
      Gauge.builder(prefix + ".slot.wal.status", lag, p -> p.walStatus(status))
          .description("1 for the slot's current pg_replication_slots.wal_status, 0 for the others")
          .tags(tags.and("status", status.sqlName()))
          .register(registry);
    }
    Gauge.builder(prefix + ".standby.replay.lag", lag, LagProbe::standbyReplayLag)
        .description(
            "On a hot standby, WAL bytes its primary has written that the standby has not replayed"
                + " (pg_stat_wal_receiver.latest_end_lsn - pg_last_wal_replay_lsn()): changes the"
                + " slot cannot decode yet; NaN on a primary or while the WAL receiver is down")
        .baseUnit("bytes")
        .tags(tags)
        .register(registry);
    Gauge.builder(prefix + ".slot.safe.wal.size", lag, LagProbe::safeWalSize)
        .description(
            "WAL bytes that can be written before the slot risks losing needed WAL"
                + " (pg_replication_slots.safe_wal_size); NaN when unlimited")
        .baseUnit("bytes")
        .tags(tags)
        .register(registry);

    counter(
        registry,
        "events.delivered",
        "events",
        "change events of the stream the handler returned from (snapshot rows: snapshot.rows.read)",
        m -> m.eventsHandled());
    counter(
        registry,
        "transactions.delivered",
        "transactions",
        "transactions handed to delivery",
        m -> m.transactionsDelivered());
    counter(
        registry,
        "transactions.spilled",
        "transactions",
        "transactions spilled to disk (current connection)",
        m -> m.transactionsSpilled());
    counter(
        registry,
        "spill.written",
        "bytes",
        "bytes written to spill files (current connection)",
        m -> m.bytesSpilled());
    counter(
        registry,
        "events.skipped",
        "events",
        "changes skipped as undecodable (DecodeErrorPolicy.SKIP)",
        m -> m.eventsSkipped());
    counter(
        registry,
        "events.undecoded",
        "events",
        "events delivered with raw undecoded values (DecodeErrorPolicy.RAW)",
        m -> m.eventsWithUndecoded());
    FunctionCounter.builder(prefix + ".reconnects", source, s -> s.reconnects())
        .description("connection losses survived by reconnecting")
        .tags(tags)
        .register(registry);

    counter(
        registry,
        "events.acknowledged",
        "events",
        "events of the transactions the watermark passed (counted per transaction)",
        m -> m.eventsAcknowledged());
    gauge(
        registry,
        "watermark.age",
        "seconds",
        "seconds since the commit of the oldest delivered transaction the watermark waits for;"
            + " 0 when none is pending",
        m -> m.watermarkAgeSeconds());
    gauge(
        registry,
        "last.event.age",
        "seconds",
        "seconds since the handler last returned from an event (since start if none yet)",
        m -> m.secondsSinceLastEvent());
    gauge(
        registry,
        "handler.queue.depth",
        "events",
        "events waiting for a handler thread, summed over the threads (with one thread, the"
            + " hand-off's)",
        m -> m.handlerQueueDepth());
    gauge(
        registry,
        "handler.oldest.waiting",
        "seconds",
        "seconds the oldest event waiting in a handler thread's queue has waited (several handler"
            + " threads; 0 with one)",
        m -> m.oldestWaitingSeconds());
    gauge(
        registry,
        "transactions.pending",
        "transactions",
        "transactions delivered and not yet behind the watermark",
        m -> m.pendingTransactions());
    gauge(
        registry,
        "events.pending",
        "events",
        "events of the pending transactions",
        m -> m.pendingEvents());

    gauge(
        registry,
        "snapshot.in.progress",
        null,
        "1 while a snapshot has rows left",
        m -> m.snapshotInProgress() ? 1 : 0);
    gauge(
        registry,
        "snapshot.tables.left",
        "tables",
        "tables with snapshot rows left",
        m -> m.snapshotTablesLeft());
    gauge(
        registry,
        "snapshot.tables.done",
        "tables",
        "tables whose snapshot completed",
        m -> m.snapshotTablesDone());
    counter(
        registry,
        "snapshot.rows.read",
        "rows",
        "snapshot rows read and delivered",
        m -> m.snapshotRowsRead());
    counter(
        registry,
        "snapshot.rows.acknowledged",
        "rows",
        "snapshot rows acknowledged",
        m -> m.snapshotRowsAcknowledged());
    gauge(
        registry,
        "snapshot.rows.estimated",
        "rows",
        "rows the snapshots in progress are expected to read (pg_class.reltuples)",
        m -> m.snapshotRowsEstimated());
    gauge(
        registry,
        "snapshot.time.left",
        "seconds",
        "estimated seconds until the snapshots in progress are read",
        m -> m.snapshotSecondsLeft());

    for (SourceState state : SourceState.values()) {
      Gauge.builder(prefix + ".state", source, s -> s.state() == state ? 1 : 0)
          .description("1 for the source's current lifecycle state, 0 for the others")
          .tags(tags.and("state", state.name().toLowerCase(java.util.Locale.ROOT)))
          .register(registry);
    }
  }

  private void counter(
      MeterRegistry registry,
      String name,
      String unit,
      String description,
      ToDoubleFunction<SourceMetrics> f) {
    FunctionCounter.builder(prefix + '.' + name, source, s -> f.applyAsDouble(s.metrics()))
        .description(description)
        .baseUnit(unit)
        .tags(tags)
        .register(registry);
  }

  private void gauge(
      MeterRegistry registry,
      String name,
      String unit,
      String description,
      ToDoubleFunction<SourceMetrics> f) {
    Gauge.builder(prefix + '.' + name, source, s -> f.applyAsDouble(s.metrics()))
        .description(description)
        .baseUnit(unit)
        .tags(tags)
        .register(registry);
  }

  /** Closes the lag connection; the lag gauge reports NaN afterwards. Idempotent. */
  @Override
  public void close() {
    lag.close();
  }

  /** Options of {@link PgCdcSourceMetrics}; each setter checks its argument at once. */
  public static final class Builder {

    private final PgCdcSource source;
    private String prefix = "datum.cdc";
    private Tags tags = Tags.empty();
    private Duration lagInterval = Duration.ofSeconds(10);

    private Builder(PgCdcSource source) {
      this.source = source;
    }

    /**
     * Sets the meter name prefix, {@code datum.cdc} by default.
     *
     * @param prefix dot-separated lower case, not empty
     * @return this builder
     * @throws IllegalArgumentException if prefix is empty or ends with a dot
     */
    public Builder prefix(String prefix) {
      Objects.requireNonNull(prefix, "prefix");
      if (prefix.isEmpty() || prefix.endsWith(".")) {
        throw new IllegalArgumentException("prefix must be non-empty without a trailing dot");
      }
      this.prefix = prefix;
      return this;
    }

    /**
     * Adds tags to every meter, beside {@code slot} and {@code publication}.
     *
     * @param tags the tags, not null
     * @return this builder
     */
    public Builder tags(Iterable<Tag> tags) {
      this.tags = this.tags.and(Objects.requireNonNull(tags, "tags"));
      return this;
    }

    /**
     * Sets how often at most the slot's status (the lag and the {@code slot.*} gauges) is read from
     * the server, 10 seconds by default; reads of those gauges in between return the last value.
     *
     * @param interval positive
     * @return this builder
     * @throws IllegalArgumentException if interval is zero or negative
     */
    public Builder lagInterval(Duration interval) {
      Objects.requireNonNull(interval, "interval");
      if (interval.isZero() || interval.isNegative()) {
        throw new IllegalArgumentException("lagInterval must be positive: " + interval);
      }
      this.lagInterval = interval;
      return this;
    }

    /**
     * Returns the binder; no connection is opened until the lag is first read.
     *
     * @return a binder, not bound yet
     */
    public PgCdcSourceMetrics build() {
      return new PgCdcSourceMetrics(this);
    }
  }
}

package io.datum.cdc.micrometer;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.SourceState;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The binder over a real source on a real PostgreSQL 17. */
@EmbeddedPostgresTest
class PgCdcSourceMetricsTest {

  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final int ROWS = 20;

  private final EmbeddedPostgresServer pg;

  PgCdcSourceMetricsTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Test
  void lagGrowsWhileTheHandlerIsBlockedAndFallsBackOnceAcknowledged() throws Exception {
    pg.execute(
        "CREATE TABLE metered (id int PRIMARY KEY, pad text)",
        "CREATE PUBLICATION metered FOR TABLE metered");
    CountDownLatch release = new CountDownLatch(1);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (PgCdcSource source =
            PgCdcSource.builder()
                .jdbcUrl(pg.jdbcUrl())
                .user(pg.user())
                .slot("metered")
                .publication("metered")
                .checkpointStore(
                    TimedCheckpointStore.of(
                        new MemoryCheckpointStore(), registry, Tags.of("slot", "metered")))
                .createSlot(true)
                .statusInterval(Duration.ofMillis(100))
                .build();
        PgCdcSourceMetrics metrics =
            PgCdcSourceMetrics.builder(source)
                .lagInterval(Duration.ofMillis(100))
                .tags(Tags.of("app", "test"))
                .build()) {
      metrics.bindTo(registry);
      assertEquals(1, state(registry, SourceState.NEW));
      CompletableFuture<Void> done =
          source.start(
              (event, checkpoints) -> {
                if (!release.await(30, TimeUnit.SECONDS)) {
                  throw new AssertionError("never released");
                }
                checkpoints.acknowledge(event.offset());
              });
      assertEquals(1, state(registry, SourceState.STREAMING));
      assertEquals(0, state(registry, SourceState.NEW));
      await().atMost(WAIT).until(() -> gauge(registry, "datum.cdc.slot.active") == 1);
      assertEquals(1, walStatus(registry, "reserved"));
      for (String other : new String[] {"extended", "unreserved", "lost"}) {
        assertEquals(0, walStatus(registry, other), other);
      }
      assertTrue(
          Double.isNaN(gauge(registry, "datum.cdc.slot.safe.wal.size")),
          "max_slot_wal_keep_size is unlimited by default");
      assertTrue(
          Double.isNaN(gauge(registry, "datum.cdc.standby.replay.lag")), "a primary has none");
      assertEquals(0, gauge(registry, "datum.cdc.watermark.age"), "nothing pending yet");
      pg.execute(
          "INSERT INTO metered SELECT g, repeat('x', 200) FROM generate_series(1, " + ROWS + ") g");
      await().atMost(WAIT).until(() -> lag(registry) > 1000);
      assertEquals(0, counter(registry, "datum.cdc.events.delivered"), "the handler is blocked");
      // the transaction is pending: the watermark's age is the time since its commit, and grows
      await().atMost(WAIT).until(() -> gauge(registry, "datum.cdc.watermark.age") > 0);
      double age = gauge(registry, "datum.cdc.watermark.age");
      await().atMost(WAIT).until(() -> gauge(registry, "datum.cdc.watermark.age") > age + 0.2);
      double idle = gauge(registry, "datum.cdc.last.event.age");
      assertTrue(idle > 0.2, "no event handled yet: the time since start, " + idle);
      assertEquals(0, counter(registry, "datum.cdc.events.acknowledged"));
      release.countDown();
      await().atMost(WAIT).until(() -> counter(registry, "datum.cdc.events.delivered") == ROWS);
      await().atMost(WAIT).until(() -> counter(registry, "datum.cdc.events.acknowledged") == ROWS);
      assertEquals(0, gauge(registry, "datum.cdc.watermark.age"), "everything behind it");
      assertTrue(
          gauge(registry, "datum.cdc.last.event.age") < idle,
          "an event was handled since: " + gauge(registry, "datum.cdc.last.event.age"));
      await().atMost(WAIT).until(() -> lag(registry) < 1000);
      assertEquals(1, counter(registry, "datum.cdc.transactions.delivered"));
      assertEquals(0, gauge(registry, "datum.cdc.events.pending"));
      assertEquals(0, counter(registry, "datum.cdc.replication.lag.read.errors"));
      assertEquals(0, counter(registry, "datum.cdc.reconnects"));
      assertEquals(
          "test",
          registry
              .get("datum.cdc.replication.lag")
              .tag("slot", "metered")
              .gauge()
              .getId()
              .getTag("app"));
      io.micrometer.core.instrument.Timer stores =
          registry
              .get("datum.cdc.checkpoint.store")
              .tags("operation", "store", "outcome", "success")
              .timer();
      assertTrue(stores.count() >= 1, "at least one store of the acknowledgements");
      assertEquals(
          1,
          registry
              .get("datum.cdc.checkpoint.store")
              .tags("operation", "load", "outcome", "success")
              .timer()
              .count());
      source.stop();
      done.get(30, TimeUnit.SECONDS);
      assertEquals(1, state(registry, SourceState.STOPPED));
      await().atMost(WAIT).until(() -> gauge(registry, "datum.cdc.slot.active") == 0);
    }
    pg.execute("SELECT pg_drop_replication_slot('metered')");
  }

  @Test
  void aLagReadThatFailsIsNaNAndCountedNotThrown() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    PgCdcSource source =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .slot("no_such_slot")
            .publication("none")
            .checkpointStore(new MemoryCheckpointStore())
            .build();
    try (PgCdcSourceMetrics metrics = PgCdcSourceMetrics.builder(source).build()) {
      metrics.bindTo(registry);
      assertTrue(Double.isNaN(lag(registry)));
      assertEquals(
          0,
          counter(registry, "datum.cdc.replication.lag.read.errors"),
          "before the start, a missing slot is no read error (the start may create it)");
      org.junit.jupiter.api.Assertions.assertThrows(
          io.datum.cdc.CdcException.class, () -> source.start((e, c) -> {}).join());
      assertEquals(io.datum.cdc.core.config.SourceState.FAILED, source.state());
    }
    try (PgCdcSourceMetrics metrics = PgCdcSourceMetrics.builder(source).build()) {
      registry = new SimpleMeterRegistry();
      metrics.bindTo(registry);
      assertTrue(Double.isNaN(lag(registry)));
      assertTrue(Double.isNaN(gauge(registry, "datum.cdc.slot.active")));
      assertTrue(Double.isNaN(walStatus(registry, "lost")));
      assertEquals(
          1,
          counter(registry, "datum.cdc.replication.lag.read.errors"),
          "the gauges share one read per interval");
    }
  }

  @Test
  void optionsAreCheckedAtOnce() {
    PgCdcSource source =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .slot("x")
            .publication("x")
            .checkpointStore(new MemoryCheckpointStore())
            .build();
    assertThrows(
        IllegalArgumentException.class,
        () -> PgCdcSourceMetrics.builder(source).lagInterval(Duration.ZERO));
    assertThrows(
        IllegalArgumentException.class, () -> PgCdcSourceMetrics.builder(source).prefix("a."));
  }

  /**
   * A source on a hot standby (the default version, 17): the standby's replay lag is 0 or more
   * while it replays, grows while its replay is paused and the primary writes, and the slot's lag
   * counts from the replay position; on a primary the gauge is NaN (checked above).
   */
  @Test
  void onAStandbyTheReplayLagIsMeasuredAndGrowsWhileReplayIsPaused() throws Exception {
    pg.execute(
        "CREATE TABLE metered_sb (id int PRIMARY KEY, pad text)",
        "CREATE PUBLICATION metered_sb FOR TABLE metered_sb");
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (EmbeddedPostgresServer standby = pg.createStandby("metered_standby");
        PgCdcSource source =
            PgCdcSource.builder()
                .jdbcUrl(standby.jdbcUrl())
                .primaryJdbcUrl(pg.jdbcUrl())
                .user(pg.user())
                .slot("metered_sb")
                .publication("metered_sb")
                .checkpointStore(new MemoryCheckpointStore())
                .createSlot(true)
                .build();
        PgCdcSourceMetrics metrics =
            PgCdcSourceMetrics.builder(source).lagInterval(Duration.ofMillis(100)).build()) {
      metrics.bindTo(registry);
      source.start((event, checkpoints) -> checkpoints.acknowledge(event.offset()));
      await().atMost(WAIT).until(() -> gauge(registry, "datum.cdc.standby.replay.lag") >= 0);
      standby.execute("SELECT pg_wal_replay_pause()");
      try {
        pg.execute(
            "INSERT INTO metered_sb SELECT g, repeat('x', 200) FROM generate_series(1, "
                + ROWS
                + ") g");
        await().atMost(WAIT).until(() -> gauge(registry, "datum.cdc.standby.replay.lag") > 1000);
      } finally {
        standby.execute("SELECT pg_wal_replay_resume()");
      }
      await().atMost(WAIT).until(() -> counter(registry, "datum.cdc.events.acknowledged") == ROWS);
      await().atMost(WAIT).until(() -> gauge(registry, "datum.cdc.standby.replay.lag") < 1000);
    }
  }

  private static double lag(SimpleMeterRegistry registry) {
    return registry.get("datum.cdc.replication.lag").gauge().value();
  }

  private static double counter(SimpleMeterRegistry registry, String name) {
    return registry.get(name).functionCounter().count();
  }

  private static double gauge(SimpleMeterRegistry registry, String name) {
    return registry.get(name).gauge().value();
  }

  private static double walStatus(SimpleMeterRegistry registry, String status) {
    return registry.get("datum.cdc.slot.wal.status").tag("status", status).gauge().value();
  }

  private static double state(SimpleMeterRegistry registry, SourceState state) {
    return registry
        .get("datum.cdc.state")
        .tag("state", state.name().toLowerCase(java.util.Locale.ROOT))
        .gauge()
        .value();
  }
}

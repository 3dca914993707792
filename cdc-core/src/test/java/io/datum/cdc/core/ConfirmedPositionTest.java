package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link PgCdcSource#confirmedPosition()} is what the slot's {@code confirmed_flush_lsn} follows,
 * not the watermark: capped here by {@code confirmedFlushLimit} (an incomplete initial snapshot's
 * consistent point caps it alike), it stays at the cap while the watermark moves past it, and the
 * slot with it; raised, both follow the watermark. {@code pgcdc stream --idle-exit} and {@code
 * --stop-at-lsn} wait for it (a watermark past a held position made them exit with the slot
 * behind).
 */
@EmbeddedPostgresTest
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ConfirmedPositionTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  private final EmbeddedPostgresServer pg;

  ConfirmedPositionTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  private PgLsn slotConfirmed() throws Exception {
    return PgLsn.parse(
        pg.queryString(
            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots"
                + " WHERE slot_name = 'confirmed'"));
  }

  @Test
  void theConfirmedPositionIsTheCappedOneAndTheSlotFollowsIt() throws Exception {
    pg.execute(
        "CREATE TABLE confirmed (id int PRIMARY KEY)",
        "CREATE PUBLICATION confirmed FOR TABLE confirmed",
        "SELECT pg_create_logical_replication_slot('confirmed', 'pgoutput')");
    PgLsn start = slotConfirmed();
    AtomicReference<PgLsn> cap = new AtomicReference<>(start);
    try (PgCdcSource source =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .slot("confirmed")
            .publication("confirmed")
            .checkpointStore(new MemoryCheckpointStore())
            .confirmedFlushLimit(cap::get)
            .build()) {
      CompletableFuture<Void> done =
          source.start((event, checkpoints) -> checkpoints.acknowledge(event.offset()));
      pg.execute("INSERT INTO confirmed SELECT generate_series(1, 100)");
      await().atMost(WAIT).until(() -> source.watermark().isAfter(start) || done.isDone());
      assertFalse(done.isDone(), "the source stopped: " + done);
      assertTrue(source.watermark().isAfter(start), source.watermark().toString());
      assertEquals(start, source.confirmedPosition(), "capped at the limit");
      assertFalse(slotConfirmed().isAfter(start), "the slot passed the cap: " + slotConfirmed());

      cap.set(PgLsn.of(Long.MAX_VALUE));
      PgLsn watermark = source.watermark();
      await().atMost(WAIT).until(() -> !source.confirmedPosition().isBefore(watermark));
      await().atMost(WAIT).until(() -> !slotConfirmed().isBefore(watermark));
      assertEquals(source.watermark(), source.confirmedPosition(), "no cap: the watermark");
    }
  }
}

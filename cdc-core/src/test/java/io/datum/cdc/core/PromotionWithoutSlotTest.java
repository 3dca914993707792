package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcReplicationException;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.store.file.FileCheckpointStore;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import io.datum.cdc.testkit.EmbeddedPostgresVersions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A standby promoted without the source's slot (PostgreSQL 16, which has no failover slots, and 17
 * with an ordinary slot, which the standby does not synchronize): the source's reconnect to the
 * promoted standby ends in {@code SLOT_MISSING} naming the slot and the promotion, and no slot is
 * created there; so does a later start with the same store, even with {@code createSlot(true)}. One
 * primary/standby pair per version.
 */
@EmbeddedPostgresVersions({16, 17})
@EmbeddedPostgresTest(settings = "wal_sender_timeout=10s")
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class PromotionWithoutSlotTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String SLOT = "plain_slot";

  private final EmbeddedPostgresServer primary;

  PromotionWithoutSlotTest(EmbeddedPostgresServer primary) {
    this.primary = primary;
  }

  @Test
  void theReconnectToAPromotedStandbyWithoutTheSlotFailsNamingThePromotion(@TempDir Path dir)
      throws Exception {
    try (EmbeddedPostgresServer standby = primary.createStandby("standby_plain")) {
      primary.execute(
          "CREATE TABLE plain (id int PRIMARY KEY)", "CREATE PUBLICATION plain FOR TABLE plain");
      String url =
          "jdbc:postgresql://localhost:"
              + primary.port()
              + ",localhost:"
              + standby.port()
              + "/postgres?targetServerType=primary";
      EventCollector events = new EventCollector(true);
      try (FileCheckpointStore store = FileCheckpointStore.open(dir);
          PgCdcSource source =
              PgCdcSource.builder()
                  .jdbcUrl(url)
                  .user(primary.user())
                  .slot(SLOT)
                  .publication("plain")
                  .checkpointStore(store)
                  .createSlot(true)
                  .reconnect(Integer.MAX_VALUE, Duration.ofMillis(100), Duration.ofSeconds(1))
                  .build()) {
        CompletableFuture<Void> done = source.start(events);
        primary.execute("INSERT INTO plain VALUES (1)", "INSERT INTO plain VALUES (2)");
        events.take(2, WAIT);
        await().atMost(WAIT).until(() -> !source.watermark().isZero());
        // the standby has everything the source acknowledged, so the timeline check passes and
        // the missing slot is what stops the source
        String written = primary.queryString("SELECT pg_current_wal_lsn()");
        await()
            .atMost(WAIT)
            .until(
                () ->
                    "t"
                        .equals(
                            standby.queryString(
                                "SELECT pg_last_wal_replay_lsn() >= '" + written + "'::pg_lsn")));
        primary.stop(EmbeddedPostgresServer.ShutdownMode.IMMEDIATE);
        standby.promote();

        ExecutionException e =
            assertThrows(ExecutionException.class, () -> done.get(60, TimeUnit.SECONDS));
        CdcReplicationException failure =
            assertInstanceOf(CdcReplicationException.class, e.getCause(), e.getCause().toString());
        assertEquals(CdcReplicationException.Reason.SLOT_MISSING, failure.reason());
        String message = failure.getMessage();
        assertTrue(message.contains("\"" + SLOT + "\" does not exist"), message);
        assertTrue(message.contains("a promoted standby"), message);
        assertTrue(message.contains("from timeline 1 to 2"), message);
        assertTrue(message.contains("failoverSlot(true)"), message);
        assertEquals(
            "0",
            standby.queryString(
                "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + SLOT + "'"),
            "no slot created on the promoted standby");
      }
      // a process started later with the same store, even one told to create the slot, refuses
      try (FileCheckpointStore store = FileCheckpointStore.open(dir);
          PgCdcSource restarted =
              PgCdcSource.builder()
                  .jdbcUrl(url)
                  .user(primary.user())
                  .slot(SLOT)
                  .publication("plain")
                  .checkpointStore(store)
                  .createSlot(true)
                  .build()) {
        CdcReplicationException atStart =
            assertThrows(
                CdcReplicationException.class, () -> restarted.start(new EventCollector(true)));
        assertEquals(CdcReplicationException.Reason.SLOT_MISSING, atStart.reason());
        assertTrue(atStart.getMessage().contains("a promoted standby"), atStart.getMessage());
        assertTrue(
            atStart.getMessage().contains("--create-slot --trust-slot-position"),
            atStart.getMessage());
      }
      assertEquals(
          "0",
          standby.queryString(
              "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + SLOT + "'"),
          "no slot created at the start either");
    }
  }
}

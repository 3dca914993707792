package io.datum.cdc.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcReplicationException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A slot whose WAL PostgreSQL removed (max_slot_wal_keep_size) is a clear, final error. */
@EmbeddedPostgresTest(
    settings = {"max_slot_wal_keep_size=1MB", "max_wal_size=32MB", "min_wal_size=32MB"})
class WalRemovedTest {

  private final EmbeddedPostgresServer pg;

  WalRemovedTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Test
  void aSlotInvalidatedBecauseItsWalWasRemovedCannotBeStarted() throws Exception {
    pg.execute(
        "CREATE TABLE churn (id int, filler text)",
        "CREATE PUBLICATION lost FOR TABLE churn",
        "SELECT pg_create_logical_replication_slot('lost', 'pgoutput')");
    // far more WAL than the slot may keep, then checkpoints, which invalidate it
    for (int i = 0; i < 4; i++) {
      pg.execute(
          "INSERT INTO churn SELECT g, repeat('x', 500) FROM generate_series(1, 20000) g",
          "SELECT pg_switch_wal()",
          "CHECKPOINT");
    }
    assertEquals(
        "lost",
        pg.queryString("SELECT wal_status FROM pg_replication_slots WHERE slot_name = 'lost'"));
    try (java.sql.Connection c = pg.getConnection()) {
      SlotStatus status = SlotStatus.read(c, "lost");
      assertEquals(SlotStatus.WalStatus.LOST, status.walStatus());
      assertEquals(null, status.safeWalSizeBytes(), "no safe size for a lost slot");
    }
    CdcReplicationException e =
        assertThrows(
            CdcReplicationException.class,
            () ->
                PgCdcSource.builder()
                    .jdbcUrl(pg.jdbcUrl())
                    .user(pg.user())
                    .slot("lost")
                    .publication("lost")
                    .checkpointStore(new MemoryCheckpointStore())
                    .reconnect(5, Duration.ofMillis(50), Duration.ofMillis(100))
                    .build()
                    .start(new EventCollector(true)));
    assertTrue(
        e.getMessage().contains("\"lost\"") && e.getMessage().contains("WAL"), e.getMessage());
    assertEquals(CdcReplicationException.Reason.SLOT_INVALIDATED, e.reason());
    pg.execute("SELECT pg_drop_replication_slot('lost')");
  }
}

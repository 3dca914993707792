package io.datum.cdc.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link SlotStatus} read from a real PostgreSQL 17. */
@EmbeddedPostgresTest
class SlotStatusTest {

  private final EmbeddedPostgresServer pg;

  SlotStatusTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Test
  void anIdleSlotIsInactiveReservedAndItsLagIsTheWalWrittenSince() throws Exception {
    pg.execute(
        "SELECT pg_create_logical_replication_slot('status_idle', 'pgoutput')",
        "CREATE TABLE status_pad (id int, pad text)");
    PgCdcSource source = source("status_idle");
    SlotStatus before = source.readSlotStatus();
    pg.execute("INSERT INTO status_pad SELECT g, repeat('x', 100) FROM generate_series(1, 100) g");
    SlotStatus after = source.readSlotStatus();
    assertEquals("status_idle", after.slot());
    assertFalse(after.active());
    assertNull(after.activePid());
    assertEquals(SlotStatus.WalStatus.RESERVED, after.walStatus());
    assertNull(after.safeWalSizeBytes(), "max_slot_wal_keep_size is -1 by default: unlimited");
    // 100 rows of over 100 bytes each went into the WAL after the slot's confirmed position
    assertTrue(after.lagBytes() - before.lagBytes() > 10_000, before + " then " + after);
    String lsnDiff =
        pg.queryString(
            "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::int8"
                + " FROM pg_replication_slots WHERE slot_name = 'status_idle'");
    assertEquals(Long.parseLong(lsnDiff), source.readSlotStatus().lagBytes(), "nothing written");
    pg.execute("SELECT pg_drop_replication_slot('status_idle')");
  }

  @Test
  void aMissingSlotIsAnSqlException() {
    SQLException e =
        assertThrows(SQLException.class, () -> source("status_missing").readSlotStatus());
    assertTrue(e.getMessage().contains("\"status_missing\" does not exist"), e.getMessage());
  }

  @Test
  void safeWalSizeIsReportedWhenTheSlotsWalIsLimited() throws Exception {
    pg.execute(
        "SELECT pg_create_logical_replication_slot('status_limited', 'pgoutput')",
        "ALTER SYSTEM SET max_slot_wal_keep_size = '1GB'",
        "SELECT pg_reload_conf()");
    try {
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> source("status_limited").readSlotStatus().safeWalSizeBytes() != null);
      long safe = source("status_limited").readSlotStatus().safeWalSizeBytes();
      // the server counts from the segment of the last checkpoint (xlog.c, GetWALAvailability),
      // so the figure is max_slot_wal_keep_size give or take the few segments written since
      assertTrue(Math.abs(safe - (1L << 30)) < 64L << 20, "about max_slot_wal_keep_size: " + safe);
    } finally {
      pg.execute(
          "ALTER SYSTEM RESET max_slot_wal_keep_size",
          "SELECT pg_reload_conf()",
          "SELECT pg_drop_replication_slot('status_limited')");
    }
  }

  private PgCdcSource source(String slot) {
    return PgCdcSource.builder()
        .jdbcUrl(pg.jdbcUrl())
        .user(pg.user())
        .slot(slot)
        .publication("none")
        .checkpointStore(new MemoryCheckpointStore())
        .build();
  }
}

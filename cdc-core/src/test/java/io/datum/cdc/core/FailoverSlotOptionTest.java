package io.datum.cdc.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcReplicationException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import io.datum.cdc.testkit.EmbeddedPostgresVersions;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code failoverSlot(true)}: refused before PostgreSQL 17 with the option and the server's version
 * named; on 17 the created slot is a failover slot ({@code pg_replication_slots.failover}), and an
 * existing ordinary slot is refused with a remedy that works ({@code ALTER_REPLICATION_SLOT}).
 */
@EmbeddedPostgresVersions({16, 17})
@EmbeddedPostgresTest
class FailoverSlotOptionTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private final EmbeddedPostgresServer pg;

  FailoverSlotOptionTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @BeforeEach
  void schema() throws Exception {
    pg.execute(
        "CREATE TABLE IF NOT EXISTS fopt (id int PRIMARY KEY)",
        "DROP PUBLICATION IF EXISTS fopt",
        "CREATE PUBLICATION fopt FOR TABLE fopt");
  }

  private PgCdcSource.Builder source(String slot) {
    return PgCdcSource.builder()
        .jdbcUrl(pg.jdbcUrl())
        .user(pg.user())
        .slot(slot)
        .publication("fopt")
        .checkpointStore(new MemoryCheckpointStore())
        .failoverSlot(true)
        .reconnect(0, Duration.ofMillis(50), Duration.ofMillis(50));
  }

  private String slotCount(String slot) throws Exception {
    return pg.queryString(
        "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + slot + "'");
  }

  @Test
  void refusedBeforePostgres17() throws Exception {
    assumeTrue(pg.majorVersion() < 17, "failover slots exist from PostgreSQL 17");
    try (PgCdcSource source = source("fopt_old").createSlot(true).build()) {
      CdcConfigurationException e =
          assertThrows(
              CdcConfigurationException.class, () -> source.start(new EventCollector(true)));
      assertTrue(e.getMessage().contains("failoverSlot (pgcdc --failover-slot)"), e.getMessage());
      assertTrue(e.getMessage().contains("PostgreSQL 17"), e.getMessage());
      assertTrue(e.getMessage().contains("server_version_num"), e.getMessage());
    }
    assertEquals("0", slotCount("fopt_old"), "no slot created");
  }

  @Test
  void theCreatedSlotIsAFailoverSlot() throws Exception {
    assumeTrue(pg.majorVersion() >= 17, "failover slots exist from PostgreSQL 17");
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source = source("fopt_new").createSlot(true).build()) {
      source.start(events);
      assertEquals(
          "t",
          pg.queryString("SELECT failover FROM pg_replication_slots WHERE slot_name = 'fopt_new'"));
      pg.execute("INSERT INTO fopt VALUES (1)");
      events.take(1, WAIT);
    }
    pg.execute("SELECT pg_drop_replication_slot('fopt_new')");
  }

  @Test
  void anExistingOrdinarySlotIsRefusedWithARemedyThatWorks() throws Exception {
    assumeTrue(pg.majorVersion() >= 17, "failover slots exist from PostgreSQL 17");
    pg.execute("SELECT pg_create_logical_replication_slot('fopt_plain', 'pgoutput')");
    try (PgCdcSource source = source("fopt_plain").build()) {
      CdcReplicationException e =
          assertThrows(CdcReplicationException.class, () -> source.start(new EventCollector(true)));
      assertEquals(CdcReplicationException.Reason.SLOT_INCOMPATIBLE, e.reason());
      assertTrue(e.getMessage().contains("not a failover slot"), e.getMessage());
      assertTrue(
          e.getMessage().contains("ALTER_REPLICATION_SLOT fopt_plain (FAILOVER true)"),
          e.getMessage());
    }
    try (Connection replication =
            pg.getReplicationConnection(EmbeddedPostgresServer.DEFAULT_DATABASE);
        Statement st = replication.createStatement()) {
      st.execute("ALTER_REPLICATION_SLOT fopt_plain (FAILOVER true)");
    }
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source = source("fopt_plain").build()) {
      source.start(events);
      pg.execute("INSERT INTO fopt VALUES (2)");
      events.take(1, WAIT);
    }
    pg.execute("SELECT pg_drop_replication_slot('fopt_plain')");
  }
}

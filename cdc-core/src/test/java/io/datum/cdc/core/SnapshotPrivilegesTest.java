package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.TableId;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A role without SELECT on a published table (issue #26: it was retried for ever, the slot held,
 * progress at 0%): the snapshot fails the source at once, at the exported snapshot and online,
 * naming the table and the GRANT to run; once granted, a restart on the same store completes it.
 */
@EmbeddedPostgresTest
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SnapshotPrivilegesTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final TableId SECRET = new TableId("public", "priv_secret");

  private final EmbeddedPostgresServer pg;

  SnapshotPrivilegesTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  private PgCdcSource.Builder source(String slot, MemoryCheckpointStore store) {
    return PgCdcSource.builder()
        .jdbcUrl("jdbc:postgresql://" + EmbeddedPostgresServer.HOST + ":" + pg.port() + "/postgres")
        .user("priv_cdc")
        .slot(slot)
        .publication("priv_pub")
        .checkpointStore(store)
        .snapshot(SnapshotMode.INITIAL);
  }

  private static void assertNamesTheGrant(CompletableFuture<Void> done) {
    ExecutionException failed =
        assertThrows(ExecutionException.class, () -> done.get(30, TimeUnit.SECONDS));
    CdcConfigurationException e =
        assertInstanceOf(CdcConfigurationException.class, failed.getCause());
    assertTrue(
        e.getMessage().contains("cannot read public.priv_secret")
            && e.getMessage().contains("[SQLSTATE 42501]")
            && e.getMessage()
                .contains("GRANT SELECT ON \"public\".\"priv_secret\" TO \"priv_cdc\""),
        e.getMessage());
  }

  @Test
  void aTableTheRoleCannotReadFailsAtOnceNamingTheGrantAndARestartAfterItCompletes()
      throws Exception {
    pg.execute(
        "CREATE ROLE priv_cdc LOGIN REPLICATION",
        "CREATE TABLE priv_open (id int PRIMARY KEY, v text)",
        "CREATE TABLE priv_secret (id int PRIMARY KEY, v text)",
        "INSERT INTO priv_open SELECT g, 'o' FROM generate_series(1, 500) g",
        "INSERT INTO priv_secret SELECT g, 's' FROM generate_series(1, 500) g",
        "GRANT SELECT ON priv_open TO priv_cdc",
        "CREATE PUBLICATION priv_pub FOR TABLE priv_open, priv_secret");
    try {
      // at a new slot's exported snapshot
      MemoryCheckpointStore exported = new MemoryCheckpointStore();
      try (PgCdcSource s = source("priv_exported", exported).createSlot(true).build()) {
        assertNamesTheGrant(s.start(new SnapshotReplica()));
      }
      // online, at an existing slot
      pg.execute("SELECT pg_create_logical_replication_slot('priv_online', 'pgoutput')");
      MemoryCheckpointStore online = new MemoryCheckpointStore();
      try (PgCdcSource s = source("priv_online", online).build()) {
        assertNamesTheGrant(s.start(new SnapshotReplica()));
      }
      // granted: the same store and slot complete the snapshot
      pg.execute("GRANT SELECT ON priv_secret TO priv_cdc");
      SnapshotReplica replica = new SnapshotReplica().key(SECRET, "id");
      try (PgCdcSource s = source("priv_online", online).build()) {
        CompletableFuture<Void> done = s.start(replica);
        await().atMost(WAIT).until(() -> !s.snapshotInProgress() || done.isDone());
        assertEquals(500, replica.table(SECRET).size());
        assertTrue(online.load("priv_online").orElseThrow().snapshot().initialCompleted());
        s.stop();
        done.get(30, TimeUnit.SECONDS);
      }
      assertEquals(List.of(), replica.readsAfterChanges);
    } finally {
      pg.execute(
          "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
              + " WHERE slot_name LIKE 'priv_%'");
    }
  }
}

package io.datum.cdc.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcReplicationException;
import io.datum.cdc.CdcReplicationException.Reason;
import io.datum.cdc.ClusterIdentity;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Checkpoints name the cluster, timeline and database they were written for, and a source refuses a
 * stored checkpoint whose positions belong to another: the identity PostgreSQL itself reports
 * ({@code pg_control_system()}, {@code pg_control_checkpoint()}, {@code current_database()}) is the
 * oracle.
 */
@EmbeddedPostgresTest
class ClusterIdentityTest {

  private final EmbeddedPostgresServer pg;

  ClusterIdentityTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @BeforeAll
  static void schema(EmbeddedPostgresServer pg) throws Exception {
    pg.execute(
        "CREATE TABLE ident (id int PRIMARY KEY, v text)",
        "CREATE PUBLICATION ident FOR TABLE ident");
  }

  private ClusterIdentity server() throws Exception {
    return new ClusterIdentity(
        Long.parseUnsignedLong(pg.queryString("SELECT system_identifier FROM pg_control_system()")),
        Integer.parseInt(pg.queryString("SELECT timeline_id FROM pg_control_checkpoint()")),
        pg.queryString("SELECT current_database()"));
  }

  private PgCdcSource source(String slot, MemoryCheckpointStore store, boolean allowChange) {
    return source(slot, "ident", store, allowChange);
  }

  private PgCdcSource source(
      String slot, String publication, MemoryCheckpointStore store, boolean allowChange) {
    return PgCdcSource.builder()
        .jdbcUrl(pg.jdbcUrl())
        .user(pg.user())
        .slot(slot)
        .publication(publication)
        .checkpointStore(store)
        .allowClusterChange(allowChange)
        .allowPublicationChange(allowChange)
        .reconnect(0, Duration.ofMillis(50), Duration.ofMillis(50))
        .build();
  }

  /** A slot created by SQL, and a store holding a checkpoint at its position with {@code who}. */
  private MemoryCheckpointStore storeFor(String slot, ClusterIdentity who) throws Exception {
    pg.execute("SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
    PgLsn position =
        PgLsn.parse(
            pg.queryString(
                "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '"
                    + slot
                    + "'"));
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    store.store(CdcCheckpoint.atWatermark(slot, position).withCluster(who));
    return store;
  }

  @Test
  void aStoredCheckpointNamesTheServersSystemTimelineAndDatabase() throws Exception {
    pg.execute("SELECT pg_create_logical_replication_slot('ident_named', 'pgoutput')");
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    EventCollector events = new EventCollector(true);
    PgCdcSource source = source("ident_named", store, false);
    source.start(events);
    pg.execute("INSERT INTO ident VALUES (1, 'one')");
    events.take(1, Duration.ofSeconds(30));
    source.stop();
    assertEquals(server(), store.load("ident_named").orElseThrow().cluster());
    assertEquals("ident", store.load("ident_named").orElseThrow().publication());
    pg.execute("SELECT pg_drop_replication_slot('ident_named')");
  }

  @Test
  void anotherSystemIdentifierOrDatabaseIsRefusedNamingBoth() throws Exception {
    ClusterIdentity here = server();
    ClusterIdentity otherSystem =
        new ClusterIdentity(here.systemIdentifier() + 1, here.timeline(), here.database());
    MemoryCheckpointStore store = storeFor("ident_other", otherSystem);
    CdcReplicationException e =
        assertThrows(
            CdcReplicationException.class,
            () -> source("ident_other", store, false).start(new EventCollector(true)));
    assertEquals(Reason.CLUSTER_MISMATCH, e.reason());
    assertTrue(
        e.getMessage().contains("system " + otherSystem.systemIdentifierText())
            && e.getMessage().contains("system " + here.systemIdentifierText())
            && e.getMessage().contains("--allow-cluster-change"),
        e.getMessage());
    // nothing was stored over the checkpoint
    assertEquals(otherSystem, store.load("ident_other").orElseThrow().cluster());

    store.store(
        store
            .load("ident_other")
            .orElseThrow()
            .withCluster(
                new ClusterIdentity(here.systemIdentifier(), here.timeline(), "elsewhere")));
    CdcReplicationException database =
        assertThrows(
            CdcReplicationException.class,
            () -> source("ident_other", store, false).start(new EventCollector(true)));
    assertEquals(Reason.CLUSTER_MISMATCH, database.reason());
    assertTrue(database.getMessage().contains("database \"elsewhere\""), database.getMessage());

    // accepted when asked: later checkpoints name this server
    EventCollector events = new EventCollector(true);
    PgCdcSource accepting = source("ident_other", store, true);
    accepting.start(events);
    pg.execute("INSERT INTO ident VALUES (2, 'two')");
    assertEquals(
        2, ((InsertEvent) events.take(1, Duration.ofSeconds(30)).get(0)).after().get("id"));
    accepting.stop();
    assertEquals(here, store.load("ident_other").orElseThrow().cluster());
    pg.execute("SELECT pg_drop_replication_slot('ident_other')");
  }

  @Test
  void aLaterStoredTimelineThanTheServersIsRefused() throws Exception {
    ClusterIdentity here = server();
    MemoryCheckpointStore store = storeFor("ident_timeline", here.onTimeline(here.timeline() + 1));
    CdcReplicationException e =
        assertThrows(
            CdcReplicationException.class,
            () -> source("ident_timeline", store, false).start(new EventCollector(true)));
    assertEquals(Reason.TIMELINE_DIVERGED, e.reason());
    assertTrue(
        e.getMessage().contains("timeline " + (here.timeline() + 1))
            && e.getMessage().contains("earlier timeline"),
        e.getMessage());
    pg.execute("SELECT pg_drop_replication_slot('ident_timeline')");
  }

  @Test
  void aCheckpointWithoutAnIdentityIsAdopted() throws Exception {
    MemoryCheckpointStore store = storeFor("ident_adopted", null);
    EventCollector events = new EventCollector(true);
    PgCdcSource source = source("ident_adopted", store, false);
    source.start(events);
    pg.execute("INSERT INTO ident VALUES (3, 'three')");
    events.take(1, Duration.ofSeconds(30));
    source.stop();
    assertEquals(server(), store.load("ident_adopted").orElseThrow().cluster());
    pg.execute("SELECT pg_drop_replication_slot('ident_adopted')");
  }

  @Test
  void anotherPublicationThanTheCheckpointWasStreamedWithIsRefusedNamingBoth() throws Exception {
    pg.execute(
        "CREATE TABLE ident_other_table (id int PRIMARY KEY)",
        "CREATE PUBLICATION ident_other FOR TABLE ident_other_table");
    MemoryCheckpointStore store = storeFor("ident_pub", server());
    store.store(store.load("ident_pub").orElseThrow().withPublication("ident"));
    CdcReplicationException e =
        assertThrows(
            CdcReplicationException.class,
            () -> source("ident_pub", "ident_other", store, false).start(new EventCollector(true)));
    assertEquals(Reason.PUBLICATION_CHANGED, e.reason());
    assertTrue(
        e.getMessage().contains("written streaming publication \"ident\", not \"ident_other\"")
            && e.getMessage().contains("--allow-publication-change"),
        e.getMessage());
    assertEquals("ident", store.load("ident_pub").orElseThrow().publication());

    // the same publication with more tables is no change; accepted when asked, and recorded
    EventCollector events = new EventCollector(true);
    PgCdcSource accepting = source("ident_pub", "ident_other", store, true);
    accepting.start(events);
    pg.execute("INSERT INTO ident_other_table VALUES (4)");
    assertEquals(
        4, ((InsertEvent) events.take(1, Duration.ofSeconds(30)).get(0)).after().get("id"));
    accepting.stop();
    assertEquals("ident_other", store.load("ident_pub").orElseThrow().publication());
    pg.execute("SELECT pg_drop_replication_slot('ident_pub')");
  }

  @Test
  void anotherPublicationThanAnInitialOnlySnapshotReadIsRefusedNamingBoth() throws Exception {
    pg.execute(
        "CREATE TABLE ident_snap_a (id int PRIMARY KEY)",
        "INSERT INTO ident_snap_a VALUES (1)",
        "CREATE TABLE ident_snap_b (id int PRIMARY KEY)",
        "INSERT INTO ident_snap_b VALUES (2)",
        "CREATE PUBLICATION ident_snap_pa FOR TABLE ident_snap_a",
        "CREATE PUBLICATION ident_snap_pb FOR TABLE ident_snap_a, ident_snap_b");
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    try (PgCdcSource initialOnly =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .slot("ident_snap")
            .publication("ident_snap_pa")
            .createSlot(true)
            .snapshot(SnapshotMode.INITIAL_ONLY)
            .checkpointStore(store)
            .build()) {
      initialOnly.start(new EventCollector(true)).get(90, TimeUnit.SECONDS);
    }
    CdcCheckpoint afterSnapshot = store.load("ident_snap").orElseThrow();
    assertTrue(afterSnapshot.snapshot().initialCompleted());
    assertTrue(afterSnapshot.watermark().isZero(), "nothing streamed yet: " + afterSnapshot);
    assertEquals("ident_snap_pa", afterSnapshot.publication());

    // streaming another publication next would never deliver ident_snap_b's row (2), which the
    // snapshot of ident_snap_pa did not read
    CdcReplicationException e =
        assertThrows(
            CdcReplicationException.class,
            () ->
                source("ident_snap", "ident_snap_pb", store, false)
                    .start(new EventCollector(true)));
    assertEquals(Reason.PUBLICATION_CHANGED, e.reason());
    assertTrue(
        e.getMessage()
                .contains(
                    "written snapshotting publication \"ident_snap_pa\", not"
                        + " \"ident_snap_pb\"")
            && e.getMessage().contains("--allow-publication-change"),
        e.getMessage());
    assertEquals(afterSnapshot, store.load("ident_snap").orElseThrow(), "the store is untouched");
    pg.execute("SELECT pg_drop_replication_slot('ident_snap')");
  }
}

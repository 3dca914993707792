package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.CdcReplicationException;
import io.datum.cdc.TableId;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.store.file.FileCheckpointStore;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import io.datum.cdc.testkit.EmbeddedPostgresVersions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faults particular to a source on a hot standby (PostgreSQL 16+), each with its outcome: the
 * standby restarted (the source reconnects; nothing lost, nothing acknowledged comes again); the
 * standby promoted while streaming (the source goes on with the same slot and store on the new
 * primary, and writes its snapshot watermarks there from then on; a later start with the store
 * passes the timeline check); the slot invalidated by a catalog conflict (the standby without
 * {@code hot_standby_feedback}: the source stops, naming the reason and the remedy). One standby
 * per test.
 */
@EmbeddedPostgresVersions({16, 17, 18})
@EmbeddedPostgresTest(settings = "wal_sender_timeout=10s")
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class StandbyFaultsTest {

  private static final Duration WAIT = Duration.ofSeconds(90);

  private final EmbeddedPostgresServer primary;

  StandbyFaultsTest(EmbeddedPostgresServer primary) {
    this.primary = primary;
  }

  /** Records inserts and read rows by id, acknowledges each durably, then records that. */
  private static final class Ledger implements CdcHandler {
    final List<Integer> delivered = new ArrayList<>();
    final Set<Integer> acknowledged = new HashSet<>();
    final List<Integer> againAfterAcknowledged = new ArrayList<>();
    final List<Integer> reads = new ArrayList<>();

    @Override
    public synchronized void handle(ChangeEvent event, CdcCheckpointHandle checkpoints) {
      int id;
      if (event instanceof ReadEvent r) {
        id = (Integer) r.after().get("id");
        reads.add(id);
      } else {
        id = (Integer) ((InsertEvent) event).after().get("id");
        if (acknowledged.contains(id)) {
          againAfterAcknowledged.add(id);
        }
        delivered.add(id);
      }
      checkpoints.acknowledge(event.offset());
      if (!(event instanceof ReadEvent)) {
        acknowledged.add(id);
      }
    }

    synchronized Set<Integer> deliveredSet() {
      return new HashSet<>(delivered);
    }

    synchronized int readCount() {
      return reads.size();
    }
  }

  private static Set<Integer> ids(int from, int to) {
    return IntStream.rangeClosed(from, to).boxed().collect(Collectors.toSet());
  }

  private void insert(EmbeddedPostgresServer server, String table, int from, int to)
      throws Exception {
    for (int i = from; i <= to; i++) {
      server.execute("INSERT INTO " + table + " VALUES (" + i + ")");
    }
  }

  private PgCdcSource.Builder source(
      EmbeddedPostgresServer standby, FileCheckpointStore store, String slot, String publication) {
    return PgCdcSource.builder()
        .jdbcUrl(standby.jdbcUrl())
        .primaryJdbcUrl(primary.jdbcUrl())
        .user(primary.user())
        .slot(slot)
        .publication(publication)
        .createSlot(true)
        .checkpointStore(store)
        .reconnect(Integer.MAX_VALUE, Duration.ofMillis(100), Duration.ofSeconds(1));
  }

  @Test
  void aStandbyRestartIsAReconnectAndLosesNothing(@TempDir Path dir) throws Exception {
    primary.execute(
        "CREATE TABLE sf_restart (id int PRIMARY KEY)",
        "CREATE PUBLICATION sf_restart FOR TABLE sf_restart");
    try (EmbeddedPostgresServer standby = primary.createStandby("sf_restart");
        FileCheckpointStore store = FileCheckpointStore.open(dir);
        PgCdcSource source = source(standby, store, "sf_restart_slot", "sf_restart").build()) {
      Ledger ledger = new Ledger();
      CompletableFuture<Void> done = source.start(ledger);
      insert(primary, "sf_restart", 1, 30);
      await().atMost(WAIT).until(() -> ledger.deliveredSet().size() == 30 || done.isDone());
      standby.restart(EmbeddedPostgresServer.ShutdownMode.IMMEDIATE);
      insert(primary, "sf_restart", 31, 60);
      await().atMost(WAIT).until(() -> ledger.deliveredSet().size() == 60 || done.isDone());
      assertFalse(done.isDone(), "the source ended: " + done);
      assertEquals(ids(1, 60), ledger.deliveredSet());
      assertEquals(List.of(), ledger.againAfterAcknowledged);
      assertTrue(source.metrics().reconnects() >= 1, "reconnected after the restart");
    }
  }

  @Test
  void aPromotionWhileStreamingGoesOnWithTheSameSlotAndStore(@TempDir Path dir) throws Exception {
    TableId table = new TableId("public", "sf_promote");
    primary.execute(
        "CREATE TABLE sf_promote (id int PRIMARY KEY)",
        "CREATE PUBLICATION sf_promote FOR TABLE sf_promote");
    EmbeddedPostgresServer standby = primary.createStandby("sf_promote");
    try {
      Ledger ledger = new Ledger();
      try (FileCheckpointStore store = FileCheckpointStore.open(dir);
          PgCdcSource source =
              source(standby, store, "sf_promote_slot", "sf_promote")
                  .snapshot(SnapshotMode.ON_REQUEST)
                  .build()) {
        CompletableFuture<Void> done = source.start(ledger);
        insert(primary, "sf_promote", 1, 50);
        await().atMost(WAIT).until(() -> ledger.deliveredSet().size() == 50 || done.isDone());
        standby.awaitReplay(WAIT);
        standby.promote();
        // the former primary goes on (a split brain the operator ends); the promoted server is
        // the one written to now, and the source's snapshot watermarks go there too
        insert(standby, "sf_promote", 51, 100);
        await().atMost(WAIT).until(() -> ledger.deliveredSet().size() == 100 || done.isDone());
        assertFalse(done.isDone(), "the source ended: " + done);
        source.snapshot(table);
        await().atMost(WAIT).until(() -> ledger.readCount() == 100 || done.isDone());
        assertFalse(done.isDone(), "the source ended: " + done);
        assertEquals(ids(1, 100), new HashSet<>(ledger.reads));
        assertEquals(ids(1, 100), ledger.deliveredSet());
        assertEquals(List.of(), ledger.againAfterAcknowledged);
      }
      // a later start with the same store on the promoted server: the timeline check accepts
      // the promotion (timeline 1 continued by 2), and the stream goes on after the watermark
      try (FileCheckpointStore store = FileCheckpointStore.open(dir);
          PgCdcSource again = source(standby, store, "sf_promote_slot", "sf_promote").build()) {
        CompletableFuture<Void> done = again.start(ledger);
        insert(standby, "sf_promote", 101, 110);
        await().atMost(WAIT).until(() -> ledger.deliveredSet().size() == 110 || done.isDone());
        assertFalse(done.isDone(), "the source ended: " + done);
        assertEquals(ids(1, 110), ledger.deliveredSet());
        assertEquals(List.of(), ledger.againAfterAcknowledged);
        assertEquals(2, again.cluster().timeline(), "checkpoints name the new timeline");
      }
    } finally {
      standby.close();
      primary.execute("SELECT pg_drop_replication_slot('sf_promote')");
    }
  }

  /**
   * The primary restarted with {@code wal_level = replica}: the standby invalidates its logical
   * slots when it replays the parameter change ({@code wal_level_insufficient}; on 16 {@code
   * conflicting}), and the source stops naming it. A primary of its own: this one is restarted with
   * other settings.
   */
  @Test
  void aPrimaryWhoseWalLevelIsLoweredInvalidatesTheSlotAndTheSourceSaysSo(
      @TempDir Path dir, @TempDir Path base) throws Exception {
    EmbeddedPostgresServer own =
        EmbeddedPostgresServer.builder()
            .majorVersion(primary.majorVersion())
            .settings(primary.settings())
            .baseDirectory(base)
            .start();
    EmbeddedPostgresServer lowered = null;
    try (EmbeddedPostgresServer standby = own.createStandby("sf_wal_level")) {
      own.execute(
          "CREATE TABLE sf_level (id int PRIMARY KEY)",
          "CREATE PUBLICATION sf_level FOR TABLE sf_level");
      standby.awaitReplay(WAIT);
      try (FileCheckpointStore store = FileCheckpointStore.open(dir);
          PgCdcSource source =
              PgCdcSource.builder()
                  .jdbcUrl(standby.jdbcUrl())
                  .primaryJdbcUrl(own.jdbcUrl())
                  .user(own.user())
                  .slot("sf_level_slot")
                  .publication("sf_level")
                  .createSlot(true)
                  .checkpointStore(store)
                  .reconnect(Integer.MAX_VALUE, Duration.ofMillis(100), Duration.ofSeconds(1))
                  .build()) {
        EventCollector events = new EventCollector(true);
        CompletableFuture<Void> done = source.start(events);
        own.execute("INSERT INTO sf_level VALUES (1)");
        events.take(1, WAIT);
        int port = own.port();
        own.stop(EmbeddedPostgresServer.ShutdownMode.FAST);
        lowered =
            EmbeddedPostgresServer.builder()
                .majorVersion(primary.majorVersion())
                .settings(primary.settings())
                .setting("wal_level", "replica")
                .baseDirectory(base)
                .port(port)
                .start();
        assertInvalidated(done, "wal_level_insufficient", "wal_level");
      }
    } finally {
      if (lowered != null) {
        lowered.close();
      }
      own.close();
    }
  }

  @Test
  void aSlotInvalidatedByACatalogConflictStopsTheSourceNamingTheRemedy(@TempDir Path dir)
      throws Exception {
    primary.execute(
        "CREATE TABLE sf_conflict (id int PRIMARY KEY)",
        "CREATE PUBLICATION sf_conflict FOR TABLE sf_conflict");
    try (EmbeddedPostgresServer standby =
            primary.createStandby("sf_conflict", Map.of("hot_standby_feedback", "off"));
        FileCheckpointStore store = FileCheckpointStore.open(dir);
        PgCdcSource source = source(standby, store, "sf_conflict_slot", "sf_conflict").build()) {
      // the handler acknowledges nothing: the slot's catalog_xmin stays where it was
      EventCollector events = new EventCollector(false);
      CompletableFuture<Void> done = source.start(events);
      primary.execute("INSERT INTO sf_conflict VALUES (1)");
      events.take(1, WAIT);
      // catalog rows the slot still needs, removed on the primary, which the standby does not
      // tell what it needs (hot_standby_feedback off); replaying the removal invalidates the slot
      primary.execute(
          "CREATE TABLE sf_dropped (x int)",
          "DROP TABLE sf_dropped",
          "VACUUM FULL pg_class",
          "INSERT INTO sf_conflict VALUES (2)");
      String reason = assertInvalidated(done, "rows_removed", "hot_standby_feedback = on");
      assertEquals(reason, source.readSlotStatus().invalidationReason());
    }
  }

  /**
   * Asserts that the source stopped with {@code SLOT_INVALIDATED}, naming PostgreSQL's reason
   * ({@code conflict} on 16, which has only {@code conflicting}) and the remedy's words.
   *
   * @return the reason the message names
   */
  private String assertInvalidated(CompletableFuture<Void> done, String since17, String remedy) {
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> done.get(WAIT.toSeconds(), TimeUnit.SECONDS));
    CdcReplicationException failure =
        assertInstanceOf(CdcReplicationException.class, e.getCause(), e.getCause().toString());
    assertEquals(CdcReplicationException.Reason.SLOT_INVALIDATED, failure.reason());
    String reason = primary.majorVersion() >= 17 ? since17 : "conflict";
    assertTrue(
        failure.getMessage().contains("invalidation_reason " + reason), failure.getMessage());
    assertTrue(failure.getMessage().contains(remedy), failure.getMessage());
    return reason;
  }
}

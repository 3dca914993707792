package io.datum.cdc.store.jdbc;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.datum.cdc.CheckpointTable;
import io.datum.cdc.TableId;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.RowChange;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A {@code jdbc:} store in the database its source decodes, under a publication {@code FOR ALL
 * TABLES} (which publishes the store's table too): the store's own writes, one per stored
 * acknowledgement, are left out, so acknowledging never produces a change to acknowledge.
 */
@EmbeddedPostgresTest
class StoreTableLeftOutTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  private final EmbeddedPostgresServer pg;
  private final UrlDataSource dataSource;

  StoreTableLeftOutTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
    this.dataSource = new UrlDataSource(pg.jdbcUrl());
  }

  @Test
  void underAPublicationForAllTablesTheStoresOwnWritesAreNotDelivered() throws Exception {
    pg.execute(
        "CREATE TABLE feed_t (id int PRIMARY KEY)", "CREATE PUBLICATION feed_all FOR ALL TABLES");
    List<ChangeEvent> events = Collections.synchronizedList(new ArrayList<>());
    try (JdbcCheckpointStore store =
            JdbcCheckpointStore.builder(dataSource).table("feed_ckpt").open();
        PgCdcSource source =
            PgCdcSource.builder()
                .jdbcUrl(pg.jdbcUrl())
                .user(pg.user())
                .slot("feed_slot")
                .publication("feed_all")
                .createSlot(true)
                .checkpointStore(store)
                .build()) {
      assertEquals(
          Optional.of(
              new CheckpointTable(
                  pg.queryString("SELECT system_identifier::text FROM pg_control_system()"),
                  pg.queryString("SELECT current_database()"),
                  new TableId("public", "feed_ckpt"))),
          store.checkpointTable());
      assertEquals(
          "1",
          pg.queryString(
              "SELECT count(*)::text FROM pg_publication_tables WHERE pubname = 'feed_all'"
                  + " AND tablename = 'feed_ckpt'"),
          "the publication publishes the store's table");
      CompletableFuture<Void> done =
          source.start(
              (event, handle) -> {
                events.add(event);
                handle.acknowledge(event.offset()); // stored before it returns: a row write
              });
      for (int id = 1; id <= 3; id++) {
        pg.execute("INSERT INTO feed_t VALUES (" + id + ")");
        int seen = id;
        await().atMost(WAIT).until(() -> events.size() >= seen);
      }
      // the store wrote its row for each acknowledgement; a change after those writes
      assertEquals(
          "1", pg.queryString("SELECT count(*)::text FROM feed_ckpt WHERE slot = 'feed_slot'"));
      pg.execute("INSERT INTO feed_t VALUES (4)");
      await()
          .atMost(WAIT)
          .until(
              () ->
                  events.stream()
                      .anyMatch(
                          e ->
                              e instanceof InsertEvent i
                                  && i.table().table().equals("feed_t")
                                  && Integer.valueOf(4).equals(i.after().get("id"))));
      List<String> delivered;
      synchronized (events) {
        delivered =
            events.stream()
                .map(e -> e.kind() + " " + (e instanceof RowChange r ? r.table() : ""))
                .toList();
      }
      assertEquals(Collections.nCopies(4, "INSERT public.feed_t"), delivered);
      assertEquals(4, source.metrics().eventsHandled());
      source.stop();
      done.get(30, TimeUnit.SECONDS);
    } finally {
      pg.execute("SELECT pg_drop_replication_slot('feed_slot')", "DROP PUBLICATION feed_all");
    }
  }

  @Test
  void withoutTheClustersIdentityTheSourceRefusesToStartInsteadOfFeedingItself() throws Exception {
    pg.execute(
        "CREATE TABLE blind_t (id int PRIMARY KEY)",
        "CREATE PUBLICATION blind_all FOR ALL TABLES",
        "CREATE ROLE blind_store LOGIN",
        "GRANT CREATE ON SCHEMA public TO blind_store",
        "REVOKE EXECUTE ON FUNCTION pg_control_system() FROM PUBLIC");
    String url = pg.jdbcUrl().replace("user=" + pg.user(), "user=blind_store");
    try (JdbcCheckpointStore store =
        JdbcCheckpointStore.builder(new UrlDataSource(url)).table("blind_ckpt").open()) {
      CheckpointTable own = store.checkpointTable().orElseThrow();
      assertEquals(null, own.systemIdentifier(), "the role may not read pg_control_system()");
      try (PgCdcSource source =
          PgCdcSource.builder()
              .jdbcUrl(pg.jdbcUrl())
              .user(pg.user())
              .slot("blind_slot")
              .publication("blind_all")
              .createSlot(true)
              .checkpointStore(store)
              .build()) {
        io.datum.cdc.CdcConfigurationException refused =
            org.junit.jupiter.api.Assertions.assertThrows(
                io.datum.cdc.CdcConfigurationException.class, () -> source.start((e, h) -> {}));
        org.junit.jupiter.api.Assertions.assertTrue(
            refused
                    .getMessage()
                    .contains("publishes public.blind_ckpt, the table of the checkpoint")
                && refused
                    .getMessage()
                    .contains("GRANT EXECUTE ON FUNCTION pg_control_system() TO the store's role"),
            refused.getMessage());
      }
    } finally {
      pg.execute(
          "GRANT EXECUTE ON FUNCTION pg_control_system() TO PUBLIC",
          "DROP PUBLICATION blind_all",
          "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
              + " WHERE slot_name = 'blind_slot'");
    }
  }
}

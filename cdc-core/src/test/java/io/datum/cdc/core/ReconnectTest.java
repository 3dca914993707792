package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcReplicationException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Reconnecting across a server restart, and giving up on what retrying cannot fix. */
@EmbeddedPostgresTest
class ReconnectTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private final EmbeddedPostgresServer pg;

  ReconnectTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  private PgCdcSource.Builder source(String name) {
    return source(name, Duration.ofMillis(50));
  }

  private PgCdcSource.Builder source(String name, Duration backoff) {
    return PgCdcSource.builder()
        .jdbcUrl(pg.jdbcUrl())
        .user(pg.user())
        .slot(name)
        .publication(name)
        .checkpointStore(new MemoryCheckpointStore())
        .createSlot(true)
        .reconnect(100, backoff, backoff.multipliedBy(10));
  }

  @Test
  void aServerRestartIsSurvived() throws Exception {
    pg.execute(
        "CREATE TABLE restarted (id int PRIMARY KEY)",
        "CREATE PUBLICATION restarted FOR TABLE restarted");
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source = source("restarted").build()) {
      CompletableFuture<Void> done = source.start(events);
      pg.execute("INSERT INTO restarted VALUES (1)");
      events.take(1, WAIT);
      pg.restart(EmbeddedPostgresServer.ShutdownMode.IMMEDIATE); // a crash and recovery
      await().atMost(WAIT).until(() -> source.reconnects() >= 1);
      pg.execute("INSERT INTO restarted VALUES (2)");
      List<ChangeEvent> got = events.take(1, WAIT);
      // after a crash PostgreSQL may send transaction 1 again if its confirmation was not on disk;
      // the source drops what is behind its watermark, so 2 comes next either way
      assertEquals(2, ((InsertEvent) got.get(0)).after().get("id"));
      assertFalse(done.isDone());
    }
    pg.execute("SELECT pg_drop_replication_slot('restarted')");
  }

  @Test
  void aDroppedSlotStopsTheSourceInsteadOfRetryingForever() throws Exception {
    pg.execute(
        "CREATE TABLE dropped (id int PRIMARY KEY)",
        "CREATE PUBLICATION dropped FOR TABLE dropped");
    // a backoff long enough to drop the slot before the first attempt
    try (PgCdcSource source = source("dropped", Duration.ofSeconds(4)).build()) {
      CompletableFuture<Void> done = source.start(new EventCollector(true));
      await()
          .atMost(WAIT)
          .until(
              () ->
                  "t"
                      .equals(
                          pg.queryString(
                              "SELECT active FROM pg_replication_slots WHERE slot_name = 'dropped'")));
      // terminate the walsender and drop the slot before the source can reconnect
      pg.execute(
          "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = 'dropped'");
      await()
          .atMost(WAIT)
          .until(
              () -> {
                try {
                  pg.execute("SELECT pg_drop_replication_slot('dropped')");
                  return true;
                } catch (SQLException stillActive) {
                  return false;
                }
              });
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> done.get(60, TimeUnit.SECONDS));
      assertInstanceOf(CdcReplicationException.class, e.getCause(), e.getCause().toString());
      String message = e.getCause().getMessage();
      assertTrue(
          message.contains("\"dropped\" was dropped while the source was reconnecting")
              && message.contains("a new slot would start after them"),
          message);
      assertEquals(
          CdcReplicationException.Reason.SLOT_MISSING,
          ((CdcReplicationException) e.getCause()).reason());
    }
  }

  @Test
  void aDroppedPublicationStopsTheSourceWithAClearError() throws Exception {
    pg.execute(
        "CREATE TABLE unpub (id int PRIMARY KEY)", "CREATE PUBLICATION unpub FOR TABLE unpub");
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source = source("unpub").build()) {
      CompletableFuture<Void> done = source.start(events);
      pg.execute("INSERT INTO unpub VALUES (1)");
      events.take(1, WAIT);
      pg.execute("DROP PUBLICATION unpub", "INSERT INTO unpub VALUES (2)");
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> done.get(60, TimeUnit.SECONDS));
      assertInstanceOf(CdcReplicationException.class, e.getCause(), e.getCause().toString());
      assertTrue(
          e.getCause().getMessage().contains("publication \"unpub\" does not exist"),
          e.getCause().getMessage());
      assertEquals(0, source.reconnects(), "not retried");
    }
    pg.execute("SELECT pg_drop_replication_slot('unpub')");
  }

  @Test
  void losingTheReplicationAttributeStopsTheSourceInsteadOfRetrying() throws Exception {
    assertRoleChangeStopsTheSource(
        "noreplication", "NOREPLICATION", "permission denied to start WAL sender");
  }

  @Test
  void anAuthenticationFailureStopsTheSourceInsteadOfRetrying() throws Exception {
    assertRoleChangeStopsTheSource("nologin", "NOLOGIN", "is not permitted to log in");
  }

  /**
   * Streams as a role with REPLICATION, changes the role with {@code ALTER ROLE .. change},
   * terminates the walsender and expects the reconnect to fail at once with {@code expected}.
   */
  private void assertRoleChangeStopsTheSource(String name, String change, String expected)
      throws Exception {
    String role = "cdc_" + name;
    pg.execute(
        "CREATE TABLE " + name + " (id int PRIMARY KEY)",
        "CREATE PUBLICATION " + name + " FOR TABLE " + name,
        "SELECT pg_create_logical_replication_slot('" + name + "', 'pgoutput')",
        "CREATE ROLE " + role + " LOGIN REPLICATION");
    EventCollector events = new EventCollector(true);
    String urlWithoutUser =
        "jdbc:postgresql://" + EmbeddedPostgresServer.HOST + ":" + pg.port() + "/postgres";
    // retrying with this backoff (1 s doubling to 10 s, 100 attempts) would outlast the 60 s wait
    try (PgCdcSource source =
        source(name, Duration.ofSeconds(1))
            .jdbcUrl(urlWithoutUser)
            .user(role)
            .createSlot(false)
            .build()) {
      CompletableFuture<Void> done = source.start(events);
      pg.execute("INSERT INTO " + name + " VALUES (1)");
      events.take(1, WAIT);
      pg.execute(
          "ALTER ROLE " + role + " " + change,
          "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '"
              + name
              + "'");
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> done.get(60, TimeUnit.SECONDS));
      assertTrue(e.getCause().getMessage().contains(expected), e.getCause().toString());
      assertEquals(0, source.reconnects(), "not retried");
    }
    pg.execute("SELECT pg_drop_replication_slot('" + name + "')", "DROP ROLE " + role);
  }
}

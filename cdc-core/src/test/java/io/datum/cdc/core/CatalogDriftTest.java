package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcDecodingException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.core.config.DecodeErrorPolicy;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Decoding does not depend on a catalog that has moved on: against PostgreSQL 17, a change is made,
 * then the types of its columns are dropped, renamed or altered, and only then does a source (one
 * in text mode, one in binary mode, each on its own slot created before the change) read it. The
 * values come from what the stream carries: Type messages (a domain under its builtin base type's
 * name), binary array headers (the element type), binary records (their field types), the enum
 * label's text; and from what the catalog said before the change, for renamed and altered types.
 */
@EmbeddedPostgresTest
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CatalogDriftTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  private final EmbeddedPostgresServer pg;

  CatalogDriftTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  private PgCdcSource source(String slot, String publication, boolean binary) {
    return PgCdcSource.builder()
        .jdbcUrl(pg.jdbcUrl())
        .user(pg.user())
        .slot(slot)
        .publication(publication)
        .checkpointStore(new MemoryCheckpointStore())
        .binary(binary)
        // undecodable values stop the source, saying why (the other policies:
        // DecodeErrorPolicyTest)
        .onDecodeError(DecodeErrorPolicy.STOP)
        .build();
  }

  private void slots(String... names) throws java.sql.SQLException {
    for (String name : names) {
      pg.execute("SELECT pg_create_logical_replication_slot('" + name + "', 'pgoutput')");
    }
  }

  private static Row after(ChangeEvent e) {
    return ((InsertEvent) e).after();
  }

  @Test
  void typesDroppedBeforeTheSourceReadsTheChangeDecodeFromTheStream() throws Exception {
    pg.execute(
        "CREATE TYPE d_mood AS ENUM ('sad', 'ok', 'a,b')",
        "CREATE TYPE d_pair AS (a int, b text, dt date)",
        "CREATE DOMAIN d_posint AS int CHECK (VALUE > 0)",
        "CREATE DOMAIN d_span AS int4range",
        "CREATE DOMAIN d_addr AS inet",
        "CREATE TABLE dropped (id int PRIMARY KEY, m d_mood, c d_pair, d d_posint, sp d_span,"
            + " ad d_addr)",
        "CREATE TABLE dropped_arrays (id int PRIMARY KEY, cs d_pair[], ms d_mood[])",
        "CREATE PUBLICATION dropped FOR TABLE dropped, dropped_arrays");
    slots("dropped_text", "dropped_binary");
    pg.execute(
        "INSERT INTO dropped VALUES (1, 'a,b', ROW(1, 'x \"y\"', '2026-01-01'), 5, '[1,3)',"
            + " '10.0.0.1/8')",
        "INSERT INTO dropped_arrays VALUES (1, ARRAY[ROW(2, '', NULL)::d_pair, NULL],"
            + " ARRAY['sad', 'a,b', NULL]::d_mood[])");
    // a migration drops the tables and their types before the source reads the changes
    pg.execute(
        "DROP TABLE dropped, dropped_arrays",
        "DROP TYPE d_pair",
        "DROP TYPE d_mood",
        "DROP DOMAIN d_posint",
        "DROP DOMAIN d_span",
        "DROP DOMAIN d_addr");
    for (boolean binary : new boolean[] {false, true}) {
      EventCollector events = new EventCollector(true);
      try (PgCdcSource s = source(binary ? "dropped_binary" : "dropped_text", "dropped", binary)) {
        CompletableFuture<Void> done = s.start(events);
        Row row = after(events.take(1, WAIT).get(0));
        String mode = binary ? "binary" : "text";
        assertEquals("a,b", row.get("m"), mode + ": an enum label");
        assertEquals("(1,\"x \"\"y\"\"\",2026-01-01)", row.get("c"), mode + ": a record");
        assertEquals(5, row.get("d"), mode + ": a domain over int4, by the Type message");
        assertEquals("[1,3)", row.get("sp"), mode + ": a domain over int4range");
        assertEquals("10.0.0.1/8", row.get("ad"), mode + ": a domain over inet");
        if (binary) {
          // one rule for a type and its arrays (issue #25): the array header names the element
          // type, and each element decodes as a column of that type would (a record by its field
          // types, an enum label; both arrived raw before)
          Row arrays = after(events.take(1, WAIT).get(0));
          assertEquals(Arrays.asList("(2,\"\",)", null), arrays.get("cs"), "records");
          assertEquals(Arrays.asList("sad", "a,b", null), arrays.get("ms"), "enum labels");
          assertEquals(List.of(), arrays.undecodedColumns());
          assertFalse(done.isDone(), "binary: " + done);
        } else {
          // an array's text does not name its element type: the source stops, naming it
          ExecutionException e =
              assertThrows(ExecutionException.class, () -> done.get(60, TimeUnit.SECONDS));
          assertInstanceOf(CdcDecodingException.class, e.getCause());
          String message = e.getCause().getMessage();
          assertTrue(
              message.contains("column \"cs\"")
                  && message.contains("public._d_pair")
                  && message.contains("not in pg_type"),
              message);
        }
        assertEquals(List.of(), events.drain());
      }
    }
  }

  @Test
  void aDroppedArrayOfADroppedDomainCannotBeDecodedAndSaysWhy() throws Exception {
    pg.execute(
        "CREATE DOMAIN u_posint AS int CHECK (VALUE > 0)",
        "CREATE TABLE undecodable (id int PRIMARY KEY, ds u_posint[])",
        "CREATE PUBLICATION undecodable FOR TABLE undecodable");
    slots("undecodable_binary");
    pg.execute("INSERT INTO undecodable VALUES (1, '{7}')");
    pg.execute("DROP TABLE undecodable", "DROP DOMAIN u_posint");
    EventCollector events = new EventCollector(true);
    try (PgCdcSource s = source("undecodable_binary", "undecodable", true)) {
      CompletableFuture<Void> done = s.start(events);
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> done.get(60, TimeUnit.SECONDS));
      String message = e.getCause().getMessage();
      assertTrue(
          message.contains("column \"ds\"")
              && message.contains("public.undecodable")
              && message.contains("not in pg_type"),
          message);
      assertEquals(List.of(), events.drain());
    }
  }

  @Test
  void aTypeDroppedWhileTheSourceRunsDecodesAfterAReconnectAsTheCatalogSaidBefore()
      throws Exception {
    // a range's binary form does not carry its subtype: only the catalog can say it
    pg.execute(
        "CREATE TYPE k_range AS RANGE (subtype = float8)",
        "CREATE TABLE kept (id int PRIMARY KEY, r k_range)",
        "CREATE PUBLICATION kept FOR TABLE kept");
    slots("kept_binary");
    CountDownLatch release = new CountDownLatch(1);
    LinkedBlockingQueue<ChangeEvent> events = new LinkedBlockingQueue<>();
    CdcHandler handler =
        (event, handle) -> {
          events.add(event);
          if (((Integer) after(event).get("id")) == 1 && release.getCount() > 0) {
            // hold the first row while the type is dropped and the connection lost
            assertTrue(release.await(60, TimeUnit.SECONDS));
          }
          handle.acknowledge(event.offset());
        };
    try (PgCdcSource s =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .slot("kept_binary")
            .publication("kept")
            .checkpointStore(new MemoryCheckpointStore())
            .binary(true)
            .onDecodeError(DecodeErrorPolicy.STOP)
            .build()) {
      s.start(handler);
      pg.execute("INSERT INTO kept VALUES (1, '[1.5,2)')");
      await().atMost(WAIT).until(() -> !events.isEmpty());
      pg.execute("INSERT INTO kept VALUES (2, '(,3]')");
      pg.execute("DROP TABLE kept", "DROP TYPE k_range");
      pg.execute(
          "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
              + " WHERE slot_name = 'kept_binary' AND active_pid IS NOT NULL");
      await().atMost(WAIT).until(() -> s.reconnects() >= 1);
      release.countDown();
      // after the reconnect the server sends both rows again; the new connection's decoder
      // decodes them with the types the source's catalog resolved before the drop
      await()
          .atMost(WAIT)
          .until(() -> events.stream().anyMatch(e -> (Integer) after(e).get("id") == 2));
      Row second =
          events.stream()
              .map(CatalogDriftTest::after)
              .filter(r -> (Integer) r.get("id") == 2)
              .findFirst()
              .orElseThrow();
      assertEquals("(,3]", second.get("r"));
      assertEquals(List.of(), second.undecodedColumns());
    }
  }

  @Test
  void typesRenamedAndAlteredAfterTheChangeDecodeAsTheyWereThen() throws Exception {
    pg.execute(
        "CREATE TYPE r_mood AS ENUM ('sad', 'ok')",
        "CREATE TYPE r_pair AS (a int, b text)",
        "CREATE TABLE altered (id int PRIMARY KEY, m r_mood, ms r_mood[], c r_pair, cs r_pair[])",
        "CREATE PUBLICATION altered FOR TABLE altered");
    slots("altered_text", "altered_binary");
    pg.execute(
        "INSERT INTO altered VALUES (1, 'ok', '{sad,ok}', ROW(1, 'x'), ARRAY[ROW(2, 'y z')::r_pair])");
    pg.execute(
        "ALTER TYPE r_mood RENAME TO r_feeling",
        "ALTER TYPE r_feeling RENAME VALUE 'ok' TO 'fine'",
        "ALTER TYPE r_feeling ADD VALUE 'new'",
        "ALTER TYPE r_pair ADD ATTRIBUTE z int CASCADE",
        "ALTER TYPE r_pair RENAME TO r_couple");
    pg.execute("INSERT INTO altered VALUES (2, 'fine', '{new,sad}', ROW(3, 'q', 9), '{}')");
    for (boolean binary : new boolean[] {false, true}) {
      EventCollector events = new EventCollector(true);
      try (PgCdcSource s = source(binary ? "altered_binary" : "altered_text", "altered", binary)) {
        s.start(events);
        List<ChangeEvent> two = events.take(2, WAIT);
        String mode = binary ? "binary" : "text";
        Row before = after(two.get(0));
        assertEquals("ok", before.get("m"), mode);
        assertEquals(List.of("sad", "ok"), before.get("ms"), mode);
        assertEquals("(1,x)", before.get("c"), mode);
        assertEquals(List.of("(2,\"y z\")"), before.get("cs"), mode);
        Row later = after(two.get(1));
        assertEquals("fine", later.get("m"), mode);
        assertEquals(List.of("new", "sad"), later.get("ms"), mode);
        assertEquals("(3,q,9)", later.get("c"), mode);
        assertEquals(List.of(), later.get("cs"), mode);
        assertEquals(List.of(), events.drain());
      }
    }
  }
}

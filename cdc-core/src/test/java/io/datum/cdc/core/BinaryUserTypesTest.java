package io.datum.cdc.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcDecodingException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.core.config.DecodeErrorPolicy;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.UpdateEvent;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TimeZone;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * End to end against PostgreSQL 17: the same changes to a table of user-defined types, streamed by
 * one source with {@code binary(false)} and one with {@code binary(true)}, give equal rows, also
 * for a type created and added to the table while the sources run. The JVM's default time zone
 * (which pgjdbc gives the replication session as its TimeZone) is set to one with summer time for
 * the class, so that {@code tstzrange} text carries non-UTC offsets in both formats.
 */
@EmbeddedPostgresTest
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class BinaryUserTypesTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static TimeZone savedZone;

  private final EmbeddedPostgresServer pg;

  BinaryUserTypesTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @BeforeAll
  static void zone() {
    savedZone = TimeZone.getDefault();
    TimeZone.setDefault(TimeZone.getTimeZone("Europe/Amsterdam"));
  }

  @AfterAll
  static void restoreZone() {
    TimeZone.setDefault(savedZone);
  }

  private PgCdcSource source(String slot, String publication, boolean binary) {
    return PgCdcSource.builder()
        .jdbcUrl(pg.jdbcUrl())
        .user(pg.user())
        .slot(slot)
        .publication(publication)
        .checkpointStore(new MemoryCheckpointStore())
        .createSlot(true)
        .binary(binary)
        .build();
  }

  @Test
  void textAndBinaryStreamsGiveEqualRowsForUserTypes() throws Exception {
    pg.execute(
        "CREATE TYPE mood AS ENUM ('sad', 'ok', 'très bien')",
        "CREATE DOMAIN posint AS int CHECK (VALUE > 0)",
        "CREATE DOMAIN pos2 AS posint CHECK (VALUE < 1000)",
        "CREATE DOMAIN addr AS inet",
        "CREATE TYPE pair AS (a int, b text, c mood)",
        "CREATE TABLE typed (id int PRIMARY KEY, m mood, ms mood[], pi posint, pp pos2, ad addr,"
            + " r int4range, tr tstzrange, nm nummultirange, c pair, cs pair[], dr daterange,"
            + " pis posint[], rs int4range[])",
        "ALTER TABLE typed REPLICA IDENTITY FULL",
        "CREATE PUBLICATION typed FOR TABLE typed");
    EventCollector text = new EventCollector(true);
    EventCollector binary = new EventCollector(true);
    try (PgCdcSource t = source("typed_text", "typed", false);
        PgCdcSource b = source("typed_binary", "typed", true)) {
      t.start(text);
      b.start(binary);
      pg.execute(
          "INSERT INTO typed VALUES (1, 'très bien', '{sad,ok,NULL}', 5, 7, '10.0.0.1/8',"
              + " '[1,10)', '[2026-07-01 10:00:00.5+00,2026-12-01 00:00+00)',"
              + " '{[1.5,2.5],(3,)}', ROW(1, 'a \"quoted\", (paren) \\ back', 'ok'),"
              + " ARRAY[ROW(2, 'x y', NULL)::pair, NULL, ROW(NULL, '', 'sad')::pair],"
              + " '[0044-03-15 BC,infinity)', '{{1,2},{3,NULL}}', '{\"[1,2)\",empty,NULL}')",
          "INSERT INTO typed (id) VALUES (2)",
          "INSERT INTO typed VALUES (3, 'sad', '{}', 1, 1, '::1', 'empty', '(,)', '{}',"
              + " ROW(NULL, NULL, NULL), '{}', 'empty', '{}', '{}')",
          "UPDATE typed SET m = 'ok', c = ROW(9, 'NULL', 'très bien') WHERE id = 1");
      // a type created while the sources run, and a column of it
      pg.execute(
          "CREATE TYPE color AS ENUM ('red', 'green')",
          "CREATE TYPE tagged AS (c color, note text)",
          "ALTER TABLE typed ADD COLUMN col color, ADD COLUMN tg tagged, ADD COLUMN cols color[]",
          "INSERT INTO typed (id, m, col, tg, cols) VALUES"
              + " (4, 'ok', 'green', ROW('red', 'n, o'), '{red,green}')",
          "DELETE FROM typed WHERE id = 3");
      List<ChangeEvent> fromText = text.take(6, WAIT);
      List<ChangeEvent> fromBinary = binary.take(6, WAIT);
      for (int i = 0; i < fromText.size(); i++) {
        assertEquals(rows(fromText.get(i)), rows(fromBinary.get(i)), "event " + i);
      }
      // and the values are those text mode documents, not something both got wrong alike
      Row first = ((InsertEvent) fromBinary.get(0)).after();
      assertEquals("très bien", first.get("m"));
      // arrays of user types: Lists of the element values, in both formats
      assertEquals(Arrays.asList("sad", "ok", null), first.get("ms"));
      assertEquals(List.of(List.of(1, 2), Arrays.asList(3, null)), first.get("pis"));
      assertEquals(Arrays.asList("[1,2)", "empty", null), first.get("rs"));
      assertEquals(5, first.get("pi"));
      assertEquals(7, first.get("pp"));
      assertEquals("10.0.0.1/8", first.get("ad"));
      assertEquals("[1,10)", first.get("r"));
      assertEquals("[\"2026-07-01 12:00:00.5+02\",\"2026-12-01 01:00:00+01\")", first.get("tr"));
      assertEquals("{[1.5,2.5],(3,)}", first.get("nm"));
      assertEquals("(1,\"a \"\"quoted\"\", (paren) \\\\ back\",ok)", first.get("c"));
      assertEquals(Arrays.asList("(2,\"x y\",)", null, "(,\"\",sad)"), first.get("cs"));
      assertEquals("[\"0044-03-15 BC\",infinity)", first.get("dr"));
      assertNull(((InsertEvent) fromBinary.get(1)).after().get("m"));
      UpdateEvent update = (UpdateEvent) fromBinary.get(3);
      assertNotNull(update.before());
      assertEquals("(9,NULL,\"très bien\")", update.after().get("c"));
      Row added = ((InsertEvent) fromBinary.get(4)).after();
      assertEquals("green", added.get("col"));
      assertEquals("(red,\"n, o\")", added.get("tg"));
      assertEquals(List.of("red", "green"), added.get("cols"));
      assertInstanceOf(DeleteEvent.class, fromBinary.get(5));
      assertEquals(List.of(), binary.drain());
      assertEquals(List.of(), text.drain());
    }
  }

  @Test
  void aBaseTypeWithoutAKnownBinaryFormatFailsNamingColumnTableAndType() throws Exception {
    // a base type declared like an extension's (with text's functions): its binary format is
    // not one datum-cdc can know
    pg.execute(
        "CREATE TYPE opaque",
        "CREATE FUNCTION opaque_in(cstring) RETURNS opaque AS 'textin' LANGUAGE internal"
            + " IMMUTABLE STRICT",
        "CREATE FUNCTION opaque_out(opaque) RETURNS cstring AS 'textout' LANGUAGE internal"
            + " IMMUTABLE STRICT",
        "CREATE FUNCTION opaque_send(opaque) RETURNS bytea AS 'textsend' LANGUAGE internal"
            + " IMMUTABLE STRICT",
        "CREATE FUNCTION opaque_recv(internal) RETURNS opaque AS 'textrecv' LANGUAGE internal"
            + " IMMUTABLE STRICT",
        "CREATE TYPE opaque (INPUT = opaque_in, OUTPUT = opaque_out, SEND = opaque_send,"
            + " RECEIVE = opaque_recv, LIKE = text)",
        "CREATE TABLE holder (id int PRIMARY KEY, o opaque)",
        "CREATE PUBLICATION holder FOR TABLE holder");
    EventCollector events = new EventCollector(true);
    try (PgCdcSource b =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .slot("holder_binary")
            .publication("holder")
            .checkpointStore(new MemoryCheckpointStore())
            .createSlot(true)
            .binary(true)
            .onDecodeError(DecodeErrorPolicy.STOP)
            .build()) {
      CompletableFuture<Void> done = b.start(events);
      pg.execute("INSERT INTO holder VALUES (1, 'x')");
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> done.get(60, TimeUnit.SECONDS));
      Throwable failure = e.getCause();
      assertInstanceOf(CdcDecodingException.class, failure);
      String message = failure.getMessage();
      assertTrue(
          message.contains("column \"o\"")
              && message.contains("public.holder")
              && message.contains("public.opaque (oid ")
              && message.contains("binary(false)"),
          message);
      assertEquals(List.of(), events.drain(), "nothing delivered");
    }
  }

  /** The rows of a change as name-to-value maps, byte arrays as hex, for comparison. */
  private static List<Map<String, Object>> rows(ChangeEvent e) {
    List<Map<String, Object>> rows = new ArrayList<>();
    if (e instanceof InsertEvent i) {
      rows.add(map(i.after()));
    } else if (e instanceof UpdateEvent u) {
      rows.add(u.before() == null ? null : map(u.before()));
      rows.add(map(u.after()));
    } else if (e instanceof DeleteEvent d) {
      rows.add(map(d.before()));
    } else {
      throw new AssertionError("unexpected event " + e);
    }
    return rows;
  }

  private static Map<String, Object> map(Row row) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < row.size(); i++) {
      Object v = row.get(i);
      m.put(
          row.column(i).name(),
          v instanceof byte[] b
              ? "bytes:" + HexFormat.of().formatHex(b)
              : v == null ? null : v.getClass().getSimpleName() + ":" + v);
    }
    return m;
  }
}

package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcDecodingException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.core.config.DecodeErrorPolicy;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The decode-error policy against PostgreSQL 17, with a value that truly cannot be decoded: an
 * array of a domain, array type and domain both dropped before the source reads the change (its
 * text does not name the element type; its binary header names the dropped domain). One transaction
 * of 200 good rows, then one with the bad row between two good ones, then one good row; every
 * source reads them from its own slot, created before the changes.
 */
@EmbeddedPostgresTest
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class DecodeErrorPolicyTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final int GOOD_BEFORE = 200;
  private static final String[] SLOTS = {
    "policy_stop", "policy_raw_text", "policy_raw_binary", "policy_skip"
  };

  private static EmbeddedPostgresServer pg;
  private static byte[] badBinary;

  @BeforeAll
  static void changesThenDrop(EmbeddedPostgresServer server) throws Exception {
    pg = server;
    pg.execute(
        "CREATE DOMAIN f_posint AS int CHECK (VALUE > 0)",
        "CREATE TABLE faulty (id int PRIMARY KEY, ds f_posint[], note text)",
        "CREATE PUBLICATION faulty FOR TABLE faulty");
    try (Connection c = pg.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT array_send('{7,NULL}'::f_posint[])")) {
      rs.next();
      badBinary = rs.getBytes(1);
    }
    for (String slot : SLOTS) {
      pg.execute("SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
    }
    pg.execute(
        "INSERT INTO faulty SELECT g, NULL, 'before' FROM generate_series(1, "
            + GOOD_BEFORE
            + ") g");
    pg.execute(
        "BEGIN",
        "INSERT INTO faulty VALUES (1001, NULL, 'first')",
        "INSERT INTO faulty VALUES (1002, '{7,NULL}', 'bad')",
        "INSERT INTO faulty VALUES (1003, NULL, 'third')",
        "COMMIT");
    pg.execute("INSERT INTO faulty VALUES (2001, NULL, 'after')");
    pg.execute("DROP TABLE faulty", "DROP DOMAIN f_posint");
  }

  private static PgCdcSource.Builder source(String slot, boolean binary) {
    return PgCdcSource.builder()
        .jdbcUrl(pg.jdbcUrl())
        .user(pg.user())
        .slot(slot)
        .publication("faulty")
        .checkpointStore(new MemoryCheckpointStore())
        .binary(binary);
  }

  private static List<Integer> ids(List<ChangeEvent> events) {
    List<Integer> ids = new ArrayList<>();
    for (ChangeEvent e : events) {
      ids.add((Integer) ((InsertEvent) e).after().get("id"));
    }
    return ids;
  }

  @Test
  void stopDeliversEveryEarlierDecodedEventThenFailsNamingTheColumn() throws Exception {
    EventCollector events = new EventCollector(true);
    try (PgCdcSource s =
        source("policy_stop", false).onDecodeError(DecodeErrorPolicy.STOP).build()) {
      CompletableFuture<Void> done = s.start(events);
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> done.get(60, TimeUnit.SECONDS));
      assertInstanceOf(CdcDecodingException.class, e.getCause());
      String message = e.getCause().getMessage();
      assertTrue(
          message.contains("column \"ds\"")
              && message.contains("public.faulty")
              && message.contains("public._f_posint")
              && message.contains("\"{7,NULL}\""),
          message);
      // the termination future completes only after the handler took what was decoded before:
      // the 200 rows of the earlier transaction and the failing transaction's first row
      List<ChangeEvent> delivered = events.drain();
      List<Integer> expected = new ArrayList<>();
      for (int i = 1; i <= GOOD_BEFORE; i++) {
        expected.add(i);
      }
      expected.add(1001);
      assertEquals(expected, ids(delivered));
    }
  }

  @Test
  void rawIsTheDefaultAndDeliversTheTextOrBytesMarked() throws Exception {
    for (boolean binary : new boolean[] {false, true}) {
      EventCollector events = new EventCollector(true);
      try (PgCdcSource s =
          source(binary ? "policy_raw_binary" : "policy_raw_text", binary).build()) {
        s.start(events);
        List<ChangeEvent> all = events.take(GOOD_BEFORE + 4, WAIT);
        List<Integer> ids = ids(all);
        assertEquals(List.of(1001, 1002, 1003, 2001), ids.subList(GOOD_BEFORE, ids.size()));
        Row bad = ((InsertEvent) all.get(GOOD_BEFORE + 1)).after();
        assertEquals(List.of("ds"), bad.undecodedColumns());
        assertTrue(bad.isUndecoded(1) && !bad.isUndecoded(0) && bad.hasUndecoded());
        assertEquals("bad", bad.get("note"));
        if (binary) {
          assertArrayEquals(badBinary, (byte[]) bad.get("ds"), "array_send's bytes");
        } else {
          assertEquals("{7,NULL}", bad.get("ds"), "array_out's text");
        }
        for (ChangeEvent e : all) {
          if (e != all.get(GOOD_BEFORE + 1)) {
            assertEquals(List.of(), ((InsertEvent) e).after().undecodedColumns());
          }
        }
        assertEquals(1, s.metrics().eventsWithUndecoded());
        assertEquals(0, s.metrics().eventsSkipped());
        // nothing halts: the watermark passes the transaction once its events are acknowledged
        ChangeEvent last = all.get(all.size() - 1);
        await()
            .atMost(WAIT)
            .until(() -> s.metrics().watermark().compareTo(last.offset().txEndLsn()) >= 0);
        assertEquals(List.of(), events.drain());
      }
    }
  }

  @Test
  void skipLeavesTheChangeOutCountsItAndMovesPastIt() throws Exception {
    EventCollector events = new EventCollector(true);
    try (PgCdcSource s =
        source("policy_skip", true).onDecodeError(DecodeErrorPolicy.SKIP).build()) {
      s.start(events);
      List<ChangeEvent> all = events.take(GOOD_BEFORE + 3, WAIT);
      List<Integer> ids = ids(all);
      assertEquals(List.of(1001, 1003, 2001), ids.subList(GOOD_BEFORE, ids.size()));
      // the skipped event keeps its place: the others have their own offsets
      assertEquals(0, all.get(GOOD_BEFORE).offset().eventIndex());
      assertEquals(2, all.get(GOOD_BEFORE + 1).offset().eventIndex());
      assertEquals(3, all.get(GOOD_BEFORE + 1).offset().eventCount());
      await().atMost(WAIT).until(() -> s.metrics().eventsSkipped() == 1);
      ChangeEvent last = all.get(all.size() - 1);
      // the source acknowledged the skipped event itself, so the watermark passes its transaction
      await()
          .atMost(WAIT)
          .until(() -> s.metrics().watermark().compareTo(last.offset().txEndLsn()) >= 0);
      assertEquals(0, s.metrics().eventsWithUndecoded());
      assertEquals(List.of(), events.drain());
    }
  }
}

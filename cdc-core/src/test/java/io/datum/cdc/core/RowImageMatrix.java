package io.datum.cdc.core;

import static io.datum.cdc.core.MatrixFixture.WAIT;
import static io.datum.cdc.core.MatrixFixture.ids;
import static io.datum.cdc.core.MatrixFixture.row;
import static io.datum.cdc.core.MatrixFixture.slotOption;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.TableId;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.PgInterval;
import io.datum.cdc.event.PgJson;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.RowChange;
import io.datum.cdc.event.UpdateEvent;
import java.math.BigDecimal;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Row images on each PostgreSQL version {@link PgVersionMatrixTest} runs these tests on: {@code
 * key} and {@code before} under each replica identity (DEFAULT, USING INDEX, FULL, NOTHING, and a
 * table without a key), unchanged TOAST values, and values in binary format equal to those in text
 * format.
 */
abstract class RowImageMatrix {

  private final EmbeddedPostgresServer pg;
  private final MatrixFixture fx;

  /**
   * @param pg the server of the version being run
   */
  RowImageMatrix(EmbeddedPostgresServer pg) {
    this.pg = pg;
    this.fx = new MatrixFixture(pg);
  }

  private static Map<String, Object> map(Row row) {
    return row == null ? null : row.toMap();
  }

  private static Row before(ChangeEvent e) {
    return e instanceof UpdateEvent u ? u.before() : ((DeleteEvent) e).before();
  }

  /** Asserts an event's table, key and before image (null for none). */
  private static void assertImage(
      ChangeEvent e, String table, Map<String, Object> key, Map<String, Object> before) {
    assertEquals(new TableId("public", table), ((RowChange) e).table(), e::toString);
    assertEquals(key, map(((RowChange) e).key()), () -> "key of " + e);
    if (!(e instanceof InsertEvent)) {
      assertEquals(before, map(before(e)), () -> "before of " + e);
    }
  }

  @Test
  void keyAndBeforeFollowTheReplicaIdentity() throws Exception {
    pg.execute(
        "CREATE TABLE ri_default (id int PRIMARY KEY, code text, note text)",
        "CREATE TABLE ri_index (id int PRIMARY KEY, code text NOT NULL, note text)",
        "CREATE UNIQUE INDEX ri_index_code ON ri_index (code)",
        "ALTER TABLE ri_index REPLICA IDENTITY USING INDEX ri_index_code",
        "CREATE TABLE ri_full (id int PRIMARY KEY, code text, note text)",
        "ALTER TABLE ri_full REPLICA IDENTITY FULL",
        "CREATE TABLE ri_nothing (id int PRIMARY KEY, note text)",
        "ALTER TABLE ri_nothing REPLICA IDENTITY NOTHING",
        "CREATE TABLE ri_nokey (id int, note text)",
        "CREATE PUBLICATION ri FOR TABLE ri_default, ri_index, ri_full, ri_nothing, ri_nokey");
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source = fx.source("ri", "ri").build()) {
      source.start(events);
      for (String table : List.of("ri_default", "ri_index", "ri_full")) {
        pg.execute(
            "INSERT INTO " + table + " VALUES (1, 'c1', 'n1')",
            "UPDATE " + table + " SET note = NULL WHERE id = 1",
            "UPDATE " + table + " SET code = 'c2' WHERE id = 1",
            "UPDATE " + table + " SET id = 2 WHERE id = 1",
            "DELETE FROM " + table + " WHERE id = 2");
      }
      List<ChangeEvent> got = events.take(15, WAIT);

      // DEFAULT: the primary key; the old key only when it changed
      assertImage(got.get(0), "ri_default", MatrixFixture.cols("id", 1), null);
      assertImage(got.get(1), "ri_default", MatrixFixture.cols("id", 1), null);
      assertImage(got.get(2), "ri_default", MatrixFixture.cols("id", 1), null);
      assertImage(
          got.get(3), "ri_default", MatrixFixture.cols("id", 2), MatrixFixture.cols("id", 1));
      assertEquals(
          MatrixFixture.cols("id", 2, "code", "c2", "note", null),
          map(((UpdateEvent) got.get(3)).after()));
      assertImage(
          got.get(4), "ri_default", MatrixFixture.cols("id", 2), MatrixFixture.cols("id", 2));
      // USING INDEX: the index's columns, not the primary key
      assertImage(got.get(5), "ri_index", MatrixFixture.cols("code", "c1"), null);
      assertImage(got.get(6), "ri_index", MatrixFixture.cols("code", "c1"), null);
      assertImage(
          got.get(7),
          "ri_index",
          MatrixFixture.cols("code", "c2"),
          MatrixFixture.cols("code", "c1"));
      assertImage(got.get(8), "ri_index", MatrixFixture.cols("code", "c2"), null);
      assertImage(
          got.get(9),
          "ri_index",
          MatrixFixture.cols("code", "c2"),
          MatrixFixture.cols("code", "c2"));
      // FULL: every column is the key, and before is the whole old row
      assertImage(
          got.get(10), "ri_full", MatrixFixture.cols("id", 1, "code", "c1", "note", "n1"), null);
      assertImage(
          got.get(11),
          "ri_full",
          MatrixFixture.cols("id", 1, "code", "c1", "note", null),
          MatrixFixture.cols("id", 1, "code", "c1", "note", "n1"));
      assertImage(
          got.get(12),
          "ri_full",
          MatrixFixture.cols("id", 1, "code", "c2", "note", null),
          MatrixFixture.cols("id", 1, "code", "c1", "note", null));
      assertImage(
          got.get(13),
          "ri_full",
          MatrixFixture.cols("id", 2, "code", "c2", "note", null),
          MatrixFixture.cols("id", 1, "code", "c2", "note", null));
      assertImage(
          got.get(14),
          "ri_full",
          MatrixFixture.cols("id", 2, "code", "c2", "note", null),
          MatrixFixture.cols("id", 2, "code", "c2", "note", null));

      // NOTHING, and no primary key: inserts have no key; the server refuses updates and deletes
      pg.execute(
          "INSERT INTO ri_nothing VALUES (1, 'n1')", "INSERT INTO ri_nokey VALUES (1, 'n1')");
      List<ChangeEvent> inserts = events.take(2, WAIT);
      assertImage(inserts.get(0), "ri_nothing", null, null);
      assertImage(inserts.get(1), "ri_nokey", null, null);
      for (String table : List.of("ri_nothing", "ri_nokey")) {
        SQLException update =
            assertThrows(
                SQLException.class,
                () -> pg.execute("UPDATE " + table + " SET note = 'u' WHERE id = 1"));
        assertTrue(
            update
                .getMessage()
                .contains(
                    "cannot update table \""
                        + table
                        + "\" because it does not have a replica identity and publishes updates"),
            update::getMessage);
        SQLException delete =
            assertThrows(
                SQLException.class, () -> pg.execute("DELETE FROM " + table + " WHERE id = 1"));
        assertTrue(
            delete
                .getMessage()
                .contains(
                    "cannot delete from table \""
                        + table
                        + "\" because it does not have a replica identity and publishes deletes"),
            delete::getMessage);
      }
      pg.execute("INSERT INTO ri_default VALUES (3, 'c3', 'after the refusals')");
      assertEquals(List.of(3), ids(events.take(1, WAIT)), "the source streams on");

      // once the publication publishes inserts only, the server allows them, and sends nothing
      pg.execute(
          "ALTER PUBLICATION ri SET (publish = 'insert')",
          "UPDATE ri_nothing SET note = 'u' WHERE id = 1",
          "DELETE FROM ri_nokey WHERE id = 1",
          "UPDATE ri_default SET note = 'not published' WHERE id = 3",
          "INSERT INTO ri_nokey VALUES (4, 'n4')");
      ChangeEvent last = events.take(1, WAIT).get(0);
      assertImage(last, "ri_nokey", null, null);
      assertEquals(MatrixFixture.cols("id", 4, "note", "n4"), map(row(last)));
      assertEquals(List.of(), events.drain());
    }
    fx.dropSlot("ri");
  }

  @ParameterizedTest(name = "binary {0}")
  @ValueSource(booleans = {false, true})
  void anUnchangedToastValueIsMarkedWithTheDefaultIdentityAndFilledInWithFull(boolean binary)
      throws Exception {
    String toasty = binary ? "toasty_binary" : "toasty";
    String big = "repeat('toast', 4000)"; // 20000 bytes, stored out of line (storage EXTERNAL)
    pg.execute(
        "CREATE TABLE toasty (id int PRIMARY KEY, big text, small text)",
        "ALTER TABLE toasty ALTER COLUMN big SET STORAGE EXTERNAL",
        "CREATE PUBLICATION toasty FOR TABLE toasty");
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source = fx.source(toasty, "toasty").binary(binary).build()) {
      source.start(events);
      pg.execute(
          "INSERT INTO toasty VALUES (1, " + big + ", 's1')",
          "UPDATE toasty SET small = 's2' WHERE id = 1",
          "UPDATE toasty SET id = 2 WHERE id = 1",
          "UPDATE toasty SET big = repeat('fresh', 5000) WHERE id = 2",
          "ALTER TABLE toasty REPLICA IDENTITY FULL",
          "UPDATE toasty SET small = 's3' WHERE id = 2",
          "DELETE FROM toasty WHERE id = 2");
      List<ChangeEvent> got = events.take(6, WAIT);
      String toast = "toast".repeat(4000);
      String fresh = "fresh".repeat(5000);
      assertEquals(toast, ((InsertEvent) got.get(0)).after().get("big"));

      UpdateEvent small = (UpdateEvent) got.get(1);
      assertNull(small.before());
      assertEquals(List.of("big"), small.after().unchangedToastColumns());
      assertTrue(small.after().isUnchangedToast(small.after().indexOf("big")));
      assertThrows(IllegalStateException.class, () -> small.after().get("big"));
      assertEquals(MatrixFixture.cols("id", 1, "small", "s2"), small.after().toMap());

      UpdateEvent rekeyed = (UpdateEvent) got.get(2);
      assertEquals(MatrixFixture.cols("id", 1), map(rekeyed.before()));
      assertEquals(List.of("big"), rekeyed.after().unchangedToastColumns());

      UpdateEvent changed = (UpdateEvent) got.get(3);
      assertEquals(fresh, changed.after().get("big"));
      assertEquals(List.of(), changed.after().unchangedToastColumns());

      UpdateEvent full = (UpdateEvent) got.get(4);
      assertEquals(
          List.of(), full.after().unchangedToastColumns(), "REPLICA IDENTITY FULL fills it in");
      assertEquals(MatrixFixture.cols("id", 2, "big", fresh, "small", "s3"), full.after().toMap());
      assertEquals(MatrixFixture.cols("id", 2, "big", fresh, "small", "s2"), map(full.before()));
      assertEquals(
          MatrixFixture.cols("id", 2, "big", fresh, "small", "s3"),
          map(((DeleteEvent) got.get(5)).before()));
    }
    fx.dropSlot(toasty);
    pg.execute("DROP PUBLICATION toasty", "DROP TABLE toasty");
  }

  @Test
  void binaryFormatGivesTheValuesOfTextFormat() throws Exception {
    pg.execute(
        "CREATE TABLE typed (id int PRIMARY KEY, i2 smallint, i4 int, i8 bigint, num numeric(12,3),"
            + " num_any numeric, num_nan numeric, num_inf numeric, f4 real, f8 double precision,"
            + " f4_ninf real, f8_inf double precision, f8_nan double precision, ok boolean, t text,"
            + " vc varchar(10), ch char(4), raw bytea, uid uuid, j json, jb jsonb, d date, d_inf date,"
            + " tm time, tz timetz, ts timestamp, ts_ninf timestamp, tstz timestamptz,"
            + " tstz_inf timestamptz, iv interval, ints int[], grid int[], texts text[], nothing int)",
        "ALTER TABLE typed REPLICA IDENTITY FULL",
        "CREATE PUBLICATION typed FOR TABLE typed");
    fx.createSlot("typed_text");
    fx.createSlot("typed_binary");
    EventCollector text = new EventCollector(true);
    EventCollector binary = new EventCollector(true);
    try (PgCdcSource inText = fx.source("typed_text", "typed").build();
        PgCdcSource inBinary = fx.source("typed_binary", "typed").binary(true).build()) {
      inText.start(text);
      inBinary.start(binary);
      assertEquals("true", slotOption(fx.startReplicationCommand("typed_binary"), "binary"));
      assertNull(slotOption(fx.startReplicationCommand("typed_text"), "binary"));
      pg.execute(
          "INSERT INTO typed VALUES (1, -32768, 2147483647, -9223372036854775808, 12.340,"
              + " 12345678901234567890.000000000001, 'NaN', 'Infinity', 1.5, 3.141592653589793,"
              + " '-Infinity', 'Infinity', 'NaN', true, 'a''b \"q\" \\ é', 'varchar', 'ab', '\\x00ff10',"
              + " 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{\"b\": 1, \"a\": [1, 2.50]}',"
              + " '{\"b\": 1, \"a\": [1, 2.50]}', '2026-11-30', 'infinity', '10:18:40.5',"
              + " '10:18:40+02', '2026-11-30 10:18:40.123456', '-infinity',"
              + " '2026-11-30 10:18:40.123456+02', 'infinity', '1 year 2 mons 3 days 04:05:06.5',"
              + " '{1,NULL,3}', '{{1,2},{3,4}}', '{\"a b\",NULL,\"c,d\",\"e\\\"f\"}', NULL)",
          "INSERT INTO typed VALUES (2, 0, -1, 0, -0.001, 0, -1e-20, '-Infinity', 0.1, -0.0,"
              + " 'Infinity', '-Infinity', 1e308, false, '', '', '', '\\x', '00000000-0000-0000-0000-000000000000',"
              + " '[]', '{}', '0044-03-15 BC', '-infinity', '00:00:00', '23:59:59.999999-14:59',"
              + " '0001-01-01 00:00:00 BC', 'infinity', '1970-01-01 00:00:00+00', '-infinity',"
              + " '-1 mons 2 days -00:00:00.000001', '{}', '[0:1]={7,8}', '{NULL}', 5)",
          // the ends of the ranges
          "INSERT INTO typed VALUES (3, 32767, -2147483648, 9223372036854775807, -999999999.999,"
              + " 1e-1000, 1e1000, 'NaN', 1e-45, 4.9e-324, 3.4028235e38, 1.7976931348623157e308, '-Infinity',"
              + " NULL, NULL, NULL, NULL, NULL, NULL, 'null', '[[], {}]', '5874897-12-31', '4713-01-01 BC',"
              + " '24:00:00', '24:00:00-15:59', '294276-12-31 23:59:59.999999', '4713-01-01 00:00:00 BC',"
              + " '294276-12-31 23:59:59.999999+00', '4714-11-24 00:00:00+00 BC',"
              + " '-178000000 years -2147483647 days -2147483647:59:59.999999', '{{NULL}}',"
              + " '{{{1,2}},{{3,4}}}', '{\"\",\"NULL\",\" \"}', NULL)",
          "UPDATE typed SET t = 'updated', ints = '{{1},{NULL}}' WHERE id = 1",
          "DELETE FROM typed WHERE id = 2");
      List<ChangeEvent> inTextFormat = text.take(5, WAIT);
      List<ChangeEvent> inBinaryFormat = binary.take(5, WAIT);

      Row first = ((InsertEvent) inTextFormat.get(0)).after();
      assertEquals((short) -32768, first.get("i2"));
      assertEquals(Long.MIN_VALUE, first.get("i8"));
      assertEquals(new BigDecimal("12.340"), first.get("num"));
      assertEquals(new BigDecimal("12345678901234567890.000000000001"), first.get("num_any"));
      assertEquals(Double.NaN, first.get("num_nan"));
      assertEquals(Double.POSITIVE_INFINITY, first.get("num_inf"));
      assertEquals(Float.NEGATIVE_INFINITY, first.get("f4_ninf"));
      assertEquals(Double.POSITIVE_INFINITY, first.get("f8_inf"));
      assertEquals("a'b \"q\" \\ é", first.get("t"));
      assertEquals("ab  ", first.get("ch"));
      assertArrayEquals(new byte[] {0, (byte) 0xff, 0x10}, (byte[]) first.get("raw"));
      assertEquals(new PgJson("{\"b\": 1, \"a\": [1, 2.50]}"), first.get("j"));
      assertEquals(new PgJson("{\"a\": [1, 2.50], \"b\": 1}"), first.get("jb"));
      assertEquals(LocalDate.MAX, first.get("d_inf"));
      assertEquals(LocalDateTime.MIN, first.get("ts_ninf"));
      assertEquals(Instant.parse("2026-11-30T08:18:40.123456Z"), first.get("tstz"));
      assertEquals(Instant.MAX, first.get("tstz_inf"));
      assertEquals(new PgInterval(14, 3, 14_706_500_000L), first.get("iv"));
      assertEquals(Arrays.asList(1, null, 3), first.get("ints"));
      assertEquals(List.of(List.of(1, 2), List.of(3, 4)), first.get("grid"));
      assertEquals(Arrays.asList("a b", null, "c,d", "e\"f"), first.get("texts"));
      assertNull(first.get("nothing"));
      assertEquals(List.of(7, 8), ((InsertEvent) inTextFormat.get(1)).after().get("grid"));

      Row extremes = ((InsertEvent) inTextFormat.get(2)).after();
      assertEquals(LocalDate.of(5874897, 12, 31), extremes.get("d"));
      assertEquals(LocalDate.of(-4712, 1, 1), extremes.get("d_inf"));
      assertEquals(Instant.parse("+294276-12-31T23:59:59.999999Z"), extremes.get("tstz"));
      assertEquals(Arrays.asList("", "NULL", " "), extremes.get("texts"));
      for (int i = 0; i < 5; i++) {
        ChangeEvent t = inTextFormat.get(i);
        ChangeEvent b = inBinaryFormat.get(i);
        assertEquals(t.kind(), b.kind());
        assertSameValues(row(t), row(b));
        if (t instanceof UpdateEvent u) {
          assertSameValues(u.before(), ((UpdateEvent) b).before());
        }
      }
    }
    fx.dropSlot("typed_text");
    fx.dropSlot("typed_binary");
  }

  /** Asserts two rows have the same columns and equal values, of the same classes. */
  private static void assertSameValues(Row text, Row binary) {
    assertEquals(text.columns(), binary.columns());
    for (int i = 0; i < text.size(); i++) {
      String column = text.column(i).name();
      Object t = text.get(i);
      Object b = binary.get(i);
      if (t == null || b == null) {
        assertEquals(t, b, column);
        continue;
      }
      if (t instanceof List) {
        assertInstanceOf(List.class, b, column); // nested Lists: equals compares the elements
      } else {
        assertEquals(t.getClass(), b.getClass(), column);
      }
      if (t instanceof byte[] tb) {
        assertArrayEquals(tb, (byte[]) b, column);
      } else {
        assertEquals(t, b, () -> column + ": text " + t + ", binary " + b);
      }
    }
    assertFalse(text.size() == 0);
  }
}

package io.datum.cdc.core.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.TableId;
import io.datum.cdc.core.relation.ValueFailure;
import io.datum.cdc.core.types.PgTypeCatalog;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import io.datum.cdc.testkit.EmbeddedPostgresVersions;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.postgresql.PGConnection;

/**
 * {@link CopyRows} in binary format against text format, on the same server: a table of every
 * builtin type it reads in binary (special values included: NaN and infinities, BC dates, the
 * extreme timestamps, escapes, NULLs) gives, row for row, the same decoded values and the same
 * chunk key texts in both formats, for keys rendered from their value (integers, text, uuid) and
 * keys PostgreSQL renders ({@code concat}: bpchar, timestamptz in a zone with summer time, numeric,
 * date); key ranges read in binary resume exactly where text ones do; a table with a column of
 * another type is read in text.
 */
@EmbeddedPostgresVersions({14, 17, 18})
@EmbeddedPostgresTest
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CopyRowsBinaryTest {

  private static final String ZONE = "America/Santiago";

  private final EmbeddedPostgresServer pg;

  CopyRowsBinaryTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  private static final String COLUMNS =
      " i2 smallint, i4 int, i8 bigint, o oid, n numeric, n2 numeric(12,2), f4 real,"
          + " f8 double precision, t text, vc varchar(20), ch char(5), nm name, \"char\" \"char\","
          + " b bytea, bo boolean, d date, tm time, ttz timetz, ts timestamp, tstz timestamptz,"
          + " iv interval, u uuid, j json, jb jsonb, ia int[], ta text[], na numeric[],"
          + " tsa timestamptz[], ja jsonb[]";

  private static final String[] VALUES = {
    "1, 7, 9000000000, 4000000000, 12345.678901234567890, 3.14, 1.5, 2.25, 'plain', 'vc', 'ab',"
        + " 'nm', 'x', '\\x0001ff', true, '2026-03-29', '12:34:56.789', '23:59:59.999999+05:30',"
        + " '2026-03-29 02:30:00', '2026-03-29 01:30:00.123456+00',"
        + " '1 year 2 mons 3 days 04:05:06.5', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',"
        + " '{\"a\": [1, 2.50, \"x\"]}', '{\"b\": {\"c\": null}, \"a\": 1}', '{1,2,NULL,4}',"
        + " ARRAY['x y', 'q\"uote', 'back\\slash', 'comma,', '', 'NULL'], '{1.50,NaN,-0.001}',"
        + " '{\"2026-01-01 00:00+00\",infinity}', ARRAY['{\"k\": 1}'::jsonb, NULL]",
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
        + " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL",
    "-32768, -2147483648, -9223372036854775808, 0, 'NaN', -9999999999.99, 'NaN', '-0',"
        + " E'tab\\there\\nnew line\\\\back \\\\N slash\\r\\b\\f\\v ☃ 😀', '', '', '', '',"
        + " E'\\\\x005c090a0d', false, '0044-03-15 BC', '24:00:00', '00:00:00-15:59',"
        + " 'infinity', '-infinity', '-178000000 years', '00000000-0000-0000-0000-000000000000',"
        + " '\"\\\\t\\u00e9\"', '[]', '{}', '{}', '{}', '{}', '{}'",
    "32767, 2147483647, 9223372036854775807, 4294967295, '-Infinity', 0, 'Infinity',"
        + " '-1e-300', 'x', NULL, 'abcde', NULL, NULL, NULL, NULL, '5874897-12-31', NULL, NULL,"
        + " '294276-12-31 23:59:59.999999', '4714-11-24 00:00:00+00 BC', '-1 days +02:00:00',"
        + " NULL, 'null', 'null', '[0:2]={1,2,3}', NULL, NULL, NULL, NULL",
  };

  private SnapshotTable table(Connection c, String name) throws SQLException {
    return table(c, "builtins", name);
  }

  private SnapshotTable table(Connection c, String publication, String name) throws SQLException {
    PgTypeCatalog catalog = new PgTypeCatalog(pg::getConnection);
    catalog.timeZone(ZONE);
    return SnapshotCatalog.table(c, publication, new TableId("public", name), catalog);
  }

  /** Reads a range in the given format, as {@link CopyRows#open} would in that format. */
  private static List<SnapshotRows.Read> read(
      Connection c,
      SnapshotTable table,
      List<String> after,
      List<String> upTo,
      long limit,
      boolean binary)
      throws SQLException {
    String sql = CopyRows.copyStatement(table, after, upTo, limit, binary);
    List<SnapshotRows.Read> rows = new ArrayList<>();
    try (CopyRows copy =
        CopyRows.over(
            c.unwrap(PGConnection.class).getCopyAPI().copyOut(sql),
            table,
            ValueFailure.Policy.STOP,
            binary)) {
      assertEquals(binary, copy.binary());
      while (copy.next()) {
        assertFalse(copy.row().hasUndecoded());
        rows.add(new SnapshotRows.Read(copy.row(), copy.chunkKeyTexts()));
      }
    }
    return rows;
  }

  private static void assertSame(List<SnapshotRows.Read> text, List<SnapshotRows.Read> binary) {
    assertEquals(text.size(), binary.size(), "rows");
    for (int i = 0; i < text.size(); i++) {
      assertEquals(
          SnapshotRows.map(text.get(i).row()), SnapshotRows.map(binary.get(i).row()), "row " + i);
      assertEquals(text.get(i).key(), binary.get(i).key(), "key texts of row " + i);
    }
  }

  @Test
  void binaryRowsAndKeyTextsEqualTextOnes() throws Exception {
    List<String> inserts = new ArrayList<>();
    inserts.add("CREATE TABLE by_id (id bigint PRIMARY KEY," + COLUMNS + ")");
    // a key of every kind: rendered from the value (text, uuid, int2) and by the server (the rest)
    inserts.add(
        "CREATE TABLE by_many (k1 char(4), k2 timestamptz, k3 numeric, k4 date, k5 text, k6 uuid,"
            + " k7 smallint,"
            + COLUMNS
            + ", PRIMARY KEY (k1, k2, k3, k4, k5, k6, k7))");
    inserts.add("CREATE TABLE other (id int PRIMARY KEY, r int4range, m money)");
    inserts.add("CREATE PUBLICATION builtins FOR TABLE by_id, by_many, other");
    for (int i = 0; i < VALUES.length; i++) {
      inserts.add("INSERT INTO by_id VALUES (" + (i + 1) + ", " + VALUES[i] + ")");
    }
    // 200 keys: summer and winter time in Santiago, negative and long numerics, BC dates, quotes
    inserts.add(
        "INSERT INTO by_many SELECT CASE WHEN g % 3 = 0 THEN 'a''b' ELSE 'k' || (g % 7) END,"
            + " timestamptz '2026-01-01 00:00:00.5+00' + g * interval '37 days 1 hour',"
            + " (g - 100) * 1.000000000001, date '0001-01-01 BC' + g * 4000,"
            + " 'text ' || g || E' \\\\ \"', md5(g::text)::uuid, (g % 5)::smallint, "
            + VALUES[0].replaceFirst("^1, 7, ", "g::smallint, g, ")
            + " FROM generate_series(1, 200) g");
    pg.execute(inserts.toArray(String[]::new));
    try (Connection c = pg.getConnection()) {
      CopyRows.prepareSession(c, ZONE);
      SnapshotTable byId = table(c, "by_id");
      SnapshotTable byMany = table(c, "by_many");
      assertTrue(CopyRows.binaryReadable(byId));
      assertTrue(CopyRows.binaryReadable(byMany));
      assertFalse(CopyRows.binaryReadable(table(c, "other")), "a range and money: text");
      assertTrue(
          CopyRows.copyStatement(byMany, null, null, 0, true)
              .contains("concat(\"k1\"), concat(\"k2\"), concat(\"k3\"), concat(\"k4\")"),
          "only the keys not rendered from their value are selected again");

      List<SnapshotRows.Read> text = read(c, byId, null, null, 0, false);
      assertEquals(VALUES.length, text.size());
      assertSame(text, read(c, byId, null, null, 0, true));
      assertEquals(4_000_000_000L, text.get(0).row().get("o"));
      assertEquals(List.of("1"), text.get(0).key());

      List<SnapshotRows.Read> all = read(c, byMany, null, null, 0, false);
      assertEquals(200, all.size());
      assertSame(all, read(c, byMany, null, null, 0, true));
      // ranges by the keys binary reads print: the same rows as by text's
      List<String> after = all.get(41).key();
      List<String> upTo = all.get(150).key();
      List<SnapshotRows.Read> range = read(c, byMany, after, upTo, 60, true);
      assertSame(all.subList(42, 102), range);
      assertSame(all.subList(42, 102), read(c, byMany, after, upTo, 60, false));
      // open() picks the format
      try (CopyRows copy = CopyRows.open(c, byMany, null, null, 1, ValueFailure.Policy.STOP)) {
        assertTrue(copy.binary());
        assertTrue(copy.next());
        assertEquals(all.get(0).key(), copy.chunkKeyTexts());
        assertFalse(copy.next());
        assertFalse(copy.next(), "stays at the end");
      }
      try (CopyRows copy =
          CopyRows.open(c, table(c, "other"), null, null, 0, ValueFailure.Policy.STOP)) {
        assertFalse(copy.binary());
      }
      // an empty range: header and trailer only
      assertEquals(List.of(), read(c, byMany, all.get(199).key(), null, 0, true));
    }
  }

  @Test
  void malformedTuplesFailNamingTheTableAndUndecodableValuesAreKeptAsSendBytesUnderRaw()
      throws Exception {
    pg.execute(
        "CREATE TABLE raw_t (id int PRIMARY KEY, v text)",
        "CREATE PUBLICATION raw_pub FOR TABLE raw_t",
        "INSERT INTO raw_t VALUES (1, 'ok')");
    try (Connection c = pg.getConnection()) {
      CopyRows.prepareSession(c, null);
      SnapshotTable t = table(c, "raw_pub", "raw_t");
      // the reader expects the table's two columns; a COPY of three fields does not match
      String wrong = "COPY (SELECT id, v, v FROM raw_t) TO STDOUT (FORMAT binary)";
      try (CopyRows copy =
          CopyRows.over(
              c.unwrap(PGConnection.class).getCopyAPI().copyOut(wrong),
              t,
              ValueFailure.Policy.RAW,
              true)) {
        IllegalStateException e = assertThrows(IllegalStateException.class, copy::next);
        assertTrue(e.getMessage().contains("raw_t"), e.getMessage());
        assertTrue(e.getMessage().contains("expected 2"), e.getMessage());
      }
      // a text where the reader expects an int8 (2 bytes, not 8) does not decode: RAW keeps
      // the send bytes, names the failure, and the row is still read
      String swapped =
          "COPY (SELECT 7, 'ok'::text UNION ALL SELECT 8, 'x') TO STDOUT (FORMAT binary)";
      SnapshotTable ints =
          new SnapshotTable(
              t.table(),
              t.oid(),
              io.datum.cdc.core.relation.RelationInfo.of(
                  t.oid(),
                  t.table(),
                  'd',
                  List.of(
                      new io.datum.cdc.event.ColumnInfo("id", 23, -1, true),
                      new io.datum.cdc.event.ColumnInfo("v", 20, -1, false))),
              List.of("id"),
              List.of("integer"),
              null,
              false,
              0,
              0);
      try (CopyRows copy =
          CopyRows.over(
              c.unwrap(PGConnection.class).getCopyAPI().copyOut(swapped),
              ints,
              ValueFailure.Policy.RAW,
              true)) {
        assertTrue(copy.next());
        assertEquals(7, copy.row().get("id"));
        assertTrue(copy.row().isUndecoded(1), "2 bytes are no int8");
        assertInstanceOf(byte[].class, copy.row().get("v"));
        assertEquals("ok", new String((byte[]) copy.row().get("v")));
        assertEquals(1, copy.takeFailures().size());
        assertEquals(List.of("7"), copy.chunkKeyTexts());
      }
    }
  }
}

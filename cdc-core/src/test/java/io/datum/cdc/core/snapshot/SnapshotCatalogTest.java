package io.datum.cdc.core.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.TableId;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.relation.ValueDecodingException;
import io.datum.cdc.core.relation.ValueFailure;
import io.datum.cdc.core.types.PgTypeCatalog;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import io.datum.cdc.testkit.EmbeddedPostgresVersions;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What {@link SnapshotCatalog} lists and {@link CopyRows} reads, against what a source streaming
 * the same publication sends: tables (partitions through the root or as leaves, inheritance
 * children), columns and key flags (replica identities, column lists, generated columns), rows (row
 * filters), and key ranges that resume exactly after a key.
 */
@EmbeddedPostgresVersions({14, 15, 16, 17, 18})
@EmbeddedPostgresTest
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SnapshotCatalogTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  private final EmbeddedPostgresServer pg;

  SnapshotCatalogTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  private Connection connect() throws SQLException {
    Connection c = pg.getConnection();
    CopyRows.prepareSession(c, null);
    return c;
  }

  private PgTypeCatalog types() {
    return pg.majorVersion() >= 14 ? new PgTypeCatalog(pg::getConnection) : null;
  }

  /**
   * Streams the inserts with a source of the publication, reads every table of the publication with
   * CopyRows, and checks both give the same tables, columns and rows.
   *
   * @return the tables listed
   */
  private List<SnapshotTable> assertCopyEqualsStream(
      String publication, int events, String... inserts) throws Exception {
    SnapshotRows.Collector collector = new SnapshotRows.Collector();
    List<String> streamed = new ArrayList<>();
    try (PgCdcSource source =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .slot(publication + "_slot")
            .publication(publication)
            .checkpointStore(new MemoryCheckpointStore())
            .createSlot(true)
            .build()) {
      source.start(collector);
      pg.execute(inserts);
      for (ChangeEvent e : collector.take(events, WAIT)) {
        InsertEvent insert = (InsertEvent) e;
        streamed.add(describe(insert.table(), insert.after()));
      }
    }
    pg.execute("SELECT pg_drop_replication_slot('" + publication + "_slot')");
    List<String> copied = new ArrayList<>();
    List<SnapshotTable> tables;
    try (Connection c = connect()) {
      tables = SnapshotCatalog.publishedTables(c, publication, types());
      for (SnapshotTable t : tables) {
        for (Row row : SnapshotRows.rows(c, t)) {
          copied.add(describe(t.table(), row));
        }
      }
    }
    Collections.sort(streamed);
    Collections.sort(copied);
    assertEquals(streamed, copied);
    return tables;
  }

  private static String describe(TableId table, Row row) {
    return table + " " + row.columns() + " " + SnapshotRows.map(row);
  }

  private static List<String> names(List<SnapshotTable> tables) {
    return tables.stream().map(t -> t.table().toString()).toList();
  }

  private static List<Boolean> keyFlags(SnapshotTable table) {
    return table.relation().columns().stream().map(ColumnInfo::key).toList();
  }

  @Test
  void columnListAndRowFilterAreHonoured() throws Exception {
    if (pg.majorVersion() < 15) {
      return; // column lists and row filters came with PostgreSQL 15
    }
    pg.execute(
        "CREATE TABLE cl (id int PRIMARY KEY, a text, secret text, n int)",
        "CREATE PUBLICATION cl FOR TABLE cl (id, a, n) WHERE (n > 10 AND a IS DISTINCT FROM 'no')");
    List<SnapshotTable> tables =
        assertCopyEqualsStream(
            "cl",
            2,
            "INSERT INTO cl VALUES (1, 'x', 's1', 5), (2, 'y', 's2', 15), (3, 'no', 's3', 30)",
            "INSERT INTO cl VALUES (4, NULL, 's4', 20)");
    SnapshotTable cl = tables.get(0);
    assertEquals(
        List.of("id", "a", "n"), cl.relation().columns().stream().map(ColumnInfo::name).toList());
    assertTrue(cl.rowFilter().contains("n > 10"), cl.rowFilter());
    try (Connection c = connect()) {
      assertEquals(List.of(2, 4), SnapshotRows.rows(c, cl).stream().map(r -> r.get("id")).toList());
    }
  }

  @Test
  void aColumnListWithoutTheKeyStillReadsInKeyRanges() throws Exception {
    if (pg.majorVersion() < 15) {
      return;
    }
    pg.execute(
        "CREATE TABLE nokeycols (id int PRIMARY KEY, a text)",
        "CREATE PUBLICATION nokeycols FOR TABLE nokeycols (a) WITH (publish = 'insert')");
    assertCopyEqualsStream(
        "nokeycols", 3, "INSERT INTO nokeycols VALUES (3, 'c'), (1, 'a'), (2, 'b')");
    try (Connection c = connect()) {
      SnapshotTable t =
          SnapshotCatalog.table(c, "nokeycols", new TableId("public", "nokeycols"), types());
      assertEquals(List.of("id"), t.chunkKey());
      List<SnapshotRows.Read> read = SnapshotRows.read(c, t, List.of("1"), null, 0);
      assertEquals(List.of("b", "c"), read.stream().map(r -> r.row().get("a")).toList());
      assertEquals(
          List.of(List.of("2"), List.of("3")), read.stream().map(SnapshotRows.Read::key).toList());
      assertEquals(1, read.get(0).row().size());
    }
  }

  @Test
  void partitionsAreReadThroughTheRootOrAsLeavesAsTheStreamNamesThem() throws Exception {
    pg.execute(
        "CREATE TABLE parted (id int, region text, v text, PRIMARY KEY (id, region))"
            + " PARTITION BY LIST (region)",
        "CREATE TABLE parted_eu PARTITION OF parted FOR VALUES IN ('eu')",
        "CREATE TABLE parted_us PARTITION OF parted FOR VALUES IN ('us')",
        "CREATE PUBLICATION parted_root FOR TABLE parted WITH (publish_via_partition_root = true)",
        "CREATE PUBLICATION parted_leaf FOR TABLE parted");
    List<SnapshotTable> root =
        assertCopyEqualsStream(
            "parted_root",
            3,
            "INSERT INTO parted VALUES (1, 'eu', 'a'), (2, 'us', 'b'), (3, 'eu', 'c')");
    assertEquals(List.of("public.parted"), names(root));
    assertTrue(root.get(0).partitionedRoot());
    assertEquals(List.of("id", "region"), root.get(0).chunkKey());
    pg.execute("TRUNCATE parted");
    List<SnapshotTable> leaves =
        assertCopyEqualsStream(
            "parted_leaf",
            3,
            "INSERT INTO parted VALUES (1, 'eu', 'a'), (2, 'us', 'b'), (3, 'eu', 'c')");
    assertEquals(List.of("public.parted_eu", "public.parted_us"), names(leaves));
    assertFalse(leaves.get(0).partitionedRoot());
    try (Connection c = connect()) {
      CdcConfigurationException e =
          assertThrows(
              CdcConfigurationException.class,
              () ->
                  SnapshotCatalog.table(
                      c, "parted_root", new TableId("public", "parted_eu"), types()));
      assertTrue(
          e.getMessage().contains("public.parted_eu") && e.getMessage().contains("parted_root"),
          e.getMessage());
    }
  }

  @Test
  void anInheritanceChildIsReadOnceOnItsOwn() throws Exception {
    pg.execute(
        "CREATE TABLE animal (id int PRIMARY KEY, name text)",
        "CREATE TABLE dog (good boolean) INHERITS (animal)",
        "ALTER TABLE dog ADD PRIMARY KEY (id)",
        "CREATE PUBLICATION animal FOR TABLE animal");
    List<SnapshotTable> tables =
        assertCopyEqualsStream(
            "animal",
            3,
            "INSERT INTO animal VALUES (1, 'cat')",
            "INSERT INTO dog VALUES (2, 'rex', true), (3, 'fido', false)");
    assertEquals(List.of("public.animal", "public.dog"), names(tables));
  }

  @Test
  void replicaIdentitiesSetTheKeyFlagsAndTheChunkKey() throws Exception {
    pg.execute(
        "CREATE TABLE full_nopk (a int, b text)",
        "ALTER TABLE full_nopk REPLICA IDENTITY FULL",
        "CREATE TABLE plain_nopk (a int, b text)",
        "CREATE TABLE by_index (id int, code text NOT NULL, v text)",
        "CREATE UNIQUE INDEX by_index_code ON by_index (code)",
        "ALTER TABLE by_index REPLICA IDENTITY USING INDEX by_index_code",
        "CREATE TABLE with_include (id int, v text, w text, PRIMARY KEY (id) INCLUDE (v))",
        "CREATE TABLE pk_and_nothing (id int PRIMARY KEY, v text)",
        "ALTER TABLE pk_and_nothing REPLICA IDENTITY NOTHING",
        "CREATE PUBLICATION idents FOR TABLE full_nopk, plain_nopk, by_index, with_include,"
            + " pk_and_nothing WITH (publish = 'insert')");
    List<SnapshotTable> tables =
        assertCopyEqualsStream(
            "idents",
            6,
            "INSERT INTO full_nopk VALUES (1, 'x'), (1, 'x')",
            "INSERT INTO plain_nopk VALUES (2, 'y')",
            "INSERT INTO by_index VALUES (3, 'c3', 'v')",
            "INSERT INTO with_include VALUES (4, 'v', 'w')",
            "INSERT INTO pk_and_nothing VALUES (5, 'v')");
    assertEquals(
        List.of(
            "public.by_index",
            "public.full_nopk",
            "public.pk_and_nothing",
            "public.plain_nopk",
            "public.with_include"),
        names(tables));
    SnapshotTable byIndex = tables.get(0);
    assertEquals(List.of("code"), byIndex.chunkKey());
    assertEquals(List.of(false, true, false), keyFlags(byIndex));
    SnapshotTable full = tables.get(1);
    assertEquals(List.of(), full.chunkKey());
    assertEquals(List.of(true, true), keyFlags(full));
    assertEquals('f', full.relation().replicaIdentity());
    SnapshotTable nothing = tables.get(2);
    assertEquals(List.of("id"), nothing.chunkKey());
    assertEquals(List.of(false, false), keyFlags(nothing));
    assertEquals(List.of(false, false), keyFlags(tables.get(3)));
    assertEquals(List.of(), tables.get(3).chunkKey());
    SnapshotTable include = tables.get(4);
    assertEquals(List.of("id"), include.chunkKey());
    // the INCLUDE column of the primary key is not a key column of the Relation message
    assertEquals(List.of(true, false, false), keyFlags(include));
    try (Connection c = connect()) {
      assertThrows(
          IllegalArgumentException.class,
          () -> CopyRows.open(c, full, List.of("1"), null, 0, null));
    }
  }

  @Test
  void generatedColumnsAreReadAsTheStreamSendsThem() throws Exception {
    pg.execute(
        "CREATE TABLE gen (id int PRIMARY KEY, a int, g int GENERATED ALWAYS AS (a * 2) STORED)",
        "CREATE PUBLICATION gen FOR TABLE gen"
            + (pg.majorVersion() >= 18 ? " WITH (publish_generated_columns = stored)" : ""));
    List<SnapshotTable> tables =
        assertCopyEqualsStream("gen", 1, "INSERT INTO gen (id, a) VALUES (1, 21)");
    List<String> columns =
        tables.get(0).relation().columns().stream().map(ColumnInfo::name).toList();
    assertEquals(pg.majorVersion() >= 18 ? List.of("id", "a", "g") : List.of("id", "a"), columns);
  }

  @Test
  void allTablesPublicationsListEveryTable() throws Exception {
    pg.execute(
        "CREATE SCHEMA alltabs",
        "CREATE TABLE alltabs.one (id int PRIMARY KEY)",
        "CREATE TABLE alltabs.\"Two words\" (id int PRIMARY KEY, \"Mixed \"\"Case\"\"\" text)",
        "CREATE PUBLICATION everything FOR ALL TABLES",
        "INSERT INTO alltabs.\"Two words\" VALUES (1, 'q')");
    try (Connection c = connect()) {
      List<String> names = names(SnapshotCatalog.publishedTables(c, "everything", types()));
      assertTrue(
          names.contains("public.parted") || names.contains("alltabs.one"), names.toString());
      assertTrue(names.contains("alltabs.one"), names.toString());
      SnapshotTable two =
          SnapshotCatalog.table(c, "everything", new TableId("alltabs", "Two words"), types());
      Row row = SnapshotRows.rows(c, two).get(0);
      assertEquals("q", row.get("Mixed \"Case\""));
      assertNull(two.rowFilter());
      assertThrows(
          CdcConfigurationException.class,
          () -> SnapshotCatalog.publishedTables(c, "no_such_publication", types()));
    }
  }

  @Test
  void aCompositeKeyRangeResumesExactlyAfterTheGivenKey() throws Exception {
    pg.execute(
        "CREATE TABLE cpk (a int, b text, v int, PRIMARY KEY (a, b))",
        "INSERT INTO cpk SELECT i / 10, 'k' || (i % 10), i FROM generate_series(0, 99) i",
        "CREATE PUBLICATION cpk FOR TABLE cpk");
    try (Connection c = connect()) {
      SnapshotTable t = SnapshotCatalog.table(c, "cpk", new TableId("public", "cpk"), types());
      assertEquals(List.of("a", "b"), t.chunkKey());
      assertEquals(List.of("integer", "text"), t.chunkKeyTypes());
      List<Object> all = values(SnapshotRows.read(c, t, null, null, 0));
      assertEquals(100, all.size());
      assertEquals(all, values(readInChunks(c, t, 7)));
      // (3, 'k4') exclusive to (5, 'k1') inclusive: the rows SQL orders between them
      List<Object> range =
          values(SnapshotRows.read(c, t, List.of("3", "k4"), List.of("5", "k1"), 0));
      assertEquals(
          query(
              c,
              "SELECT v FROM cpk WHERE (a, b) > (3, 'k4') AND (a, b) <= (5, 'k1') ORDER BY a, b"),
          range);
      assertEquals(17, range.size());
      assertEquals(35, range.get(0));
      assertEquals(51, range.get(16));
    }
  }

  @Test
  void textKeysWithSpecialCharactersRoundTripThroughTheirTexts() throws Exception {
    pg.execute(
        "CREATE TABLE tpk (k text PRIMARY KEY, v int)",
        "INSERT INTO tpk VALUES ('', 1), ('tab\there', 2), (E'new\\nline', 3), (E'back\\\\slash', 4),"
            + " ('quote''s', 5), ('dq\"', 6), ('très', 7), ('😀', 8), (E'\\\\N', 9), ('N', 10),"
            + " (E'\\\\', 11), ('a,b', 12), ('(x)', 13), (E'\\r\\b', 14)",
        "CREATE PUBLICATION tpk FOR TABLE tpk");
    try (Connection c = connect()) {
      SnapshotTable t = SnapshotCatalog.table(c, "tpk", new TableId("public", "tpk"), types());
      List<SnapshotRows.Read> all = SnapshotRows.read(c, t, null, null, 0);
      assertEquals(14, all.size());
      for (SnapshotRows.Read r : all) {
        assertEquals(List.of(r.row().get("k")), r.key());
      }
      assertEquals(values(all), values(readInChunks(c, t, 1)));
      assertEquals(values(all), values(readInChunks(c, t, 3)));
    }
  }

  @Test
  void timestamptzKeysRoundTripThroughTheirTexts() throws Exception {
    pg.execute(
        "CREATE TABLE tzpk (k timestamptz PRIMARY KEY, v int)",
        "INSERT INTO tzpk VALUES ('-infinity', 1), ('infinity', 2), ('0044-03-15 12:00+00 BC', 3),"
            + " ('2026-03-29 00:59:59.999999+00', 4), ('2026-03-29 01:00:00+00', 5),"
            + " ('2026-10-25 00:30:00+00', 6), ('2026-10-25 01:30:00+00', 7),"
            + " ('2000-01-01 00:00:00.000001+00', 8), ('1901-12-13 20:45:52+00', 9)",
        "CREATE PUBLICATION tzpk FOR TABLE tzpk");
    try (Connection c = pg.getConnection()) {
      CopyRows.prepareSession(c, "Europe/Amsterdam");
      SnapshotTable t = SnapshotCatalog.table(c, "tzpk", new TableId("public", "tzpk"), types());
      assertEquals(List.of("timestamp with time zone"), t.chunkKeyTypes());
      List<SnapshotRows.Read> all = SnapshotRows.read(c, t, null, null, 0);
      assertEquals(9, all.size());
      assertEquals(values(all), values(readInChunks(c, t, 1)));
      assertEquals(values(all), values(readInChunks(c, t, 2)));
    }
  }

  @Test
  void aValueThatDoesNotDecodeStopsOrIsKeptRawAsTheStreamWouldKeepIt() throws Exception {
    pg.execute(
        // the range column makes CopyRows read the table in text format (binary values do not
        // depend on IntervalStyle, so there they would decode)
        "CREATE TABLE badval (id int PRIMARY KEY, iv interval, r int4range)",
        "INSERT INTO badval VALUES (1, '1 day', '[1,2)'), (2, '-1 days +02:00:00', NULL)",
        "CREATE PUBLICATION badval FOR TABLE badval");
    try (Connection c = pg.getConnection()) {
      SnapshotTable t =
          SnapshotCatalog.table(c, "badval", new TableId("public", "badval"), types());
      assertFalse(CopyRows.binaryReadable(t));
      try (Statement s = c.createStatement()) {
        s.execute("SET IntervalStyle = sql_standard"); // not what the walsender prints
      }
      ValueDecodingException e =
          assertThrows(ValueDecodingException.class, () -> SnapshotRows.rows(c, t));
      assertTrue(
          e.getMessage().contains("public.badval") && e.getMessage().contains("column \"iv\""),
          e.getMessage());
      assertEquals("iv", e.failure().column());
      try (CopyRows rows = CopyRows.open(c, t, null, null, 0, ValueFailure.Policy.RAW)) {
        assertTrue(rows.next());
        Row first = rows.row();
        assertEquals(List.of("iv"), first.undecodedColumns());
        assertTrue(first.get("iv") instanceof String);
        List<ValueFailure> failures = rows.takeFailures();
        assertEquals(1, failures.size());
        assertEquals(new TableId("public", "badval"), failures.get(0).table());
        assertFalse(failures.get(0).binary());
        assertTrue(rows.next());
        assertEquals(List.of("2"), rows.chunkKeyTexts());
        assertEquals(List.of("iv"), rows.row().undecodedColumns());
        assertEquals(1, rows.takeFailures().size());
        assertFalse(rows.next());
        assertNull(rows.takeFailures());
      }
      // closing early drains the COPY: the connection stays usable
      try (CopyRows rows = CopyRows.open(c, t, null, null, 0, ValueFailure.Policy.RAW)) {
        assertTrue(rows.next());
      }
      assertEquals(List.of(2L), query(c, "SELECT count(*) FROM badval"));
    }
  }

  /** Reads a table in chunks of {@code size} rows, each resuming after the last key read. */
  private static List<SnapshotRows.Read> readInChunks(Connection c, SnapshotTable t, int size)
      throws SQLException {
    List<SnapshotRows.Read> all = new ArrayList<>();
    List<String> after = null;
    while (true) {
      List<SnapshotRows.Read> chunk = SnapshotRows.read(c, t, after, null, size);
      all.addAll(chunk);
      if (chunk.size() < size) {
        return all;
      }
      after = chunk.get(chunk.size() - 1).key();
    }
  }

  private static List<Object> values(List<SnapshotRows.Read> rows) {
    return rows.stream().map(r -> r.row().get("v")).toList();
  }

  private static List<Object> query(Connection c, String sql) throws SQLException {
    List<Object> values = new ArrayList<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        values.add(rs.getObject(1));
      }
    }
    return values;
  }
}

package io.datum.cdc.core;

import static io.datum.cdc.core.MatrixFixture.FILLER;
import static io.datum.cdc.core.MatrixFixture.WAIT;
import static io.datum.cdc.core.MatrixFixture.assertOneTransaction;
import static io.datum.cdc.core.MatrixFixture.row;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.TableId;
import io.datum.cdc.core.config.StreamingMode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.ChangeKind;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.RowChange;
import io.datum.cdc.event.TruncateEvent;
import io.datum.cdc.event.UpdateEvent;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Relations on each PostgreSQL version {@link PgVersionMatrixTest} runs these tests on: events keep
 * the shape their table had when they were written across DDL, even when read after it; DDL inside
 * streamed transactions; partitioned tables published through the root or the leaves; generated
 * columns, stored ones published from 18 on request only.
 */
abstract class SchemaMatrix {

  private static final int INT4 = 23;
  private static final int INT8 = 20;
  private static final int TEXT = 25;

  private final EmbeddedPostgresServer pg;
  private final MatrixFixture fx;

  /**
   * @param pg the server of the version being run
   */
  SchemaMatrix(EmbeddedPostgresServer pg) {
    this.pg = pg;
    this.fx = new MatrixFixture(pg);
  }

  private static List<Integer> typeOids(Row row) {
    List<Integer> oids = new ArrayList<>();
    for (ColumnInfo c : row.columns()) {
      oids.add(c.typeOid());
    }
    return oids;
  }

  /** Asserts a row change's table, values (in column order) and column types. */
  private static void assertRow(
      ChangeEvent e, String table, Map<String, Object> values, Integer... types) {
    assertEquals(new TableId("public", table), ((RowChange) e).table(), e::toString);
    assertEquals(values, row(e).toMap(), e::toString);
    if (types.length > 0) {
      assertEquals(List.of(types), typeOids(row(e)), e::toString);
    }
  }

  @Test
  void eventsKeepTheShapeTheirTableHadWhenWrittenEvenWhenReadAfterTheDdl() throws Exception {
    pg.execute(
        "CREATE TABLE sc (id int PRIMARY KEY, a int, b text)",
        "CREATE PUBLICATION sc FOR TABLE sc");
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    EventCollector before = new EventCollector(true);
    try (PgCdcSource source = fx.source("sc", "sc", store).build()) {
      source.start(before);
      pg.execute("INSERT INTO sc VALUES (1, 1, 'one')");
      assertRow(
          before.take(1, WAIT).get(0),
          "sc",
          MatrixFixture.cols("id", 1, "a", 1, "b", "one"),
          INT4,
          INT4,
          TEXT);
    }
    // written while no source runs, so all of it is decoded after the last DDL
    pg.execute(
        "INSERT INTO sc VALUES (2, 2, 'two')",
        "ALTER TABLE sc ADD COLUMN c text DEFAULT '0'",
        "INSERT INTO sc VALUES (3, 3, 'three', '33')",
        "ALTER TABLE sc DROP COLUMN b",
        "INSERT INTO sc VALUES (4, 4, '44')",
        "ALTER TABLE sc RENAME COLUMN c TO d",
        "INSERT INTO sc VALUES (5, 5, '55')",
        "ALTER TABLE sc ALTER COLUMN a TYPE bigint",
        "INSERT INTO sc VALUES (6, 6000000000, '66')",
        "ALTER TABLE sc ALTER COLUMN d DROP DEFAULT, ALTER COLUMN d TYPE int USING d::int",
        "INSERT INTO sc VALUES (7, 7, 77)",
        "ALTER TABLE sc RENAME TO sc_renamed",
        "INSERT INTO sc_renamed VALUES (8, 8, 88)",
        "UPDATE sc_renamed SET a = 20 WHERE id = 2",
        "ALTER TABLE sc_renamed REPLICA IDENTITY FULL",
        "DELETE FROM sc_renamed WHERE id = 3",
        "DROP TABLE sc_renamed",
        "CREATE TABLE sc (id text PRIMARY KEY, z boolean)",
        "ALTER PUBLICATION sc ADD TABLE sc",
        "INSERT INTO sc VALUES ('nine', true)");
    EventCollector after = new EventCollector(true);
    try (PgCdcSource source = fx.source("sc", "sc", store).build()) {
      source.start(after);
      List<ChangeEvent> got = after.take(10, WAIT);
      assertRow(
          got.get(0), "sc", MatrixFixture.cols("id", 2, "a", 2, "b", "two"), INT4, INT4, TEXT);
      assertRow(
          got.get(1),
          "sc",
          MatrixFixture.cols("id", 3, "a", 3, "b", "three", "c", "33"),
          INT4,
          INT4,
          TEXT,
          TEXT);
      assertRow(got.get(2), "sc", MatrixFixture.cols("id", 4, "a", 4, "c", "44"), INT4, INT4, TEXT);
      assertRow(got.get(3), "sc", MatrixFixture.cols("id", 5, "a", 5, "d", "55"), INT4, INT4, TEXT);
      assertRow(
          got.get(4),
          "sc",
          MatrixFixture.cols("id", 6, "a", 6_000_000_000L, "d", "66"),
          INT4,
          INT8,
          TEXT);
      assertRow(got.get(5), "sc", MatrixFixture.cols("id", 7, "a", 7L, "d", 77), INT4, INT8, INT4);
      assertRow(
          got.get(6),
          "sc_renamed",
          MatrixFixture.cols("id", 8, "a", 8L, "d", 88),
          INT4,
          INT8,
          INT4);
      UpdateEvent update = assertInstanceOf(UpdateEvent.class, got.get(7));
      assertRow(
          update, "sc_renamed", MatrixFixture.cols("id", 2, "a", 20L, "d", 0), INT4, INT8, INT4);
      assertNull(update.before(), "REPLICA IDENTITY DEFAULT when it was written");
      DeleteEvent delete = assertInstanceOf(DeleteEvent.class, got.get(8));
      assertEquals(
          MatrixFixture.cols("id", 3, "a", 3L, "d", 33),
          delete.before().toMap(),
          "REPLICA IDENTITY FULL by then");
      assertRow(got.get(9), "sc", MatrixFixture.cols("id", "nine", "z", true), TEXT, 16);
      assertEquals(List.of(), after.drain());
    }
    fx.dropSlot("sc");
  }

  @Test
  void ddlInsideStreamedTransactionsCommittedOrAborted() throws Exception {
    pg.execute(
        "CREATE TABLE sddl (id int PRIMARY KEY, filler text)",
        "CREATE PUBLICATION sddl FOR TABLE sddl");
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source = fx.source("sddl", "sddl").streaming(StreamingMode.ON).build()) {
      source.start(events);
      // the Relation message of the new shape comes inside the stream; kept open until streamed
      try (Connection open = pg.getConnection()) {
        open.setAutoCommit(false);
        try (Statement st = open.createStatement()) {
          st.execute("ALTER TABLE sddl ADD COLUMN aborted int DEFAULT 7");
          st.execute(
              "INSERT INTO sddl SELECT g, " + FILLER + ", g FROM generate_series(1, 3000) g");
        }
        await().atMost(WAIT).until(() -> fx.streamedTransactions("sddl") >= 1);
        open.rollback();
      }
      pg.execute(
          "INSERT INTO sddl VALUES (1, 'after the abort')",
          "BEGIN; INSERT INTO sddl SELECT g, "
              + FILLER
              + " FROM generate_series(10, 1509) g;"
              + " ALTER TABLE sddl ADD COLUMN added text DEFAULT 'd';"
              + " INSERT INTO sddl SELECT g, "
              + FILLER
              + ", 'new' FROM generate_series(2000, 3499) g; COMMIT",
          "INSERT INTO sddl VALUES (2, 'after the commit', 'x')");
      assertRow(
          events.take(1, WAIT).get(0),
          "sddl",
          MatrixFixture.cols("id", 1, "filler", "after the abort"),
          INT4,
          TEXT);
      List<ChangeEvent> large = events.take(3000, WAIT);
      assertOneTransaction(large, 3000);
      assertRow(
          large.get(1499),
          "sddl",
          MatrixFixture.cols("id", 1509, "filler", "x".repeat(200)),
          INT4,
          TEXT);
      assertRow(
          large.get(1500),
          "sddl",
          MatrixFixture.cols("id", 2000, "filler", "x".repeat(200), "added", "new"),
          INT4,
          TEXT,
          TEXT);
      assertRow(
          events.take(1, WAIT).get(0),
          "sddl",
          MatrixFixture.cols("id", 2, "filler", "after the commit", "added", "x"));
      await().atMost(WAIT).until(() -> fx.streamedTransactions("sddl") >= 2);
    }
    fx.dropSlot("sddl");
  }

  @Test
  void partitionChangesNameTheRootWithPublishViaPartitionRootAndTheLeavesWithout()
      throws Exception {
    pg.execute(
        "CREATE TABLE parts (id int, region text, v text, PRIMARY KEY (id, region)) PARTITION BY LIST (region)",
        "CREATE TABLE parts_eu PARTITION OF parts FOR VALUES IN ('eu')",
        "CREATE TABLE parts_us PARTITION OF parts FOR VALUES IN ('us')",
        "CREATE PUBLICATION parts_root FOR TABLE parts WITH (publish_via_partition_root = true)",
        "CREATE PUBLICATION parts_leaf FOR TABLE parts WITH (publish_via_partition_root = false)");
    fx.createSlot("parts_root");
    fx.createSlot("parts_leaf");
    EventCollector viaRoot = new EventCollector(true);
    EventCollector viaLeaves = new EventCollector(true);
    try (PgCdcSource root = fx.source("parts_root", "parts_root").build();
        PgCdcSource leaves = fx.source("parts_leaf", "parts_leaf").build()) {
      root.start(viaRoot);
      leaves.start(viaLeaves);
      pg.execute(
          "INSERT INTO parts VALUES (1, 'eu', 'a'), (2, 'us', 'b')",
          "UPDATE parts SET v = 'c' WHERE id = 1",
          "DELETE FROM parts WHERE id = 2",
          "UPDATE parts SET region = 'us' WHERE id = 1", // moves the row to the other partition
          "INSERT INTO parts_eu VALUES (3, 'eu', 'into the leaf')",
          "TRUNCATE parts");
      List<ChangeEvent> r = viaRoot.take(7, WAIT);
      List<ChangeEvent> l = viaLeaves.take(7, WAIT);
      List<String> leafTables =
          List.of(
              "parts_eu", "parts_us", "parts_eu", "parts_us", "parts_eu", "parts_us", "parts_eu");
      for (int i = 0; i < 7; i++) {
        assertEquals(
            new TableId("public", "parts"), ((RowChange) r.get(i)).table(), r.get(i)::toString);
        assertEquals(
            new TableId("public", leafTables.get(i)),
            ((RowChange) l.get(i)).table(),
            l.get(i)::toString);
        assertEquals(r.get(i).kind(), l.get(i).kind());
        assertEquals(row(r.get(i)).toMap(), row(l.get(i)).toMap());
      }
      List<ChangeKind> kinds =
          List.of(
              ChangeKind.INSERT,
              ChangeKind.INSERT,
              ChangeKind.UPDATE,
              ChangeKind.DELETE,
              ChangeKind.DELETE,
              ChangeKind.INSERT,
              ChangeKind.INSERT);
      assertEquals(kinds, r.stream().map(ChangeEvent::kind).toList());
      assertEquals(
          MatrixFixture.cols("id", 1, "region", "eu"),
          ((RowChange) r.get(4)).key().toMap(),
          "the move: delete ...");
      assertEquals(
          MatrixFixture.cols("id", 1, "region", "us", "v", "c"),
          row(r.get(5)).toMap(),
          "... and insert");
      assertEquals(
          r.get(4).offset().txEndLsn(), r.get(5).offset().txEndLsn(), "in one transaction");
      TruncateEvent rootTruncate =
          assertInstanceOf(TruncateEvent.class, viaRoot.take(1, WAIT).get(0));
      assertEquals(List.of(new TableId("public", "parts")), rootTruncate.tables());
      TruncateEvent leafTruncate =
          assertInstanceOf(TruncateEvent.class, viaLeaves.take(1, WAIT).get(0));
      assertEquals(
          List.of(new TableId("public", "parts_eu"), new TableId("public", "parts_us")),
          leafTruncate.tables());
    }
    fx.dropSlot("parts_root");
    fx.dropSlot("parts_leaf");
  }

  @Test
  void generatedColumnsAreAbsentByDefault() throws Exception {
    boolean virtual = fx.version() >= 18; // VIRTUAL generated columns are new in 18
    pg.execute(
        "CREATE TABLE gen (id int PRIMARY KEY, a int, doubled int GENERATED ALWAYS AS (a * 2) STORED"
            + (virtual ? ", plus_one int GENERATED ALWAYS AS (a + 1) VIRTUAL" : "")
            + ")",
        "CREATE PUBLICATION gen FOR TABLE gen");
    if (fx.version() < 18) {
      SQLException e =
          assertThrows(
              SQLException.class,
              () ->
                  pg.execute(
                      "CREATE PUBLICATION gen_stored FOR TABLE gen WITH (publish_generated_columns = stored)"));
      assertTrue(e.getMessage().contains("publish_generated_columns"), e::getMessage);
    }
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source = fx.source("gen", "gen").build()) {
      source.start(events);
      pg.execute("INSERT INTO gen (id, a) VALUES (1, 21)", "UPDATE gen SET a = 50 WHERE id = 1");
      List<ChangeEvent> got = events.take(2, WAIT);
      assertRow(got.get(0), "gen", MatrixFixture.cols("id", 1, "a", 21));
      assertRow(got.get(1), "gen", MatrixFixture.cols("id", 1, "a", 50));
    }
    fx.dropSlot("gen");
  }

  @Test
  void storedGeneratedColumnsArePublishedWithPublishGeneratedColumnsStoredOnPostgres18()
      throws Exception {
    assumeTrue(fx.version() >= 18, "publish_generated_columns is new in PostgreSQL 18");
    pg.execute(
        "CREATE TABLE gen18 (id int PRIMARY KEY, a int, doubled int GENERATED ALWAYS AS (a * 2) STORED,"
            + " plus_one int GENERATED ALWAYS AS (a + 1) VIRTUAL)",
        "CREATE PUBLICATION gen18 FOR TABLE gen18 WITH (publish_generated_columns = stored)");
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source = fx.source("gen18", "gen18").build()) {
      source.start(events);
      pg.execute(
          "INSERT INTO gen18 (id, a) VALUES (1, 21)", "UPDATE gen18 SET a = 50 WHERE id = 1");
      List<ChangeEvent> got = events.take(2, WAIT);
      assertRow(
          got.get(0),
          "gen18",
          MatrixFixture.cols("id", 1, "a", 21, "doubled", 42),
          INT4,
          INT4,
          INT4);
      assertRow(got.get(1), "gen18", MatrixFixture.cols("id", 1, "a", 50, "doubled", 100));

      // a virtual column is never published, so it must not be part of the replica identity
      pg.execute("ALTER TABLE gen18 REPLICA IDENTITY FULL");
      SQLException refused =
          assertThrows(SQLException.class, () -> pg.execute("UPDATE gen18 SET a = 1"));
      assertTrue(
          refused
              .getMessage()
              .contains("Replica identity must not contain unpublished generated columns"),
          refused::getMessage);
      pg.execute(
          "ALTER TABLE gen18 DROP COLUMN plus_one",
          "UPDATE gen18 SET a = 60 WHERE id = 1",
          "DELETE FROM gen18 WHERE id = 1");
      got = events.take(2, WAIT);
      assertRow(got.get(0), "gen18", MatrixFixture.cols("id", 1, "a", 60, "doubled", 120));
      assertEquals(
          MatrixFixture.cols("id", 1, "a", 50, "doubled", 100),
          ((UpdateEvent) got.get(0)).before().toMap());
      assertEquals(
          MatrixFixture.cols("id", 1, "a", 60, "doubled", 120),
          ((DeleteEvent) got.get(1)).before().toMap());
      assertEquals(List.of(), events.drain());
    }
    fx.dropSlot("gen18");
  }
}

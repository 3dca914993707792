package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.TableId;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import io.datum.cdc.testkit.EmbeddedPostgresVersions;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Snapshots on PostgreSQL 14, 15, 16, 17 and 18, each version once (one server per version, shared
 * by the tests): the initial snapshot at a new slot (exported), the initial snapshot online at an
 * existing slot, and an on-request snapshot, each in text and in binary mode, over a table of many
 * column types with TOASTed values, a partitioned table published via its root, and (exported path
 * only) a table without a primary key. Every read row equals, columns and values, the row the
 * stream delivers for a copy of it inserted after the snapshot; every row is read exactly once; and
 * the events replayed into maps equal the tables' content after later updates and deletes.
 */
@EmbeddedPostgresVersions({14, 15, 16, 17, 18})
@EmbeddedPostgresTest
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SnapshotOnEveryVersionTest {

  private static final Duration WAIT = Duration.ofSeconds(90);
  private static final int KINDS = 300;
  private static final int TOASTED = 25;
  private static final int PART = 2500;
  private static final int NOKEY = 700;
  private static final int COPY = 100_000;

  private final EmbeddedPostgresServer pg;

  SnapshotOnEveryVersionTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Test
  void initialAtANewSlot() throws Exception {
    for (boolean binary : new boolean[] {false, true}) {
      run("exported", binary);
    }
  }

  @Test
  void initialOnlineAtAnExistingSlot() throws Exception {
    for (boolean binary : new boolean[] {false, true}) {
      run("online", binary);
    }
  }

  @Test
  void onRequest() throws Exception {
    for (boolean binary : new boolean[] {false, true}) {
      run("request", binary);
    }
  }

  private void run(String path, boolean binary) throws Exception {
    String s = path + (binary ? "_b" : "_t");
    boolean exported = path.equals("exported");
    TableId kinds = new TableId("public", "kinds_" + s);
    TableId part = new TableId("public", "part_" + s);
    TableId nokey = new TableId("public", "nokey_" + s);
    pg.execute(
        "CREATE TYPE mood_" + s + " AS ENUM ('sad', 'ok', 'très bien')",
        "CREATE TABLE "
            + kinds.table()
            + " (id int PRIMARY KEY, i2 smallint, i8 bigint, n numeric, f4 real, f8 float8,"
            + " t text, vc varchar(20), ch char(5), b bytea, bo boolean, d date, tm time,"
            + " ts timestamp, tstz timestamptz, iv interval, u uuid, j json, jb jsonb, ia int[],"
            + " ta text[], e mood_"
            + s
            + ", r int4range, mr int4multirange, ip inet, mac macaddr, m money, bt bit(4),"
            + " pt point, x xml, nm name, o oid, big text)",
        "INSERT INTO "
            + kinds.table()
            + " SELECT g, (g % 30000)::smallint, g * 1000000007::bigint, g / 7.0, g / 3.0,"
            + " g * 1.5e-300, 'text ' || g || E' \\t\\\\ \"q\" ☃', 'vc' || g,"
            + " substr('abcde', 1 + g % 5), decode(md5(g::text), 'hex'), g % 2 = 0,"
            + " date '2026-03-29' + g, time '12:34:56.789' + g * interval '1 second',"
            + " timestamp '2026-03-29 02:30:00' + g * interval '1 hour',"
            + " timestamptz '2026-03-29 01:30:00.123456+00' + g * interval '1 minute',"
            + " g * interval '1 day 2 hours 3.5 seconds', md5(g::text)::uuid,"
            + " ('{\"a\": [' || g || ', 2.50, \"x\"]}')::json,"
            + " ('{\"b\": {\"c\": null}, \"a\": ' || g || '}')::jsonb, ARRAY[g, NULL, -g],"
            + " ARRAY['x y', 'q\"uote', 'back\\slash', NULL, g::text],"
            + " (ARRAY['sad', 'ok', 'très bien'])[1 + g % 3]::mood_"
            + s
            + ", int4range(g, g + 10), int4multirange(int4range(1, g + 2), int4range(g + 5, g + 9)),"
            + " ('10.0.' || (g % 256) || '.1/24')::inet, '08:00:2b:01:02:03', g * 1.25,"
            + " (g % 16)::bit(4), point(g, -g), ('<a>' || g || '</a>')::xml, 'n' || g, g,"
            + " CASE WHEN g <= "
            + TOASTED
            + " THEN (SELECT string_agg(md5(g::text || '-' || i), '') FROM generate_series(1, 300) i)"
            + " END FROM generate_series(1, "
            + KINDS
            + ") g",
        "INSERT INTO " + kinds.table() + " (id) VALUES (" + (KINDS + 1) + ")",
        "CREATE TABLE " + part.table() + " (id int PRIMARY KEY, v text) PARTITION BY RANGE (id)",
        "CREATE TABLE "
            + part.table()
            + "_1 PARTITION OF "
            + part.table()
            + " FOR VALUES FROM (MINVALUE) TO (1000)",
        "CREATE TABLE "
            + part.table()
            + "_2 PARTITION OF "
            + part.table()
            + " FOR VALUES FROM (1000) TO (MAXVALUE)",
        "INSERT INTO "
            + part.table()
            + " SELECT g, 'p' || g FROM generate_series(1, "
            + PART
            + ") g",
        "CREATE TABLE " + nokey.table() + " (a int, b text)",
        "INSERT INTO "
            + nokey.table()
            + " SELECT g, 'k' || g FROM generate_series(1, "
            + NOKEY
            + ") g",
        "ANALYZE " + kinds.table() + ", " + part.table() + ", " + nokey.table(),
        "CREATE PUBLICATION pub_"
            + s
            + " FOR TABLE "
            + kinds.table()
            + ", "
            + part.table()
            + (exported ? ", " + nokey.table() : "")
            + " WITH (publish_via_partition_root = true)");
    if (!exported) {
      pg.execute("SELECT pg_create_logical_replication_slot('slot_" + s + "', 'pgoutput')");
    }
    SnapshotReplica replica = new SnapshotReplica().key(kinds, "id").key(part, "id");
    List<InsertEvent> inserts = new ArrayList<>();
    CdcHandler handler =
        new CdcHandler() {
          @Override
          public void handle(ChangeEvent event, CdcCheckpointHandle checkpoints) {
            synchronized (replica) {
              if (event instanceof InsertEvent i) {
                inserts.add(i);
              }
              replica.handle(event, checkpoints);
            }
          }
        };
    int expectedReads = KINDS + 1 + PART + (exported ? NOKEY : 0);
    PgCdcSource.Builder builder =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .slot("slot_" + s)
            .publication("pub_" + s)
            .checkpointStore(new MemoryCheckpointStore())
            .binary(binary)
            .snapshotChunkRows(97)
            .snapshotParallelism(2)
            .createSlot(exported)
            .snapshot(path.equals("request") ? SnapshotMode.ON_REQUEST : SnapshotMode.INITIAL);
    try (PgCdcSource source = builder.build()) {
      CompletableFuture<Void> done = source.start(handler);
      if (path.equals("request")) {
        String id = source.snapshot(kinds, part);
        assertTrue(id.startsWith("request-"), id);
      }
      await()
          .atMost(WAIT)
          .until(
              () ->
                  done.isDone()
                      || (replica.reads.get() >= expectedReads && !source.snapshotInProgress()));
      assertFalse(done.isDone(), "the source stopped: " + done);
      String where = "PostgreSQL " + pg.majorVersion() + ", " + s;
      assertEquals(expectedReads, replica.reads.get(), "rows read, " + where);
      for (Map<List<Object>, Integer> counts : replica.readCounts.values()) {
        counts.forEach((k, n) -> assertEquals(1, n, "reads of " + k + ", " + where));
      }
      if (exported) {
        assertTrue(replica.readsAfterChanges.isEmpty(), "reads after changes, " + where);
      }
      // a copy of every row, streamed: its Row must equal the read one (but for the key)
      pg.execute(
          "INSERT INTO "
              + kinds.table()
              + " SELECT id + "
              + COPY
              + ", i2, i8, n, f4, f8, t, vc, ch, b, bo, d, tm, ts, tstz, iv, u, j, jb, ia, ta, e,"
              + " r, mr, ip, mac, m, bt, pt, x, nm, o, big FROM "
              + kinds.table(),
          "INSERT INTO " + part.table() + " SELECT id + " + COPY + ", v FROM " + part.table(),
          // later changes: the replay must follow them
          "UPDATE " + kinds.table() + " SET t = 'changed', i2 = -1 WHERE id % 10 = 3",
          "DELETE FROM " + kinds.table() + " WHERE id % 10 = 7",
          "UPDATE " + part.table() + " SET id = id + 2 * " + COPY + " WHERE id % 100 = 5",
          "DELETE FROM " + part.table() + " WHERE id % 100 = 9",
          "INSERT INTO " + part.table() + " VALUES (-1, 'sentinel')");
      await()
          .atMost(WAIT)
          .until(() -> replica.table(part).containsKey(List.<Object>of(-1)) || done.isDone());
      assertFalse(done.isDone(), "the source stopped: " + done);
      Map<Object, Row> read = new TreeMap<>();
      Map<Object, Row> readPart = new TreeMap<>();
      Map<Object, Row> copied = new TreeMap<>();
      Map<Object, Row> copiedPart = new TreeMap<>();
      synchronized (replica) {
        for (ReadEvent r : replica.readEvents) {
          if (r.table().equals(kinds)) {
            read.put(r.after().get("id"), r.after());
          } else if (r.table().equals(part)) {
            readPart.put(r.after().get("id"), r.after());
          }
        }
        for (InsertEvent i : inserts) {
          int id = (Integer) i.after().get("id");
          if (id > COPY && id < 2 * COPY) {
            (i.table().equals(kinds) ? copied : copiedPart).put(id - COPY, i.after());
          }
        }
      }
      assertEquals(read.keySet(), copied.keySet(), "copies streamed, " + where);
      assertEquals(readPart.keySet(), copiedPart.keySet(), "partition copies, " + where);
      int toasted = 0;
      for (Map.Entry<Object, Row> e : read.entrySet()) {
        Row streamed = copied.get(e.getKey());
        assertEquals(streamed.columns(), e.getValue().columns(), "columns, " + where);
        assertEquals(values(streamed), values(e.getValue()), "row " + e.getKey() + ", " + where);
        assertFalse(e.getValue().hasUndecoded(), "undecoded values, " + where);
        if (e.getValue().get("big") instanceof String big && big.length() > 8000) {
          toasted++;
        }
      }
      assertEquals(TOASTED, toasted, "TOASTed values read whole, " + where);
      for (Map.Entry<Object, Row> e : readPart.entrySet()) {
        assertEquals(copiedPart.get(e.getKey()).columns(), e.getValue().columns(), where);
        assertEquals(values(copiedPart.get(e.getKey())), values(e.getValue()), where);
      }
      try (Connection c = pg.getConnection()) {
        assertEquals(
            SnapshotReplica.content(c, part, List.of("id")),
            replica.sorted(part),
            "partitioned table replayed, " + where);
        if (exported) {
          assertEquals(
              SnapshotReplica.content(c, nokey, null),
              replica.sorted(nokey),
              "table without a key replayed, " + where);
        }
        // the types table: its keys, and the values JDBC and the decoders agree on
        Map<List<Object>, Map<String, Object>> table =
            SnapshotReplica.content(c, kinds, List.of("id"));
        Map<List<Object>, Map<String, Object>> replayed = replica.sorted(kinds);
        assertEquals(new TreeSet<>(ids(table)), new TreeSet<>(ids(replayed)), "keys, " + where);
        for (Map.Entry<List<Object>, Map<String, Object>> e : table.entrySet()) {
          Map<String, Object> row = replayed.get(e.getKey());
          for (String col : List.of("i8", "t", "vc", "big", "i2")) {
            Object want = e.getValue().get(col);
            Object got = row.get(col);
            assertEquals(
                want == null ? null : want.toString(),
                got == null ? null : got.toString(),
                col + " of " + e.getKey() + ", " + where);
          }
        }
      }
      source.stop();
      done.get(30, TimeUnit.SECONDS);
    } finally {
      pg.execute("SELECT pg_drop_replication_slot('slot_" + s + "')");
    }
  }

  private static List<Integer> ids(Map<List<Object>, Map<String, Object>> rows) {
    List<Integer> out = new ArrayList<>();
    rows.keySet().forEach(k -> out.add((Integer) k.get(0)));
    return out;
  }

  /** The row's values but its key, each with its class, byte arrays as hex. */
  private static Map<String, Object> values(Row row) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < row.size(); i++) {
      if (row.column(i).name().equals("id")) {
        continue;
      }
      Object v = row.get(i);
      m.put(
          row.column(i).name(),
          (row.isUndecoded(i) ? "undecoded:" : "")
              + (v instanceof byte[] b
                  ? "bytes:" + HexFormat.of().formatHex(b)
                  : v == null ? "null" : v.getClass().getSimpleName() + ":" + v));
    }
    return m;
  }
}

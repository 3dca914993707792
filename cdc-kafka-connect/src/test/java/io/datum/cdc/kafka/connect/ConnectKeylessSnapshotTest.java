package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.datum.cdc.TableId;
import io.datum.cdc.core.SnapshotRequests;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Snapshots of tables without a key through the connector (docs/snapshots.md, "Tables without a
 * key"): an insert-only table with the default replica identity and a REPLICA IDENTITY FULL table
 * with duplicate rows, read by the initial snapshot at the slot's exported snapshot (no reset),
 * then asked for on request while a writer changes them, the task restarted in the middle of that
 * snapshot. Replaying each topic in order ({@code t} empties the table) leaves it equal to the
 * table as a multiset of rows, and the on-request snapshot's rows follow a reset ({@code op t},
 * {@code source.snapshot} {@code incremental}).
 */
@EmbeddedPostgresTest
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class ConnectKeylessSnapshotTest {

  private static final int LOG_ROWS = 20000;
  private static final int TAG_ROWS = 10000;
  private static final int ITEMS = 500;
  private static final TableId LOG = new TableId("public", "events_log");
  private static final TableId TAGS = new TableId("public", "tags");
  private static final String LOG_TOPIC = "nk.public.events_log";
  private static final String TAGS_TOPIC = "nk.public.tags";
  private static final Duration WAIT = Duration.ofSeconds(180);

  private static EmbeddedConnectCluster connect;

  @BeforeAll
  static void cluster(EmbeddedPostgresServer pg) throws Exception {
    pg.execute(
        "CREATE TABLE events_log (at int, what text)",
        "CREATE TABLE tags (item int, tag text)",
        "ALTER TABLE tags REPLICA IDENTITY FULL",
        "INSERT INTO events_log SELECT g, 'boot ' || g FROM generate_series(1, " + LOG_ROWS + ") g",
        // duplicates: a multiset, not a set
        "INSERT INTO tags SELECT g % "
            + ITEMS
            + ", 't' || (g % 7) FROM generate_series(1, "
            + TAG_ROWS
            + ") g",
        "INSERT INTO tags VALUES (NULL, NULL), (NULL, NULL), (7, NULL)",
        "CREATE PUBLICATION keyless_pub FOR TABLE events_log, tags");
    connect = ConnectClusters.shared();
  }

  @AfterAll
  static void stop() {
    ConnectClusters.release(connect);
  }

  /** Inserts into events_log; inserts, updates and deletes duplicate rows of tags. */
  private static final class Writer implements Runnable {
    final EmbeddedPostgresServer pg;
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicInteger writes = new AtomicInteger();
    final AtomicReference<Throwable> failure = new AtomicReference<>();

    Writer(EmbeddedPostgresServer pg) {
      this.pg = pg;
    }

    @Override
    public void run() {
      Random random = new Random(25);
      try (Connection c = pg.getConnection();
          Statement st = c.createStatement()) {
        for (int n = 0; !stop.get(); n++) {
          int item = random.nextInt(ITEMS);
          switch (random.nextInt(6)) {
            case 0, 1 -> st.execute("INSERT INTO events_log VALUES (" + (100000 + n) + ", 'w')");
            // every duplicate of the item: one u record per row, the same before for equal rows
            case 2 -> st.execute("UPDATE tags SET tag = tag || '+' WHERE item = " + item);
            // one of the duplicates
            case 3 ->
                st.execute(
                    "UPDATE tags SET tag = 'u"
                        + n
                        + "' WHERE ctid IN (SELECT ctid FROM tags WHERE item = "
                        + item
                        + " LIMIT 1)");
            case 4 ->
                st.execute(
                    "DELETE FROM tags WHERE ctid IN (SELECT ctid FROM tags WHERE item = "
                        + item
                        + " LIMIT 1)");
            default -> st.execute("INSERT INTO tags VALUES (" + item + ", 'dup')");
          }
          writes.incrementAndGet();
        }
      } catch (Throwable t) {
        failure.set(t);
      }
    }

    void stopAndCheck(Thread thread) throws Throwable {
      stop.set(true);
      thread.join();
      if (failure.get() != null) {
        throw failure.get();
      }
    }
  }

  @Test
  void onRequestSnapshotUnderWritesAndATaskRestartReplaysToTheTables(EmbeddedPostgresServer pg)
      throws Throwable {
    Map<String, String> config = ConnectClusters.connector(pg, "nk", "keyless_slot");
    config.put("publication.name", "keyless_pub");
    config.put("snapshot.mode", "initial,on_request");
    config.put("snapshot.chunk.rows", "200");
    // small polls, so a restart lands in the middle of the snapshot
    config.put("max.batch.size", "100");
    config.put("heartbeat.interval.ms", "500");
    connect.configureConnector("nk", config);
    connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("nk", 1, "not running");

    Writer workload = new Writer(pg);
    Thread writer = new Thread(workload, "nk-writer");
    boolean inProgressAtTheRestart = false;
    try (KafkaConsumer<byte[], byte[]> watch = connect.kafka().createConsumer(new HashMap<>())) {
      List<TopicPartition> partitions =
          List.of(new TopicPartition(LOG_TOPIC, 0), new TopicPartition(TAGS_TOPIC, 0));
      watch.assign(partitions);
      watch.seekToBeginning(partitions);
      Map<String, Progress> progress =
          Map.of(LOG_TOPIC, new Progress(), TAGS_TOPIC, new Progress());

      // the initial snapshot, read at the slot's exported snapshot
      Awaitility.await()
          .atMost(WAIT)
          .until(
              () -> {
                watch(watch, progress);
                return progress.get(LOG_TOPIC).initialReads == LOG_ROWS
                    && progress.get(TAGS_TOPIC).initialReads == TAG_ROWS + 3;
              });
      writer.start();
      Awaitility.await().atMost(WAIT).until(() -> workload.writes.get() > 300);

      // an on-request snapshot of both tables, asked for with a logical decoding message
      try (Connection c = pg.getConnection()) {
        SnapshotRequests.request(c, "keyless_slot", List.of(LOG, TAGS));
      }
      // the task restarts once a reset and some of its rows are in a topic
      Awaitility.await()
          .atMost(WAIT)
          .until(
              () -> {
                watch(watch, progress);
                return progress.values().stream().anyMatch(p -> p.resets > 0 && p.reads >= 1000);
              });
      inProgressAtTheRestart = !snapshotIdle();
      connect.restartTask("nk", 0);
      connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("nk", 1, "not running");

      // the snapshot ends: both tables were reset and read, and the offsets hold no progress
      Awaitility.await()
          .atMost(WAIT)
          .ignoreExceptions()
          .until(
              () -> {
                watch(watch, progress);
                return progress.get(LOG_TOPIC).reads >= LOG_ROWS
                    && progress.get(TAGS_TOPIC).reads > 0
                    && snapshotIdle();
              });
      int after = workload.writes.get() + 500;
      Awaitility.await().atMost(WAIT).until(() -> workload.writes.get() >= after);
      workload.stopAndCheck(writer);
    } finally {
      workload.stop.set(true);
      writer.join();
    }

    // a sentinel row in each table, in one transaction: once both are in the topics, every
    // change before them is too
    pg.execute(
        "BEGIN; INSERT INTO events_log VALUES (-1, 'sentinel'); "
            + "INSERT INTO tags VALUES (-1, 'sentinel'); COMMIT");
    Map<String, List<JsonNode>> topics = readUpToTheSentinels();
    int logResets;
    int tagResets;
    try (Connection c = pg.getConnection()) {
      logResets = assertTopic(topics.get(LOG_TOPIC), content(c, "events_log"), LOG_TOPIC);
      tagResets = assertTopic(topics.get(TAGS_TOPIC), content(c, "tags"), TAGS_TOPIC);
    } catch (AssertionError e) {
      // the records, one JSON value a line, for whoever reads the failure
      for (Map.Entry<String, List<JsonNode>> t : topics.entrySet()) {
        Files.write(
            Path.of("target", t.getKey() + ".jsonl"),
            t.getValue().stream().map(JsonNode::toString).toList());
      }
      throw e;
    }
    System.out.printf(
        "ConnectKeylessSnapshotTest: %d writes; task restarted with the snapshot %s in the"
            + " offsets; events_log: %d records, %d resets; tags: %d records, %d resets%n",
        workload.writes.get(),
        inProgressAtTheRestart ? "in progress" : "done",
        topics.get(LOG_TOPIC).size(),
        logResets,
        topics.get(TAGS_TOPIC).size(),
        tagResets);
    connect.deleteConnector("nk");
  }

  /** What the watching consumer saw of one topic. */
  private static final class Progress {
    int initialReads;
    int resets;
    int reads;
  }

  private static void watch(
      KafkaConsumer<byte[], byte[]> consumer, Map<String, Progress> progress) {
    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
      if (r.value() == null) {
        continue; // the tombstone after a delete
      }
      JsonNode v = envelope(ConnectClusters.parse(r.value()));
      Progress p = progress.get(r.topic());
      String snapshot = v.get("source").get("snapshot").asText();
      switch (v.get("op").asText()) {
        case "r" -> {
          if ("incremental".equals(snapshot)) {
            p.reads++;
          } else {
            p.initialReads++;
          }
        }
        case "t" -> p.resets += "incremental".equals(snapshot) ? 1 : 0;
        default -> {}
      }
    }
  }

  /** Whether Connect's offsets hold no snapshot in progress. */
  private static boolean snapshotIdle() {
    Map<String, ?> offset = connect.connectorOffsets("nk").offsets().get(0).offset();
    var snapshot = Offsets.checkpoint("keyless_slot", offset, "test").snapshot();
    return snapshot.initialCompleted() && snapshot.isIdle();
  }

  /** Reads both topics from the beginning, in order, until each holds its sentinel row. */
  private static Map<String, List<JsonNode>> readUpToTheSentinels() {
    Map<String, List<JsonNode>> topics = new HashMap<>();
    topics.put(LOG_TOPIC, new ArrayList<>());
    topics.put(TAGS_TOPIC, new ArrayList<>());
    try (KafkaConsumer<byte[], byte[]> consumer = connect.kafka().createConsumer(new HashMap<>())) {
      List<TopicPartition> partitions =
          List.of(new TopicPartition(LOG_TOPIC, 0), new TopicPartition(TAGS_TOPIC, 0));
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Awaitility.await()
          .atMost(WAIT)
          .until(
              () -> {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                  // a tombstone follows each delete: it carries no row
                  if (r.value() != null) {
                    JsonNode v = envelope(ConnectClusters.parse(r.value()));
                    if ("t".equals(v.get("op").asText())) {
                      assertNull(r.key(), "a truncate has no key: " + v);
                    }
                    topics.get(r.topic()).add(v);
                  }
                }
                return topics.values().stream().allMatch(ConnectKeylessSnapshotTest::hasSentinel);
              });
    }
    return topics;
  }

  private static boolean hasSentinel(List<JsonNode> records) {
    if (records.isEmpty()) {
      return false;
    }
    JsonNode after = records.get(records.size() - 1).get("after");
    if (after == null || after.isNull()) {
      return false;
    }
    Map<String, String> row = row(after);
    return "sentinel".equals(row.get("what")) || "sentinel".equals(row.get("tag"));
  }

  /** The envelope of a value written with or without schemas. */
  private static JsonNode envelope(JsonNode value) {
    return value.has("schema") && value.has("payload") ? value.get("payload") : value;
  }

  /** A row image as column name to value as text (null for SQL NULL). */
  private static Map<String, String> row(JsonNode image) {
    Map<String, String> row = new TreeMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = image.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> f = it.next();
      row.put(f.getKey(), f.getValue().isNull() ? null : f.getValue().asText());
    }
    return row;
  }

  /** The table's rows as a multiset: row to count. */
  private static Map<Map<String, String>, Integer> content(Connection c, String table)
      throws Exception {
    Map<Map<String, String>, Integer> rows = new HashMap<>();
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT * FROM " + table)) {
      ResultSetMetaData md = rs.getMetaData();
      while (rs.next()) {
        Map<String, String> row = new TreeMap<>();
        for (int i = 1; i <= md.getColumnCount(); i++) {
          row.put(md.getColumnName(i), rs.getString(i));
        }
        rows.merge(row, 1, Integer::sum);
      }
    }
    return rows;
  }

  /**
   * Replays a topic into a multiset and compares it with the table; checks that the on-request
   * snapshot reset the table and that its rows follow the reset.
   *
   * @return the number of resets in the topic
   */
  private static int assertTopic(
      List<JsonNode> records, Map<Map<String, String>, Integer> table, String topic) {
    Map<Map<String, String>, Integer> replayed = new HashMap<>();
    List<String> missing = new ArrayList<>();
    int lastReset = -1;
    int firstReset = -1;
    int resets = 0;
    String resetId = null;
    for (int i = 0; i < records.size(); i++) {
      JsonNode v = records.get(i);
      JsonNode source = v.get("source");
      String snapshot = source.get("snapshot").asText();
      switch (v.get("op").asText()) {
        case "r", "c" -> replayed.merge(row(v.get("after")), 1, Integer::sum);
        case "u" -> {
          remove(replayed, row(v.get("before")), missing, i);
          replayed.merge(row(v.get("after")), 1, Integer::sum);
        }
        case "d" -> remove(replayed, row(v.get("before")), missing, i);
        case "t" -> {
          replayed.clear();
          // after a read cut short by the restart, the changes up to the next reset apply to
          // the rows delivered so far: only those after the last reset must find their row
          missing.clear();
          // only the on-request snapshot resets: the initial one reads at the exported snapshot
          assertEquals("incremental", snapshot, topic + " record " + i + ": " + v);
          assertTrue(v.get("before").isNull() && v.get("after").isNull(), v.toString());
          assertTrue(v.get("transaction") == null || v.get("transaction").isNull(), v.toString());
          String id = source.get("snapshot_id").asText();
          assertTrue(id.startsWith("request-"), v.toString());
          assertTrue(source.get("snapshot_chunk").isNumber(), v.toString());
          assertTrue(resetId == null || resetId.equals(id), "one snapshot id: " + v);
          resetId = id;
          if (firstReset < 0) {
            firstReset = i;
          }
          lastReset = i;
          resets++;
        }
        default -> throw new AssertionError(topic + " record " + i + ": " + v);
      }
    }
    assertTrue(firstReset >= 0, topic + ": no reset (op t, source.snapshot incremental)");
    // the initial snapshot's rows come first, before any change
    assertEquals("r", records.get(0).get("op").asText(), topic + ": " + records.get(0));
    assertEquals("true", records.get(0).get("source").get("snapshot").asText());
    // every row of the on-request snapshot follows its first reset; those read after the last
    // reset follow it as one run
    int run = lastReset + 1;
    while (run < records.size() && isRequestedRead(records.get(run), resetId)) {
      run++;
    }
    for (int i = 0; i < records.size(); i++) {
      if (isRequestedRead(records.get(i), resetId)) {
        assertTrue(i > firstReset, topic + " record " + i + " before the reset: " + records.get(i));
        assertTrue(i < run, topic + " record " + i + " after the reset's rows: " + records.get(i));
      }
    }
    assertNotNull(resetId);
    assertEquals(
        List.of(),
        missing.subList(0, Math.min(10, missing.size())),
        topic + ": " + missing.size() + " before images the replay lacked");
    List<String> diff = new ArrayList<>();
    for (Map.Entry<Map<String, String>, Integer> e : table.entrySet()) {
      if (!e.getValue().equals(replayed.get(e.getKey()))) {
        diff.add(e.getKey() + ": table " + e.getValue() + ", replayed " + replayed.get(e.getKey()));
      }
    }
    for (Map.Entry<Map<String, String>, Integer> e : replayed.entrySet()) {
      if (!table.containsKey(e.getKey())) {
        diff.add(e.getKey() + ": not in the table, replayed " + e.getValue());
      }
    }
    assertEquals(
        List.of(),
        diff.subList(0, Math.min(10, diff.size())),
        topic + ": " + diff.size() + " of " + table.size() + " distinct rows differ");
    assertFalse(table.isEmpty());
    return resets;
  }

  private static boolean isRequestedRead(JsonNode v, String id) {
    JsonNode source = v.get("source");
    return "r".equals(v.get("op").asText())
        && "incremental".equals(source.get("snapshot").asText())
        && id.equals(source.get("snapshot_id").asText());
  }

  private static void remove(
      Map<Map<String, String>, Integer> replayed,
      Map<String, String> row,
      List<String> missing,
      int index) {
    Integer n = replayed.get(row);
    if (n == null) {
      missing.add("record " + index + ": " + row);
    } else if (n == 1) {
      replayed.remove(row);
    } else {
      replayed.put(row, n - 1);
    }
  }
}

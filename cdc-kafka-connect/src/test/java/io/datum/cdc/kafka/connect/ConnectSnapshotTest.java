package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.datum.cdc.TableId;
import io.datum.cdc.core.SnapshotRequests;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Snapshots through the connector: the initial snapshot of a new slot, then an on-request snapshot
 * asked for with a logical decoding message, whose task is restarted in the middle and resumes from
 * the progress in Connect's offsets.
 */
@EmbeddedPostgresTest
class ConnectSnapshotTest {

  private static final int ROWS = 20000;

  private static EmbeddedConnectCluster connect;

  @BeforeAll
  static void cluster(EmbeddedPostgresServer pg) throws Exception {
    pg.execute(
        "CREATE TABLE catalog (id int PRIMARY KEY, title text)",
        "INSERT INTO catalog SELECT g, 'title ' || g FROM generate_series(1, " + ROWS + ") g",
        "CREATE PUBLICATION catalog_pub FOR TABLE catalog");
    connect = ConnectClusters.shared();
  }

  @AfterAll
  static void stop() {
    ConnectClusters.release(connect);
  }

  @Test
  void initialThenOnRequestSnapshotResumedAfterATaskRestart(EmbeddedPostgresServer pg)
      throws Exception {
    Map<String, String> config = ConnectClusters.connector(pg, "cat", "catalog_slot");
    config.put("publication.name", "catalog_pub");
    config.put("snapshot.mode", "initial,on_request");
    // small chunks: the on-request snapshot's progress must reach a checkpoint, and so an offset
    // Connect commits, before the snapshot ends; with 200-row chunks the faster reads (binary COPY)
    // polled every row before Connect acknowledged the first, and the offsets never showed it
    config.put("snapshot.chunk.rows", "50");
    // small polls, so a restart lands in the middle of the snapshot
    config.put("max.batch.size", "100");
    config.put("max.queue.size", "200");
    config.put("heartbeat.interval.ms", "500");
    connect.configureConnector("cat", config);
    connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("cat", 1, "not running");
    String topic = "cat.public.catalog";
    TopicPartition tp = new TopicPartition(topic, 0);

    try (KafkaConsumer<byte[], byte[]> consumer = connect.kafka().createConsumer(new HashMap<>())) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));

      // the initial snapshot: every row once as a read, the last one marked last, then changes
      Map<Integer, JsonNode> initial = new HashMap<>();
      Awaitility.await()
          .atMost(Duration.ofSeconds(120))
          .until(
              () -> {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                  JsonNode v = ConnectClusters.parse(r.value());
                  assertEquals("r", v.get("op").asText());
                  assertTrue(initial.put(v.get("after").get("id").asInt(), v) == null, "read once");
                }
                return initial.size() == ROWS;
              });
      for (int id = 1; id <= ROWS; id++) {
        assertEquals("title " + id, initial.get(id).get("after").get("title").asText());
      }
      long lastMarked =
          initial.values().stream()
              .filter(v -> v.get("source").get("snapshot").asText().startsWith("last"))
              .count();
      assertEquals(1, lastMarked, "one row is the last of the table's snapshot");

      pg.execute("INSERT INTO catalog VALUES (" + (ROWS + 1) + ", 'new')");
      JsonNode change = next(consumer);
      assertEquals("c", change.get("op").asText());
      assertEquals(ROWS + 1, change.get("after").get("id").asInt());
      assertEquals("false", change.get("source").get("snapshot").asText());

      // an on-request snapshot, asked for with a logical decoding message
      try (Connection c = DriverManager.getConnection(pg.jdbcUrl(), pg.user(), pg.password())) {
        SnapshotRequests.request(c, "catalog_slot", List.of(new TableId("public", "catalog")));
      }
      Map<Integer, Integer> requested = new HashMap<>();
      Awaitility.await()
          .atMost(Duration.ofSeconds(120))
          .until(
              () -> {
                readRequested(consumer, requested);
                return requested.size() >= 1000;
              });
      // the task restarts in the middle: paused, so that the snapshot cannot end before the
      // restart (the task polls nothing; the library waits once its queue is full), then
      // restarted, then resumed. The snapshot resumes from Connect's offsets. Offsets only move
      // forward, so the keys done in the offsets read before the restart stay done after it.
      connect.pauseConnector("cat");
      connect
          .assertions()
          .assertConnectorAndExactlyNumTasksArePaused("cat", 1, "the connector did not pause");
      int doneThrough =
          Awaitility.await()
              .atMost(Duration.ofSeconds(60))
              .ignoreExceptions()
              .until(ConnectSnapshotTest::keysDoneInTheOffsets, done -> done > 0);
      assertTrue(doneThrough < ROWS, "the on-request snapshot is in progress: " + doneThrough);
      connect.restartTask("cat", 0);
      connect.resumeConnector("cat");
      Awaitility.await()
          .atMost(Duration.ofSeconds(180))
          .until(
              () -> {
                readRequested(consumer, requested);
                return requested.size() == ROWS + 1;
              });
      for (int id = 1; id <= ROWS + 1; id++) {
        assertTrue(requested.getOrDefault(id, 0) >= 1, "row " + id + " read on request");
      }
      List<Integer> readAgainThoughDone =
          requested.entrySet().stream()
              .filter(e -> e.getValue() > 1 && e.getKey() <= doneThrough)
              .map(Map.Entry::getKey)
              .sorted()
              .toList();
      assertEquals(
          List.of(),
          readAgainThoughDone,
          "the restarted task read only what the offsets had not acknowledged (keys through "
              + doneThrough
              + " were done)");
    }
    // once complete, the offsets carry no snapshot progress but that the initial one is done
    Awaitility.await()
        .atMost(Duration.ofSeconds(60))
        .ignoreExceptions()
        .untilAsserted(
            () -> {
              Map<String, ?> offset = connect.connectorOffsets("cat").offsets().get(0).offset();
              var progress = Offsets.checkpoint("catalog_slot", offset, "test").snapshot();
              assertTrue(progress.initialCompleted(), offset.toString());
              assertTrue(progress.isIdle(), offset.toString());
            });
    connect.deleteConnector("cat");
  }

  private static JsonNode next(KafkaConsumer<byte[], byte[]> consumer) {
    JsonNode[] found = new JsonNode[1];
    Awaitility.await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                assertFalse(found[0] != null, "one record only");
                found[0] = ConnectClusters.parse(r.value());
              }
              return found[0] != null;
            });
    return found[0];
  }

  /**
   * Returns the key below which the on-request snapshot of catalog is done in Connect's offsets:
   * the lowest exclusive lower bound of its remaining ranges (0 while none is done).
   */
  private static int keysDoneInTheOffsets() {
    Map<String, ?> offset = connect.connectorOffsets("cat").offsets().get(0).offset();
    var table =
        Offsets.checkpoint("catalog_slot", offset, "test")
            .snapshot()
            .table(new TableId("public", "catalog"));
    if (table == null) {
      return 0;
    }
    int lowest = Integer.MAX_VALUE;
    for (var range : table.remaining()) {
      lowest = Math.min(lowest, range.after() == null ? 0 : Integer.parseInt(range.after().get(0)));
    }
    return lowest == Integer.MAX_VALUE ? 0 : lowest;
  }

  private static void readRequested(
      KafkaConsumer<byte[], byte[]> consumer, Map<Integer, Integer> requested) {
    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
      JsonNode v = ConnectClusters.parse(r.value());
      if ("r".equals(v.get("op").asText())) {
        assertEquals("incremental", v.get("source").get("snapshot").asText());
        requested.merge(v.get("after").get("id").asInt(), 1, Integer::sum);
      }
    }
  }
}

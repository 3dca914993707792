package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.apache.kafka.connect.util.clusters.WorkerHandle;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Two distributed workers, at-least-once: the worker running the task is stopped mid-stream, the
 * other takes the task over and resumes from Connect's offsets, and no row is lost.
 */
@EmbeddedPostgresTest
class ConnectFailoverTest {

  private static EmbeddedConnectCluster connect;

  @BeforeAll
  static void cluster(EmbeddedPostgresServer pg) throws Exception {
    pg.execute(
        "CREATE TABLE moving (id int PRIMARY KEY)",
        "CREATE PUBLICATION moving_pub FOR TABLE moving");
    connect = ConnectClusters.start("failover", 2, false);
  }

  @AfterAll
  static void stop() {
    if (connect != null) {
      connect.stop();
    }
  }

  @Test
  void theOtherWorkerTakesTheTaskOverAndNothingIsLost(EmbeddedPostgresServer pg) throws Exception {
    Map<String, String> config = ConnectClusters.connector(pg, "mv", "moving_slot");
    config.put("publication.name", "moving_pub");
    connect.configureConnector("mv", config);
    connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("mv", 1, "not running");
    ConnectStreamingTest.awaitSlotActive(pg, "moving_slot");

    int total;
    try (NumberedRows rows = new NumberedRows(pg, "moving")) {
      connect.kafka().consume(200, 60_000, "mv.public.moving");
      String before = ConnectExactlyOnceTest.taskWorker(connect, "mv");
      WorkerHandle running = ConnectExactlyOnceTest.worker(connect, before);
      connect.removeWorker(running);
      ConnectExactlyOnceTest.awaitTaskRunningElsewhere(connect, "mv", before);
      int seenAt = rows.written();
      Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> rows.written() > seenAt + 200);
      total = rows.stop();
    }
    Map<Integer, Integer> seen =
        NumberedRows.awaitAll(connect, "mv.public.moving", total, Map.of());
    for (int id = 1; id <= total; id++) {
      assertTrue(seen.getOrDefault(id, 0) >= 1, "row " + id + " of " + total + " is in the topic");
    }
    assertEquals(total, seen.size());
    connect.addWorker();
    connect.deleteConnector("mv");
  }
}

package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
 * Exactly-once delivery (KIP-618) on two distributed workers with {@code
 * exactly.once.source.support=enabled} and {@code transaction.boundary=connector}: while numbered
 * rows are written, the task's worker is stopped without a graceful shutdown (the task is abandoned
 * after 1 ms, its producer closed with a transaction open, as a killed process leaves it), the task
 * fails on a lost connection and is restarted, and the connector is restarted; a {@code
 * read_committed} consumer then finds every row exactly once.
 */
@EmbeddedPostgresTest
class ConnectExactlyOnceTest {

  private static EmbeddedConnectCluster connect;

  @BeforeAll
  static void cluster(EmbeddedPostgresServer pg) throws Exception {
    pg.execute(
        "CREATE TABLE numbered (id int PRIMARY KEY)",
        "CREATE PUBLICATION numbered_pub FOR TABLE numbered");
    connect = ConnectClusters.start("exactly-once", 2, true);
  }

  @AfterAll
  static void stop() {
    if (connect != null) {
      connect.stop();
    }
  }

  @Test
  void everyRowExactlyOnceAcrossWorkerKillsTaskFailuresAndRestarts(EmbeddedPostgresServer pg)
      throws Exception {
    Map<String, String> config = ConnectClusters.connector(pg, "eos", "numbered_slot");
    config.put("publication.name", "numbered_pub");
    config.put("exactly.once.support", "required");
    config.put("transaction.boundary", "connector");
    // a lost connection fails the task at once, instead of being reconnected inside it
    config.put("reconnect.max.attempts", "0");
    connect.configureConnector("eos", config);
    connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("eos", 1, "not running");
    ConnectStreamingTest.awaitSlotActive(pg, "numbered_slot");
    String topic = "eos.public.numbered";
    Map<String, Object> readCommitted = Map.of("isolation.level", "read_committed");

    int total;
    try (NumberedRows rows = new NumberedRows(pg, "numbered")) {
      connect.kafka().consume(300, 60_000, readCommitted, topic);

      // 1. the worker running the task dies: its task gets 1 ms to stop
      String first = taskWorker(connect, "eos");
      connect.removeWorker(worker(connect, first));
      awaitTaskRunningElsewhere(connect, "eos", first);
      connect.addWorker();
      awaitMore(rows, 300);

      // 2. the task fails: its replication connection is terminated
      pg.execute(
          "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name ="
              + " 'numbered_slot' AND active_pid IS NOT NULL");
      Awaitility.await()
          .atMost(Duration.ofSeconds(60))
          .ignoreExceptions()
          .until(() -> "FAILED".equals(connect.connectorStatus("eos").tasks().get(0).state()));
      connect.restartTask("eos", 0);
      awaitTaskRunning("eos");
      awaitMore(rows, 300);

      // 3. the connector and its task restart
      connect.restartConnectorAndTasks("eos", false, true, false);
      awaitTaskRunning("eos");
      awaitMore(rows, 300);
      total = rows.stop();
    }
    Map<Integer, Integer> seen = NumberedRows.awaitAll(connect, topic, total, readCommitted);
    for (int id = 1; id <= total; id++) {
      assertEquals(1, seen.getOrDefault(id, 0), "row " + id + " of " + total);
    }
    assertEquals(total, seen.size());
    connect.deleteConnector("eos");
  }

  private static void awaitMore(NumberedRows rows, int more) {
    int from = rows.written();
    Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> rows.written() >= from + more);
  }

  /** Waits until task 0 runs on another worker than {@code old}. */
  static void awaitTaskRunningElsewhere(
      EmbeddedConnectCluster connect, String connector, String old) {
    Awaitility.await()
        .atMost(Duration.ofSeconds(120))
        .ignoreExceptions()
        .until(
            () -> {
              var task = connect.connectorStatus(connector).tasks().get(0);
              return "RUNNING".equals(task.state()) && !old.equals(task.workerId());
            });
  }

  private static void awaitTaskRunning(String connector) {
    Awaitility.await()
        .atMost(Duration.ofSeconds(120))
        .ignoreExceptions()
        .until(() -> "RUNNING".equals(connect.connectorStatus(connector).tasks().get(0).state()));
  }

  /** Returns the id ({@code host:port}) of the worker running the connector's task 0. */
  static String taskWorker(EmbeddedConnectCluster connect, String connector) {
    return connect.connectorStatus(connector).tasks().get(0).workerId();
  }

  /** Returns the worker of an id. */
  static WorkerHandle worker(EmbeddedConnectCluster connect, String workerId) {
    for (WorkerHandle w : connect.workers()) {
      if ((w.url().getHost() + ":" + w.url().getPort()).equals(workerId)) {
        return w;
      }
    }
    throw new AssertionError("no worker " + workerId + " among " + connect.workers());
  }
}

package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The connector on a hot standby (PostgreSQL 16+, the default version), on a real in-JVM Connect
 * cluster: {@code database.port} names the standby and {@code primary.jdbc.url} its primary; the
 * task creates its slot on the standby, takes the initial snapshot there (Debezium's default
 * snapshot mode), and streams what the primary writes. Nothing is written on the standby.
 */
@EmbeddedPostgresTest
class ConnectStandbyTest {

  private static EmbeddedConnectCluster connect;
  private static EmbeddedPostgresServer standby;

  @BeforeAll
  static void cluster(EmbeddedPostgresServer pg) throws Exception {
    pg.execute(
        "CREATE TABLE replica_read (id int PRIMARY KEY)",
        "INSERT INTO replica_read SELECT generate_series(1, 30)",
        "CREATE PUBLICATION replica_pub FOR TABLE replica_read");
    standby = pg.createStandby("connect_standby");
    connect = ConnectClusters.start("standby", 1, false);
  }

  @AfterAll
  static void stop() {
    if (connect != null) {
      connect.stop();
    }
    if (standby != null) {
      standby.close();
    }
  }

  @Test
  void theTaskSnapshotsAndStreamsFromTheStandby(EmbeddedPostgresServer pg) throws Exception {
    Map<String, String> config = ConnectClusters.connector(standby, "sb", "standby_slot");
    config.put("publication.name", "replica_pub");
    config.put("snapshot.mode", "initial");
    config.put("primary.jdbc.url", pg.jdbcUrl());
    connect.configureConnector("sb", config);
    connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("sb", 1, "not running");
    pg.execute("INSERT INTO replica_read SELECT generate_series(31, 40)");
    ConsumerRecords<byte[], byte[]> records =
        connect.kafka().consume(40, 90_000, "sb.public.replica_read");
    Set<Integer> ids = new TreeSet<>();
    Map<String, Integer> ops = new java.util.TreeMap<>();
    for (var value : ConnectClusters.values(records)) {
      ids.add(value.get("after").get("id").asInt());
      ops.merge(value.get("op").asText(), 1, Integer::sum);
    }
    assertEquals(40, ids.size(), ids.toString());
    assertEquals(Map.of("r", 30, "c", 10), ops);
    assertEquals(
        "logical",
        standby.queryString(
            "SELECT slot_type FROM pg_replication_slots WHERE slot_name = 'standby_slot'"));
    assertTrue(
        "0"
            .equals(
                pg.queryString(
                    "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'standby_slot'")),
        "the slot is on the standby only");
    connect.deleteConnector("sb");
  }
}

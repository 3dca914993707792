package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The connector with its default settings on the oldest PostgreSQL it supports (14): it reads the
 * existing rows, then streams. A default that needs a newer server (the pgoutput {@code origin}
 * option, 16+, was sent as {@code any} by default) made every task fail at start there.
 */
@EmbeddedPostgresTest(version = 14)
class ConnectOldServerTest {

  private static final long TIMEOUT_MS = Duration.ofSeconds(60).toMillis();

  private static EmbeddedConnectCluster connect;

  @BeforeAll
  static void cluster(EmbeddedPostgresServer pg) throws Exception {
    pg.execute(
        "CREATE TABLE accounts (id int PRIMARY KEY, owner text)",
        "INSERT INTO accounts VALUES (1, 'Ada')",
        "CREATE PUBLICATION old_pub FOR TABLE accounts");
    connect = ConnectClusters.shared();
  }

  @AfterAll
  static void release() {
    ConnectClusters.release(connect);
  }

  @Test
  void defaultsReadTheRowsThenStreamOnPostgres14(EmbeddedPostgresServer pg) throws Exception {
    Map<String, String> config = ConnectClusters.connector(pg, "old", "old_slot");
    config.remove("snapshot.mode"); // the connector's default: initial
    config.put("publication.name", "old_pub");
    connect.configureConnector("old", config);
    connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("old", 1, "not running");

    List<JsonNode> read =
        ConnectClusters.values(connect.kafka().consume(1, TIMEOUT_MS, "old.public.accounts"));
    assertEquals("r", read.get(0).get("op").asText());
    assertEquals("Ada", read.get(0).get("after").get("owner").asText());

    pg.execute("INSERT INTO accounts VALUES (2, 'Grace')");
    List<JsonNode> both =
        ConnectClusters.values(connect.kafka().consume(2, TIMEOUT_MS, "old.public.accounts"));
    assertEquals("c", both.get(1).get("op").asText());
    assertEquals(2, both.get(1).get("after").get("id").asInt());
    assertEquals("Grace", both.get(1).get("after").get("owner").asText());
  }
}

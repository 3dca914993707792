package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The connector's task under each class of failure (issue #26): a fault retrying cannot heal
 * (missing slot, missing privilege, a role that may no longer log in) fails the task at once, its
 * trace naming the remedy in the connector's options; a transient one (the slot held by another
 * consumer, the server down when the task starts) is retried and the task streams once it clears,
 * never failing.
 */
@EmbeddedPostgresTest
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ConnectFailureClassesTest {

  /** A failure that cannot heal fails the task within this (no backoff, no retry). */
  private static final Duration AT_ONCE = Duration.ofSeconds(30);

  private static EmbeddedConnectCluster connect;

  @BeforeAll
  static void cluster(EmbeddedPostgresServer pg) throws Exception {
    pg.execute(
        "CREATE TABLE fc_t (id int PRIMARY KEY, v text)",
        "INSERT INTO fc_t VALUES (1, 'a')",
        "CREATE PUBLICATION fc_pub FOR TABLE fc_t",
        "CREATE ROLE fc_reader LOGIN REPLICATION",
        "CREATE ROLE fc_login LOGIN REPLICATION",
        "GRANT SELECT ON fc_t TO fc_login");
    connect = ConnectClusters.shared();
  }

  @AfterAll
  static void stop() {
    ConnectClusters.release(connect);
  }

  private static Map<String, String> config(EmbeddedPostgresServer pg, String name) {
    Map<String, String> c = ConnectClusters.connector(pg, name, name + "_slot");
    c.put("publication.name", "fc_pub");
    c.put("publication.autocreate.mode", "disabled");
    return c;
  }

  /** Waits for the task to fail and returns its trace. */
  private static String awaitFailed(String connector) {
    String[] trace = new String[1];
    Awaitility.await()
        .atMost(AT_ONCE)
        .until(
            () -> {
              ConnectorStateInfo status = connect.connectorStatus(connector);
              if (status.tasks().isEmpty()) {
                return false;
              }
              ConnectorStateInfo.TaskState task = status.tasks().get(0);
              trace[0] = task.trace();
              return "FAILED".equals(task.state());
            });
    connect.deleteConnector(connector);
    return trace[0];
  }

  @Test
  void aMissingSlotFailsTheTaskAtOnceNamingTheOptionThatCreatesIt(EmbeddedPostgresServer pg) {
    Map<String, String> c = config(pg, "fc_noslot");
    c.put("slot.create", "false");
    connect.configureConnector("fc_noslot", c);
    String trace = awaitFailed("fc_noslot");
    assertTrue(
        trace.contains("retrying cannot fix it")
            && trace.contains("replication slot \"fc_noslot_slot\" does not exist")
            && trace.contains("slot.create=true creates it"),
        trace);
  }

  @Test
  void aTableTheRoleCannotReadFailsTheTaskNamingTheGrant(EmbeddedPostgresServer pg)
      throws Exception {
    Map<String, String> c = config(pg, "fc_nogrant");
    c.put("database.user", "fc_reader");
    c.put("snapshot.mode", "initial");
    connect.configureConnector("fc_nogrant", c);
    String trace = awaitFailed("fc_nogrant");
    assertTrue(
        trace.contains("[SQLSTATE 42501]")
            && trace.contains("GRANT SELECT ON \"public\".\"fc_t\" TO \"fc_reader\""),
        trace);
  }

  @Test
  void aRoleThatMayNoLongerLogInFailsTheTaskWhenItReconnects(EmbeddedPostgresServer pg)
      throws Exception {
    Map<String, String> c = config(pg, "fc_revoked");
    c.put("database.user", "fc_login");
    connect.configureConnector("fc_revoked", c);
    connect
        .assertions()
        .assertConnectorAndExactlyNumTasksAreRunning("fc_revoked", 1, "not running");
    Awaitility.await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                "1"
                    .equals(
                        pg.queryString(
                            "SELECT count(*) FROM pg_replication_slots"
                                + " WHERE slot_name = 'fc_revoked_slot' AND active")));
    pg.execute(
        "ALTER ROLE fc_login NOLOGIN",
        "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
            + " WHERE slot_name = 'fc_revoked_slot'");
    String trace = awaitFailed("fc_revoked");
    assertTrue(
        trace.contains("[SQLSTATE 28000]")
            && trace.contains("authentication failed")
            && trace.contains("database.password"),
        trace);
  }

  @Test
  void aSlotHeldByAnotherConsumerIsRetriedAndTheTaskStreamsOnceItIsFree(EmbeddedPostgresServer pg)
      throws Exception {
    try (PgCdcSource holder =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .password(pg.password())
            .slot("fc_held_slot")
            .publication("fc_pub")
            .createSlot(true)
            .checkpointStore(new MemoryCheckpointStore())
            .build()) {
      holder.start((event, checkpoints) -> checkpoints.acknowledge(event.offset()));
      Map<String, String> c = config(pg, "fc_held");
      c.put("slot.wait.ms", "0");
      c.put("reconnect.backoff.initial.ms", "100");
      c.put("reconnect.backoff.max.ms", "400");
      connect.configureConnector("fc_held", c);
      // the task starts (its first attempt failing transiently) and keeps retrying from poll
      connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("fc_held", 1, "not running");
    }
    pg.execute("INSERT INTO fc_t VALUES (2, 'after the holder let go')");
    List<JsonNode> values =
        ConnectClusters.values(
            connect.kafka().consume(1, Duration.ofSeconds(60).toMillis(), "fc_held.public.fc_t"));
    assertEquals(2, values.get(0).get("after").get("id").asInt());
    assertEquals("RUNNING", connect.connectorStatus("fc_held").tasks().get(0).state());
    connect.deleteConnector("fc_held");
  }

  @Test
  void aTaskStartingWhileTheServerIsDownWaitsForItInsteadOfFailing(EmbeddedPostgresServer pg)
      throws Exception {
    Map<String, String> c = config(pg, "fc_down");
    c.put("reconnect.backoff.initial.ms", "100");
    c.put("reconnect.backoff.max.ms", "500");
    connect.configureConnector("fc_down", c);
    connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("fc_down", 1, "not running");
    connect.stopConnector("fc_down");
    connect.assertions().assertConnectorIsStopped("fc_down", "not stopped");
    pg.stop();
    try {
      connect.resumeConnector("fc_down");
      // from STOPPED, the task is RUNNING only once its start returned: with the server down it
      // failed before (a transient failure at start failed the task for good)
      connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("fc_down", 1, "not running");
    } finally {
      pg.start();
    }
    pg.execute("INSERT INTO fc_t VALUES (3, 'after the server came back')");
    List<JsonNode> values =
        ConnectClusters.values(
            connect.kafka().consume(1, Duration.ofSeconds(60).toMillis(), "fc_down.public.fc_t"));
    assertEquals(3, values.get(0).get("after").get("id").asInt());
    assertEquals("RUNNING", connect.connectorStatus("fc_down").tasks().get(0).state());
    connect.deleteConnector("fc_down");
  }

  /**
   * Creates the connector (validation connects, so the fault must come after it), stops it, lets
   * {@code fault} run, and resumes it: its task starts into the fault.
   */
  private static void startInto(Map<String, String> config, String name, Runnable fault)
      throws InterruptedException {
    connect.configureConnector(name, config);
    connect.assertions().assertConnectorAndExactlyNumTasksAreRunning(name, 1, "not running");
    connect.stopConnector(name);
    connect.assertions().assertConnectorIsStopped(name, "not stopped");
    fault.run();
    connect.resumeConnector(name);
  }

  @Test
  void aRoleThatMayNoLongerLogInFailsTheTaskAtStartNamingThePasswordOption(
      EmbeddedPostgresServer pg) throws Exception {
    pg.execute("CREATE ROLE fc_start LOGIN REPLICATION", "GRANT SELECT ON fc_t TO fc_start");
    Map<String, String> c = config(pg, "fc_authstart");
    c.put("database.user", "fc_start");
    startInto(c, "fc_authstart", () -> execute(pg, "ALTER ROLE fc_start NOLOGIN"));
    String trace = awaitFailed("fc_authstart");
    assertTrue(
        trace.contains("retrying cannot fix it")
            && trace.contains("role \"fc_start\" is not permitted to log in")
            && trace.contains("database.user names the role and database.password its password"),
        trace);
  }

  @Test
  void aDatabaseDroppedBeforeTheTaskStartsFailsItNamingTheDatabaseOption(EmbeddedPostgresServer pg)
      throws Exception {
    pg.execute("CREATE DATABASE fc_gone");
    pg.executeIn(
        "fc_gone",
        "CREATE TABLE fc_t (id int PRIMARY KEY)",
        "CREATE PUBLICATION fc_pub FOR TABLE fc_t");
    Map<String, String> c = config(pg, "fc_nodb");
    c.put("database.dbname", "fc_gone");
    startInto(
        c,
        "fc_nodb",
        () ->
            execute(
                pg, "SELECT pg_drop_replication_slot('fc_nodb_slot')", "DROP DATABASE fc_gone"));
    String trace = awaitFailed("fc_nodb");
    assertTrue(
        trace.contains("retrying cannot fix it")
            && trace.contains("[SQLSTATE 3D000]")
            && trace.contains("database.dbname names the database"),
        trace);
  }

  private static void execute(EmbeddedPostgresServer pg, String... statements) {
    try {
      pg.execute(statements);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}

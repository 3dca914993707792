package io.datum.cdc.kafka.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfo;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfos;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The connector on a real in-JVM Kafka Connect cluster (one KRaft broker, one distributed worker)
 * against a real PostgreSQL: changes of several tables in their topics, restarts, and configs
 * refused through the REST API.
 */
@EmbeddedPostgresTest
class ConnectStreamingTest {

  private static final long TIMEOUT_MS = Duration.ofSeconds(60).toMillis();

  private static EmbeddedConnectCluster connect;

  @BeforeAll
  static void cluster(EmbeddedPostgresServer pg) throws Exception {
    pg.execute(
        "CREATE TABLE customers (id int PRIMARY KEY, name text)",
        "CREATE TABLE orders (id bigint PRIMARY KEY, customer int, total numeric(10,2))",
        "CREATE TABLE restarts (id int PRIMARY KEY)",
        "CREATE PUBLICATION shop FOR TABLE customers, orders",
        "CREATE PUBLICATION restart_pub FOR TABLE restarts",
        "CREATE TABLE flat (id int PRIMARY KEY, note text)",
        "CREATE PUBLICATION flat_pub FOR TABLE flat",
        "CREATE TABLE dropped (id int PRIMARY KEY)",
        "CREATE PUBLICATION dropped_pub FOR TABLE dropped",
        "CREATE TABLE quiet (id int PRIMARY KEY)",
        "CREATE TABLE unpublished (id int)",
        "CREATE PUBLICATION quiet_pub FOR TABLE quiet");
    connect = ConnectClusters.shared();
  }

  @AfterAll
  static void stop() {
    ConnectClusters.release(connect);
  }

  @Test
  void streamsInsertUpdateDeleteAndTruncateOfSeveralTables(EmbeddedPostgresServer pg)
      throws Exception {
    Map<String, String> config = ConnectClusters.connector(pg, "shop", "shop_slot");
    config.put("publication.name", "shop");
    connect.configureConnector("shop", config);
    connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("shop", 1, "not running");
    awaitSlotActive(pg, "shop_slot");

    pg.execute(
        "INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace')",
        "INSERT INTO orders VALUES (10, 1, 12.50)",
        "UPDATE customers SET name = 'Ada L.' WHERE id = 1",
        "DELETE FROM customers WHERE id = 2",
        "TRUNCATE orders");

    // customers: 2 inserts, 1 update, 1 delete + its tombstone
    List<JsonNode> customers =
        ConnectClusters.values(connect.kafka().consume(5, TIMEOUT_MS, "shop.public.customers"));
    assertEquals(5, customers.size());
    assertEquals("c", customers.get(0).get("op").asText());
    assertEquals(1, customers.get(0).get("after").get("id").asInt());
    assertEquals("Ada", customers.get(0).get("after").get("name").asText());
    assertEquals("c", customers.get(1).get("op").asText());
    assertEquals("Grace", customers.get(1).get("after").get("name").asText());
    assertEquals("u", customers.get(2).get("op").asText());
    assertEquals("Ada L.", customers.get(2).get("after").get("name").asText());
    assertEquals("d", customers.get(3).get("op").asText());
    assertEquals(2, customers.get(3).get("before").get("id").asInt());
    assertNull(customers.get(4), "a tombstone follows the delete");

    // orders: 1 insert, 1 truncate
    List<JsonNode> orders =
        ConnectClusters.values(connect.kafka().consume(2, TIMEOUT_MS, "shop.public.orders"));
    assertEquals("c", orders.get(0).get("op").asText());
    assertEquals(10, orders.get(0).get("after").get("id").asLong());
    assertEquals("t", orders.get(1).get("op").asText());

    // the keys are the primary keys
    ConsumerRecords<byte[], byte[]> raw =
        connect.kafka().consume(5, TIMEOUT_MS, "shop.public.customers");
    List<Integer> keys = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> r : raw) {
      keys.add(ConnectClusters.parse(r.key()).get("id").asInt());
    }
    assertEquals(List.of(1, 2, 1, 2, 2), keys);

    // Connect's offsets name the slot and hold the position after the last change
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .ignoreExceptions()
        .untilAsserted(
            () -> {
              var offsets = connect.connectorOffsets("shop").offsets();
              assertEquals(1, offsets.size());
              assertEquals(
                  Map.of("server", "shop", "database", "postgres", "slot", "shop_slot"),
                  offsets.get(0).partition());
              long committed = ((Number) offsets.get(0).offset().get("lsn")).longValue();
              long current =
                  Long.parseLong(
                      pg.queryString("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint"));
              assertTrue(committed > 0 && committed <= current, "offset lsn " + committed);
              assertFalse(offsets.get(0).offset().containsKey("tx_end"));
              assertEquals("shop", offsets.get(0).offset().get("publication"));
            });
    connect.deleteConnector("shop");
    connect.assertions().assertConnectorDoesNotExist("shop", "not deleted");
  }

  @Test
  void restartsOfTheConnectorAndTheTaskResumeWithoutLossOrRepeat(EmbeddedPostgresServer pg)
      throws Exception {
    Map<String, String> config = ConnectClusters.connector(pg, "rs", "restart_slot");
    config.put("publication.name", "restart_pub");
    connect.configureConnector("rs", config);
    connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("rs", 1, "not running");
    awaitSlotActive(pg, "restart_slot");
    pg.execute("INSERT INTO restarts SELECT g FROM generate_series(1, 100) g");
    connect.kafka().consume(100, TIMEOUT_MS, "rs.public.restarts");

    connect.restartTask("rs", 0);
    connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("rs", 1, "not running");
    awaitSlotActive(pg, "restart_slot");
    pg.execute("INSERT INTO restarts SELECT g FROM generate_series(101, 200) g");

    connect.restartConnectorAndTasks("rs", false, true, false);
    connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("rs", 1, "not running");
    awaitSlotActive(pg, "restart_slot");
    pg.execute("INSERT INTO restarts SELECT g FROM generate_series(201, 300) g");

    ConsumerRecords<byte[], byte[]> all =
        connect.kafka().consume(300, TIMEOUT_MS, "rs.public.restarts");
    Map<Integer, Integer> seen = new HashMap<>();
    for (JsonNode v : ConnectClusters.values(all)) {
      seen.merge(v.get("after").get("id").asInt(), 1, Integer::sum);
    }
    for (int id = 1; id <= 300; id++) {
      assertEquals(1, seen.getOrDefault(id, 0), "row " + id + " seen once");
    }
    // graceful stops commit the offsets: nothing beyond the 300 changes is in the topic
    long end =
        connect
            .kafka()
            .endOffset(new org.apache.kafka.common.TopicPartition("rs.public.restarts", 0));
    assertEquals(300, end);

    // the slot follows Connect's offsets, never ahead of them
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .ignoreExceptions()
        .untilAsserted(
            () -> {
              long committed =
                  ((Number) connect.connectorOffsets("rs").offsets().get(0).offset().get("lsn"))
                      .longValue();
              long confirmed =
                  Long.parseLong(
                      pg.queryString(
                          "SELECT (confirmed_flush_lsn - '0/0'::pg_lsn)::bigint FROM"
                              + " pg_replication_slots WHERE slot_name = 'restart_slot'"));
              assertTrue(confirmed <= committed, confirmed + " > " + committed);
              assertEquals(committed, confirmed, "the slot catches up with the offsets");
            });

    // KIP-875: offsets altered over REST are checked by the connector
    connect.stopConnector("rs");
    connect.assertions().assertConnectorIsStopped("rs", "not stopped");
    Map<String, String> partition =
        Map.of("server", "rs", "database", "postgres", "slot", "restart_slot");
    Exception malformed =
        org.junit.jupiter.api.Assertions.assertThrows(
            Exception.class,
            () -> connect.alterSourceConnectorOffset("rs", partition, Map.of("lsn", "yesterday")));
    assertTrue(malformed.getMessage().contains("lsn = yesterday"), malformed.getMessage());
    Exception foreign =
        org.junit.jupiter.api.Assertions.assertThrows(
            Exception.class,
            () ->
                connect.alterSourceConnectorOffset(
                    "rs",
                    Map.of("server", "rs", "database", "postgres", "slot", "another_slot"),
                    Map.of("lsn", 1L)));
    assertTrue(foreign.getMessage().contains("is not this connector's"), foreign.getMessage());
    connect.deleteConnector("rs");
  }

  @Test
  void debeziumsExtractNewRecordStateRunsAsATransformOfTheConnector(EmbeddedPostgresServer pg)
      throws Exception {
    Map<String, String> config = ConnectClusters.connector(pg, "flat", "flat_slot");
    config.put("publication.name", "flat_pub");
    config.put("transforms", "unwrap");
    config.put("transforms.unwrap.type", "io.debezium.transforms.ExtractNewRecordState");
    connect.configureConnector("flat", config);
    connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("flat", 1, "not running");
    awaitSlotActive(pg, "flat_slot");
    pg.execute(
        "INSERT INTO flat VALUES (1, 'a'), (2, 'x')",
        "UPDATE flat SET note = 'b' WHERE id = 1",
        "DELETE FROM flat WHERE id = 2",
        "TRUNCATE flat",
        "INSERT INTO flat VALUES (3, 'after')");
    ConsumerRecords<byte[], byte[]> records =
        connect.kafka().consume(5, TIMEOUT_MS, "flat.public.flat");
    List<String> seen = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> r : records) {
      seen.add(
          ConnectClusters.parse(r.key()).get("id").asInt()
              + "="
              + (r.value() == null ? "null" : ConnectClusters.parse(r.value()).toString()));
    }
    // the new row state; the delete as a tombstone (the connector's own one and the truncate
    // dropped by the transform's defaults)
    assertEquals(
        List.of(
            "1={\"id\":1,\"note\":\"a\"}",
            "2={\"id\":2,\"note\":\"x\"}",
            "1={\"id\":1,\"note\":\"b\"}",
            "2=null",
            "3={\"id\":3,\"note\":\"after\"}"),
        seen);
    connect.deleteConnector("flat");
  }

  @Test
  void aSlotDroppedBehindTheConnectorsBackFailsTheTaskLoudly(EmbeddedPostgresServer pg)
      throws Exception {
    Map<String, String> config = ConnectClusters.connector(pg, "dr", "dropped_slot");
    config.put("publication.name", "dropped_pub");
    connect.configureConnector("dr", config);
    connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("dr", 1, "not running");
    awaitSlotActive(pg, "dropped_slot");
    pg.execute("INSERT INTO dropped SELECT g FROM generate_series(1, 10) g");
    connect.kafka().consume(10, TIMEOUT_MS, "dr.public.dropped");
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .ignoreExceptions()
        .until(
            () ->
                ((Number) connect.connectorOffsets("dr").offsets().get(0).offset().get("lsn"))
                        .longValue()
                    > 0);
    connect.stopConnector("dr");
    connect.assertions().assertConnectorIsStopped("dr", "not stopped");
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                "false"
                    .equals(
                        pg.queryString(
                            "SELECT active::text FROM pg_replication_slots WHERE slot_name ="
                                + " 'dropped_slot'")));
    pg.execute("SELECT pg_drop_replication_slot('dropped_slot')");
    connect.resumeConnector("dr");
    Awaitility.await()
        .atMost(Duration.ofSeconds(60))
        .ignoreExceptions()
        .until(() -> "FAILED".equals(connect.connectorStatus("dr").tasks().get(0).state()));
    String trace = connect.connectorStatus("dr").tasks().get(0).trace();
    assertTrue(trace.contains("replication slot \"dropped_slot\" does not exist"), trace);
    assertTrue(trace.contains("slot.trust.position=true"), trace);
    assertEquals(
        "0",
        pg.queryString(
            "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'dropped_slot'"),
        "no new slot was created past the lost changes");
    connect.deleteConnector("dr");
  }

  /**
   * The library's watermark moves past the newest record when only unpublished tables change (and
   * with events that make no record); with heartbeats off no record carries that position into
   * Connect's offsets, so the slot must stay at the offsets, or a restarted task finds the slot
   * ahead of them and refuses to start.
   */
  @Test
  void theSlotNeverPassesConnectsOffsetsWhenOnlyUnpublishedTablesChange(EmbeddedPostgresServer pg)
      throws Exception {
    Map<String, String> config = ConnectClusters.connector(pg, "quiet", "quiet_slot");
    config.put("publication.name", "quiet_pub");
    config.put("heartbeat.interval.ms", "0");
    config.put("status.update.interval.ms", "100");
    connect.configureConnector("quiet", config);
    connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("quiet", 1, "not running");
    awaitSlotActive(pg, "quiet_slot");
    pg.execute("INSERT INTO quiet VALUES (1)");
    connect.kafka().consume(1, TIMEOUT_MS, "quiet.public.quiet");
    long offsetLsn =
        Awaitility.await()
            .atMost(Duration.ofSeconds(30))
            .ignoreExceptions()
            .until(() -> offsetLsn("quiet"), lsn -> lsn > 0);
    for (int i = 0; i < 5; i++) {
      pg.execute("INSERT INTO unpublished SELECT g FROM generate_series(1, 2000) g");
    }
    // the slot has caught up with the unpublished changes once its walsender's state says so;
    // then several offset commits (1 s apart) and status updates (100 ms) pass
    String written = pg.queryString("SELECT pg_current_wal_lsn()::text");
    String since = pg.queryString("SELECT now()::text");
    Awaitility.await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                "true"
                    .equals(
                        pg.queryString(
                            "SELECT coalesce((SELECT r.sent_lsn >= '"
                                + written
                                + "'::pg_lsn AND r.reply_time > '"
                                + since
                                + "'::timestamptz + interval '3 seconds' FROM pg_stat_replication"
                                + " r JOIN pg_replication_slots s ON s.active_pid = r.pid WHERE"
                                + " s.slot_name = 'quiet_slot')::text, 'false')")));
    assertEquals(offsetLsn, offsetLsn("quiet"), "no record moved Connect's offsets");
    long confirmed =
        Long.parseLong(
            pg.queryString(
                "SELECT (confirmed_flush_lsn - '0/0'::pg_lsn)::bigint::text FROM"
                    + " pg_replication_slots WHERE slot_name = 'quiet_slot'"));
    assertTrue(
        confirmed <= offsetLsn,
        "confirmed_flush_lsn " + confirmed + " passed Connect's offsets at " + offsetLsn);
    connect.restartTask("quiet", 0);
    pg.execute("INSERT INTO quiet VALUES (2)");
    List<Integer> ids = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> r :
        connect.kafka().consume(2, TIMEOUT_MS, "quiet.public.quiet")) {
      ids.add(ConnectClusters.parse(r.value()).get("after").get("id").asInt());
    }
    assertEquals(List.of(1, 2), ids, "the restarted task streams on from its offsets");
    assertEquals("RUNNING", connect.connectorStatus("quiet").tasks().get(0).state());
    connect.deleteConnector("quiet");
  }

  private static long offsetLsn(String connector) {
    return ((Number) connect.connectorOffsets(connector).offsets().get(0).offset().get("lsn"))
        .longValue();
  }

  @Test
  void refusesBadConfigsWithAMessagePerField(EmbeddedPostgresServer pg) throws Exception {
    Map<String, String> bad = ConnectClusters.connector(pg, "bad prefix!", "Bad-Slot");
    bad.put("database.port", "70000");
    bad.put("snapshot.mode", "sometimes");
    bad.remove("database.hostname");
    ConfigInfos infos =
        connect.validateConnectorConfig(DatumPostgresConnector.class.getSimpleName(), bad);
    Map<String, List<String>> errors = errors(infos);
    assertEquals(5, infos.errorCount(), errors.toString());
    assertTrue(
        errors.get("topic.prefix").get(0).contains("characters Kafka allows"), errors.toString());
    assertTrue(errors.get("slot.name").get(0).contains("lower-case letters"), errors.toString());
    assertTrue(errors.get("database.port").get(0).contains("65535"), errors.toString());
    assertTrue(
        errors.get("snapshot.mode").get(0).contains("unknown snapshot mode 'sometimes'"),
        errors.toString());
    assertTrue(
        errors.get("database.hostname").get(0).contains("Missing required"), errors.toString());

    Map<String, String> wrongPassword = ConnectClusters.connector(pg, "ok", "ok_slot");
    wrongPassword.put("database.user", "no_such_user");
    wrongPassword.put("database.password", "not-the-password");
    Map<String, List<String>> loginErrors =
        errors(
            connect.validateConnectorConfig(
                DatumPostgresConnector.class.getSimpleName(), wrongPassword));
    assertTrue(
        loginErrors.get("database.password").get(0).contains("SQLSTATE 28000"),
        loginErrors.toString());
    assertFalse(
        loginErrors.get("database.password").get(0).contains("not-the-password"),
        "the password is never shown");

    Map<String, String> filtered = ConnectClusters.connector(pg, "ok", "ok_slot");
    filtered.put("publication.autocreate.mode", "filtered");
    Map<String, List<String>> crossErrors =
        errors(
            connect.validateConnectorConfig(
                DatumPostgresConnector.class.getSimpleName(), filtered));
    assertTrue(
        crossErrors.get("table.include.list").get(0).contains("needs the tables"),
        crossErrors.toString());

    Map<String, String> typos = ConnectClusters.connector(pg, "ok", "ok_slot");
    typos.put("database.port", "abc");
    typos.put("table.exclude.list", "public.secret");
    typos.put("slot.nmae", "x");
    typos.put("driver.ApplicationName", "fine");
    typos.put("topic.creation.default.replication.factor", "1");
    Map<String, List<String>> typoErrors =
        errors(
            connect.validateConnectorConfig(DatumPostgresConnector.class.getSimpleName(), typos));
    assertEquals(
        Set.of("database.port", "table.exclude.list", "slot.nmae"),
        typoErrors.keySet(),
        typoErrors.toString());
    assertEquals(1, typoErrors.get("database.port").size(), typoErrors.toString());
    assertTrue(
        typoErrors.get("table.exclude.list").get(0).contains("not an option of this connector"),
        typoErrors.toString());

    pg.execute("CREATE ROLE cannot_replicate LOGIN PASSWORD 'pw'");
    Map<String, String> server = ConnectClusters.connector(pg, "ok", "ok_slot");
    server.put("database.user", "cannot_replicate");
    server.put("database.password", "pw");
    server.put("publication.name", "not_there_yet");
    server.put("publication.autocreate.mode", "filtered");
    server.put("table.include.list", "public.no_such_table,public.orders");
    Map<String, List<String>> serverErrors =
        errors(
            connect.validateConnectorConfig(DatumPostgresConnector.class.getSimpleName(), server));
    assertTrue(
        serverErrors.get("database.user").get(0).contains("WITH REPLICATION"),
        serverErrors.toString());
    assertEquals(
        List.of(
            "no such table in database postgres: public.no_such_table (names are schema.table or"
                + " table for schema public, case-sensitive; double-quote a part as in SQL)"),
        serverErrors.get("table.include.list"),
        serverErrors.toString());

    Map<String, String> disabled = ConnectClusters.connector(pg, "ok", "ok_slot");
    disabled.put("publication.name", "not_there_yet");
    disabled.put("publication.autocreate.mode", "disabled");
    assertTrue(
        errors(
                connect.validateConnectorConfig(
                    DatumPostgresConnector.class.getSimpleName(), disabled))
            .get("publication.name")
            .get(0)
            .contains("does not exist"));

    Map<String, String> noHost = ConnectClusters.connector(pg, "ok", "ok_slot");
    noHost.put("database.hostname", "no-such-host.invalid");
    String hostError =
        errors(
                connect.validateConnectorConfig(
                    DatumPostgresConnector.class.getSimpleName(), noHost))
            .get("database.hostname")
            .get(0);
    assertTrue(hostError.contains("unknown host no-such-host.invalid"), hostError);

    Map<String, String> good = ConnectClusters.connector(pg, "ok", "ok_slot");
    assertEquals(
        0,
        connect
            .validateConnectorConfig(DatumPostgresConnector.class.getSimpleName(), good)
            .errorCount());
  }

  private static Map<String, List<String>> errors(ConfigInfos infos) {
    Map<String, List<String>> out = new HashMap<>();
    for (ConfigInfo info : infos.configs()) {
      if (!info.configValue().errors().isEmpty()) {
        out.put(info.configValue().name(), info.configValue().errors());
      }
    }
    return out;
  }

  static void awaitSlotActive(EmbeddedPostgresServer pg, String slot) {
    Awaitility.await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                "true"
                    .equals(
                        pg.queryString(
                            "SELECT coalesce((SELECT active FROM pg_replication_slots WHERE"
                                + " slot_name = '"
                                + slot
                                + "')::text, 'false')")));
  }
}

package io.datum.cdc.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.postgresql.Driver;
import org.postgresql.PGConnection;
import org.postgresql.PGProperty;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;

@EmbeddedPostgresTest(
    settings = {"cluster_name=datum cdc's test", "logical_decoding_work_mem=64kB"},
    walSenderTimeoutMillis = 15_000)
class EmbeddedPostgresExtensionTest {

  private static EmbeddedPostgresServer fromBeforeAll;

  private final EmbeddedPostgresServer fromConstructor;
  private EmbeddedPostgresServer fromBeforeEach;

  EmbeddedPostgresExtensionTest(EmbeddedPostgresServer server) {
    this.fromConstructor = server;
  }

  @BeforeAll
  static void beforeAll(EmbeddedPostgresServer server) throws SQLException {
    fromBeforeAll = server;
    server.execute(
        "CREATE TABLE orders (id int PRIMARY KEY, note text)",
        "CREATE PUBLICATION orders_pub FOR TABLE orders");
  }

  @BeforeEach
  void beforeEach(EmbeddedPostgresServer server) {
    fromBeforeEach = server;
  }

  @AfterAll
  static void afterAll(EmbeddedPostgresServer server) {
    assertSame(fromBeforeAll, server);
    assertTrue(server.isRunning());
  }

  @Test
  void firstTestGetsTheClassServer(EmbeddedPostgresServer server) {
    assertNotNull(fromBeforeAll);
    assertSame(fromBeforeAll, server);
    assertSame(fromBeforeAll, fromConstructor);
    assertSame(fromBeforeAll, fromBeforeEach);
    assertTrue(server.isRunning());
  }

  @Test
  void secondTestGetsTheSameServer(EmbeddedPostgresServer server) {
    assertSame(fromBeforeAll, server);
    assertSame(fromBeforeAll, fromConstructor);
    assertSame(fromBeforeAll, fromBeforeEach);
  }

  @Test
  void serverIsSetUpForLogicalReplicationAndCrashSafe(EmbeddedPostgresServer server)
      throws SQLException {
    assertEquals("logical", server.queryString("SHOW wal_level"));
    assertEquals("20", server.queryString("SHOW max_replication_slots"));
    assertEquals("20", server.queryString("SHOW max_wal_senders"));
    assertEquals("15s", server.queryString("SHOW wal_sender_timeout"));
    assertEquals("off", server.queryString("SHOW fsync")); // the testkit's TEST_SETTINGS
    assertEquals("on", server.queryString("SHOW synchronous_commit"));
    assertEquals("64kB", server.queryString("SHOW logical_decoding_work_mem"));
    assertEquals("datum cdc's test", server.queryString("SHOW cluster_name"));
    assertEquals(
        "17", server.queryString("SELECT current_setting('server_version_num')::int / 10000"));
    assertEquals(EmbeddedPostgresServer.USER, server.queryString("SELECT current_user"));
  }

  @Test
  void jdbcUrlAndCredentialsWork(EmbeddedPostgresServer server) throws SQLException {
    assertEquals(
        "jdbc:postgresql://localhost:" + server.port() + "/postgres?user=postgres",
        server.jdbcUrl());
    Properties properties = new Properties();
    properties.setProperty("user", server.user());
    properties.setProperty("password", server.password());
    try (Connection connection = new Driver().connect(server.jdbcUrl(), properties);
        Statement statement = connection.createStatement();
        ResultSet rows = statement.executeQuery("SELECT current_database()")) {
      rows.next();
      assertEquals("postgres", rows.getString(1));
    }
  }

  @Test
  void databasesCanBeCreatedAndUsed(EmbeddedPostgresServer server) throws SQLException {
    server.createDatabase("Other DB");
    try {
      server.executeIn("Other DB", "CREATE TABLE t (id int)", "INSERT INTO t VALUES (1)");
      try (Connection connection = server.getConnection("Other DB");
          Statement statement = connection.createStatement();
          ResultSet rows = statement.executeQuery("SELECT current_database(), count(*) FROM t")) {
        rows.next();
        assertEquals("Other DB", rows.getString(1));
        assertEquals(1, rows.getInt(2));
      }
    } finally {
      server.dropDatabase("Other DB");
    }
  }

  @Test
  void logicalSlotAndPublicationCanBeCreated(EmbeddedPostgresServer server) throws SQLException {
    server.execute("SELECT pg_create_logical_replication_slot('t', 'pgoutput')");
    try {
      assertEquals(
          "pgoutput",
          server.queryString("SELECT plugin FROM pg_replication_slots WHERE slot_name = 't'"));
      assertEquals(
          "t",
          server.queryString(
              "SELECT count(*) > 0 FROM pg_publication WHERE pubname = 'orders_pub'"));
    } finally {
      server.execute("SELECT pg_drop_replication_slot('t')");
    }
  }

  @Test
  void replicationConnectionWithExplicitPropertiesOpens(EmbeddedPostgresServer server)
      throws SQLException {
    Properties properties = new Properties();
    PGProperty.USER.set(properties, server.user());
    PGProperty.PASSWORD.set(properties, server.password());
    PGProperty.REPLICATION.set(properties, "database");
    PGProperty.PREFER_QUERY_MODE.set(properties, "simple");
    PGProperty.ASSUME_MIN_SERVER_VERSION.set(properties, "10");
    try (Connection connection = new Driver().connect(server.jdbcUrl(), properties);
        Statement statement = connection.createStatement();
        ResultSet rows = statement.executeQuery("IDENTIFY_SYSTEM")) {
      assertTrue(rows.next());
      assertEquals("postgres", rows.getString("dbname"));
    }
  }

  @Test
  void replicationStreamDeliversPgoutputMessages(EmbeddedPostgresServer server) throws Exception {
    server.execute("SELECT pg_create_logical_replication_slot('stream_test', 'pgoutput')");
    try {
      server.execute("INSERT INTO orders VALUES (1, 'first')");
      try (Connection connection = server.getReplicationConnection("postgres")) {
        PGReplicationStream stream =
            connection
                .unwrap(PGConnection.class)
                .getReplicationAPI()
                .replicationStream()
                .logical()
                .withSlotName("stream_test")
                .withStartPosition(LogSequenceNumber.valueOf(0L))
                .withSlotOption("proto_version", "1")
                .withSlotOption("publication_names", "orders_pub")
                .withStatusInterval(1, TimeUnit.SECONDS)
                .start();
        StringBuilder kinds = new StringBuilder();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (kinds.indexOf("C") < 0 && System.nanoTime() < deadline) {
          ByteBuffer message = stream.readPending();
          if (message == null) {
            Thread.sleep(20);
            continue;
          }
          kinds.append((char) message.get(message.position()));
        }
        stream.close();
        // Begin, Relation, Insert, Commit
        assertEquals("BRIC", kinds.toString());
      }
    } finally {
      server.execute("SELECT pg_drop_replication_slot('stream_test')");
    }
  }

  @Nested
  class NestedTests {
    @Test
    void nestedClassSharesTheServer(EmbeddedPostgresServer server) {
      assertSame(fromBeforeAll, server);
    }
  }
}

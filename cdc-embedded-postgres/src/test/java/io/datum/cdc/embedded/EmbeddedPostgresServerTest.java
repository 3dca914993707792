package io.datum.cdc.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The server without JUnit's help, as a CLI uses it; one server for the class. */
@Tag("postgres")
class EmbeddedPostgresServerTest {

  private static EmbeddedPostgresServer server;

  @BeforeAll
  static void start() {
    long started = System.nanoTime();
    server = EmbeddedPostgresServer.builder().walSenderTimeout(Duration.ofSeconds(5)).start();
    System.out.printf(
        "embedded PostgreSQL first start (extract if needed + initdb + start): %d ms%n",
        (System.nanoTime() - started) / 1_000_000);
  }

  @AfterAll
  static void close() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void restartKeepsDataPortAndSlots() throws SQLException {
    server.execute(
        "CREATE TABLE kept (id int PRIMARY KEY)",
        "INSERT INTO kept VALUES (1), (2)",
        "SELECT pg_create_logical_replication_slot('kept_slot', 'pgoutput')");
    int port = server.port();
    String url = server.jdbcUrl();
    Path data = server.dataDirectory();

    long started = System.nanoTime();
    server.restart();
    System.out.printf(
        "embedded PostgreSQL restart (fast shutdown + start): %d ms%n",
        (System.nanoTime() - started) / 1_000_000);

    assertTrue(server.isRunning());
    assertEquals(port, server.port());
    assertEquals(url, server.jdbcUrl());
    assertEquals(data, server.dataDirectory());
    assertEquals("2", server.queryString("SELECT count(*) FROM kept"));
    assertEquals(
        "pgoutput",
        server.queryString(
            "SELECT plugin FROM pg_replication_slots WHERE slot_name = 'kept_slot'"));
    assertEquals("5s", server.queryString("SHOW wal_sender_timeout"));

    server.execute("INSERT INTO kept VALUES (3)");
    started = System.nanoTime();
    server.restart(EmbeddedPostgresServer.ShutdownMode.IMMEDIATE);
    System.out.printf(
        "embedded PostgreSQL crash restart (immediate shutdown + recovery): %d ms%n",
        (System.nanoTime() - started) / 1_000_000);
    assertEquals(port, server.port());
    assertEquals("3", server.queryString("SELECT count(*) FROM kept"));
    assertEquals(
        "pgoutput",
        server.queryString(
            "SELECT plugin FROM pg_replication_slots WHERE slot_name = 'kept_slot'"));
    server.execute("SELECT pg_drop_replication_slot('kept_slot')", "DROP TABLE kept");
  }

  @Test
  void restartBreaksOpenConnections() throws SQLException {
    try (Connection connection = server.getConnection()) {
      server.restart();
      assertThrows(SQLException.class, () -> connection.createStatement().execute("SELECT 1"));
    }
    assertEquals("1", server.queryString("SELECT 1"));
  }

  @Test
  void stopThenStartServesTheSameData() throws SQLException {
    server.execute("CREATE TABLE stopped (id int)", "INSERT INTO stopped VALUES (7)");
    int port = server.port();
    server.stop();
    assertFalse(server.isRunning());
    assertThrows(SQLException.class, () -> server.getConnection().close());
    server.stop(); // no-op
    server.start();
    assertTrue(server.isRunning());
    assertEquals(port, server.port());
    assertEquals("7", server.queryString("SELECT id FROM stopped"));
    server.execute("DROP TABLE stopped");
  }

  @Test
  void closeDeletesTheTemporaryDirectoryAndIsFinal() throws SQLException {
    EmbeddedPostgresServer other = EmbeddedPostgresServer.builder().build();
    assertThrows(IllegalStateException.class, other::port);
    other.start();
    Path base = other.baseDirectory();
    assertTrue(Files.isDirectory(base.resolve("data")));
    assertTrue(Files.isRegularFile(other.logFile()));
    assertEquals("1", other.queryString("SELECT 1"));
    other.close();
    other.close(); // idempotent
    assertFalse(other.isRunning());
    assertFalse(Files.exists(base));
    assertThrows(IllegalStateException.class, other::start);
    assertThrows(IllegalStateException.class, other::restart);
  }

  @Test
  void givenBaseDirectoryIsKeptAndReused(@TempDir Path base) throws SQLException {
    try (EmbeddedPostgresServer first =
        EmbeddedPostgresServer.builder().baseDirectory(base).start()) {
      assertEquals(base.toAbsolutePath(), first.baseDirectory());
      first.execute("CREATE TABLE persisted (id int)", "INSERT INTO persisted VALUES (42)");
    }
    assertTrue(Files.isRegularFile(base.resolve("data").resolve("PG_VERSION")));
    try (EmbeddedPostgresServer second =
        EmbeddedPostgresServer.builder().baseDirectory(base).start()) {
      assertEquals("42", second.queryString("SELECT id FROM persisted"));
    }
    assertTrue(Files.isDirectory(base.resolve("data")));
  }

  @Test
  void aServerWithoutFsyncStartsFromACopyOfTheClusterTemplate() throws Exception {
    try (EmbeddedPostgresServer quick =
        EmbeddedPostgresServer.builder().setting("fsync", "off").start()) {
      assertEquals("off", quick.queryString("SHOW fsync"));
      quick.execute("CREATE TABLE in_the_copy (id int)");
      assertFalse(Files.exists(quick.dataDirectory().resolve("datum-cdc-template")));
      Path binaries = PostgresInstallation.of(quick.majorVersion()).directory();
      try (var siblings = Files.list(binaries.getParent())) {
        assertTrue(
            siblings.anyMatch(
                p ->
                    Files.isDirectory(p)
                        && p.getFileName()
                            .toString()
                            .startsWith(binaries.getFileName() + ".cluster-")),
            "the template next to " + binaries);
      }
    }
    try (EmbeddedPostgresServer next =
        EmbeddedPostgresServer.builder().setting("fsync", "off").start()) {
      assertEquals(
          "0",
          next.queryString("SELECT count(*) FROM pg_class WHERE relname = 'in_the_copy'"),
          "each server gets a copy of its own");
    }
  }

  @Test
  void hurrySlotSyncIsForStandbysOnly() {
    IllegalStateException e = assertThrows(IllegalStateException.class, server::hurrySlotSync);
    assertTrue(e.getMessage().contains("not a standby made by createStandby"), e.getMessage());
  }

  @Test
  void settingsWithSpacesAndQuotesReachTheServerIntact() throws SQLException {
    try (EmbeddedPostgresServer other =
        EmbeddedPostgresServer.builder().setting("cluster_name", "it's a $HOME test").start()) {
      assertEquals("it's a $HOME test", other.queryString("SHOW cluster_name"));
      assertEquals("0", other.queryString("SELECT extract(timezone FROM now())::int"));
      assertEquals("on", other.queryString("SHOW fsync"));
    }
  }

  @Test
  void theBinariesAreUnpackedOnceAndServedFromTheirOwnDirectory() {
    Path first = PostgresInstallation.of(EmbeddedPostgresServer.DEFAULT_MAJOR_VERSION).directory();
    Path again = PostgresInstallation.of(EmbeddedPostgresServer.DEFAULT_MAJOR_VERSION).directory();
    assertEquals(first, again);
    assertTrue(Files.isExecutable(first.resolve("bin").resolve("postgres")), first::toString);
    assertTrue(Files.isRegularFile(first.resolve(".complete")), first::toString);
  }

  @Test
  void builderRejectsBadInput() {
    EmbeddedPostgresServer.Builder builder = EmbeddedPostgresServer.builder();
    assertThrows(IllegalArgumentException.class, () -> builder.setting("bad name", "x"));
    assertThrows(IllegalArgumentException.class, () -> builder.setting("x;rm", "x"));
    assertThrows(NullPointerException.class, () -> builder.setting("fsync", null));
    assertThrows(IllegalArgumentException.class, () -> builder.port(70000));
    assertThrows(
        IllegalArgumentException.class, () -> builder.walSenderTimeout(Duration.ofSeconds(-1)));
    assertThrows(IllegalArgumentException.class, () -> builder.startupTimeout(Duration.ZERO));
  }

  @Test
  void shellQuotingKeepsValuesIntact() {
    assertEquals("64kB", PostgresInstallation.shellQuote("64kB"));
    assertEquals("'a b'", PostgresInstallation.shellQuote("a b"));
    assertEquals("'it'\\''s'", PostgresInstallation.shellQuote("it's"));
    assertEquals("'$HOME'", PostgresInstallation.shellQuote("$HOME"));
  }
}

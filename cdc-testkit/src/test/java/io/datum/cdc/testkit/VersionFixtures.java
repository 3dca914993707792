package io.datum.cdc.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.BeforeClassTemplateInvocationCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.postgresql.PGConnection;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;

/**
 * Test classes that {@link PostgresVersionsTest} runs through the JUnit launcher, so that it can
 * check what happened across all the versions; surefire does not run them itself (their names do
 * not end in Test).
 */
final class VersionFixtures {

  private VersionFixtures() {}

  /** What one version's invocation of {@link Smoke} saw. */
  static final class Observation {
    final int version;
    volatile EmbeddedPostgresServer server;
    volatile long firstStartMillis = -1;
    volatile long immediateRestartMillis = -1;
    volatile String serverVersion;
    volatile Path binaries;
    volatile String changeSeen;

    Observation(int version) {
      this.version = version;
    }
  }

  /** Keyed by major version, in the order the invocations ran. */
  static final Map<Integer, Observation> SEEN = new ConcurrentHashMap<>();

  static final List<Integer> ORDER = new CopyOnWriteArrayList<>();

  /**
   * The smoke test: on each version, a server of that version set up for logical replication, whose
   * pgoutput slot delivers an insert, and which comes back from a crash with its slot.
   */
  @ExtendWith(Smoke.FirstStart.class)
  @EmbeddedPostgresVersions({14, 15, 16, 17, 18})
  @EmbeddedPostgresTest(
      walSenderTimeoutMillis = 10_000,
      settings = "logical_decoding_work_mem=64kB")
  static class Smoke {

    /**
     * Starts each invocation's server before its tests, as an extension may through {@link
     * EmbeddedPostgresExtension#server(ExtensionContext)}, and times that first start.
     */
    static final class FirstStart implements BeforeClassTemplateInvocationCallback {
      @Override
      public void beforeClassTemplateInvocation(ExtensionContext context) throws Exception {
        long started = System.nanoTime();
        EmbeddedPostgresServer pg = new EmbeddedPostgresExtension().server(context);
        long millis = (System.nanoTime() - started) / 1_000_000;
        Observation seen = new Observation(pg.majorVersion());
        seen.server = pg;
        seen.firstStartMillis = millis;
        seen.serverVersion = pg.queryString("SHOW server_version");
        seen.binaries = binariesDirectory(pg);
        if (SEEN.putIfAbsent(pg.majorVersion(), seen) != null) {
          throw new AssertionError("a second invocation for PostgreSQL " + pg.majorVersion());
        }
        ORDER.add(pg.majorVersion());
      }
    }

    private final EmbeddedPostgresServer fromConstructor;

    Smoke(EmbeddedPostgresServer pg) {
      this.fromConstructor = pg;
    }

    @BeforeEach
    void sameServerAsTheExtensionStarted(EmbeddedPostgresServer pg) {
      assertSame(SEEN.get(pg.majorVersion()).server, pg);
      assertSame(fromConstructor, pg);
    }

    @Test
    void serverRunsItsVersionSetUpForLogicalReplication(EmbeddedPostgresServer pg)
        throws Exception {
      int versionNum = Integer.parseInt(pg.queryString("SHOW server_version_num"));
      assertEquals(pg.majorVersion(), versionNum / 10000, "server_version_num " + versionNum);
      assertEquals("logical", pg.queryString("SHOW wal_level"));
      assertEquals("20", pg.queryString("SHOW max_replication_slots"));
      assertEquals("20", pg.queryString("SHOW max_wal_senders"));
      assertEquals("10s", pg.queryString("SHOW wal_sender_timeout"));
      assertEquals("off", pg.queryString("SHOW fsync"));
      assertEquals("on", pg.queryString("SHOW synchronous_commit"));
      assertEquals("64kB", pg.queryString("SHOW logical_decoding_work_mem"));
    }

    @Test
    void pgoutputSlotDeliversAnInsert(EmbeddedPostgresServer pg) throws Exception {
      String note = "on PostgreSQL " + pg.majorVersion();
      pg.execute(
          "CREATE TABLE smoke (id int PRIMARY KEY, note text)",
          "CREATE PUBLICATION smoke_pub FOR TABLE smoke",
          "SELECT pg_create_logical_replication_slot('smoke', 'pgoutput')",
          "INSERT INTO smoke VALUES (1, '" + note + "')");
      StringBuilder kinds = new StringBuilder();
      List<String> inserted = new ArrayList<>();
      String relation = null;
      try (Connection connection = pg.getReplicationConnection("postgres")) {
        PGReplicationStream stream =
            connection
                .unwrap(PGConnection.class)
                .getReplicationAPI()
                .replicationStream()
                .logical()
                .withSlotName("smoke")
                .withStartPosition(LogSequenceNumber.valueOf(0L))
                .withSlotOption("proto_version", "1")
                .withSlotOption("publication_names", "smoke_pub")
                .withStatusInterval(1, TimeUnit.SECONDS)
                .start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (kinds.indexOf("C") < 0) {
          assertTrue(
              System.nanoTime() < deadline,
              () -> "no Commit within 30 s; messages so far: " + kinds);
          ByteBuffer message = stream.readPending();
          if (message == null) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // poll; the deadline bounds it
            continue;
          }
          char kind = (char) message.get(message.position());
          kinds.append(kind);
          if (kind == 'R') {
            relation = relationName(message);
          } else if (kind == 'I') {
            inserted.addAll(insertedValues(message));
          }
        }
        stream.close();
      }
      pg.execute(
          "SELECT pg_drop_replication_slot('smoke')",
          "DROP PUBLICATION smoke_pub",
          "DROP TABLE smoke");
      assertEquals("BRIC", kinds.toString(), "Begin, Relation, Insert, Commit");
      assertEquals("public.smoke", relation);
      assertEquals(List.of("1", note), inserted);
      SEEN.get(pg.majorVersion()).changeSeen = String.join(",", inserted);
    }

    @Test
    void immediateRestartKeepsTheSlot(EmbeddedPostgresServer pg) throws Exception {
      pg.execute("SELECT pg_create_logical_replication_slot('kept', 'pgoutput')");
      long started = System.nanoTime();
      pg.restart(EmbeddedPostgresServer.ShutdownMode.IMMEDIATE);
      SEEN.get(pg.majorVersion()).immediateRestartMillis =
          (System.nanoTime() - started) / 1_000_000;
      assertEquals(
          "pgoutput",
          pg.queryString("SELECT plugin FROM pg_replication_slots WHERE slot_name = 'kept'"));
      assertEquals(
          pg.majorVersion(), Integer.parseInt(pg.queryString("SHOW server_version_num")) / 10000);
      pg.execute("SELECT pg_drop_replication_slot('kept')");
    }

    /** pgoutput Relation: 'R', relid i32, namespace str, name str, ... */
    private static String relationName(ByteBuffer message) {
      ByteBuffer b = message.slice();
      b.get();
      b.getInt();
      String namespace = cString(b);
      return namespace + "." + cString(b);
    }

    /** pgoutput Insert (protocol 1): 'I', relid i32, 'N', ncols i16, per column kind and value. */
    private static List<String> insertedValues(ByteBuffer message) {
      ByteBuffer b = message.slice();
      b.get();
      b.getInt();
      assertEquals('N', (char) b.get());
      int columns = b.getShort();
      List<String> values = new ArrayList<>();
      for (int i = 0; i < columns; i++) {
        char kind = (char) b.get();
        assertEquals('t', kind, "column " + i + " is not sent as text");
        byte[] text = new byte[b.getInt()];
        b.get(text);
        values.add(new String(text, StandardCharsets.UTF_8));
      }
      return values;
    }

    private static String cString(ByteBuffer b) {
      int start = b.position();
      while (b.get() != 0) {
        // up to the NUL
      }
      byte[] bytes = new byte[b.position() - start - 1];
      b.get(start, bytes);
      return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * The directory the postmaster's binary was unpacked to:
     * datum-cdc-postgres-binaries/NAME-VERSION-HASH.
     */
    private static Path binariesDirectory(EmbeddedPostgresServer pg) throws Exception {
      List<String> pid = Files.readAllLines(pg.dataDirectory().resolve("postmaster.pid"));
      String command =
          ProcessHandle.of(Long.parseLong(pid.get(0).trim()))
              .flatMap(p -> p.info().command())
              .orElseThrow(
                  () -> new AssertionError("no command line for the postmaster " + pid.get(0)));
      Path binary = Path.of(command);
      assertNotNull(binary.getParent());
      return binary.getParent().getParent(); // .../PG-hash/bin/postgres
    }
  }

  /** A class on the default version: records the version it got. */
  @EmbeddedPostgresTest
  static class Plain {
    @Test
    void recordsItsVersion(EmbeddedPostgresServer pg) {
      ORDER.add(pg.majorVersion());
    }
  }

  /** A version class on 17 only: records the versions it ran on. */
  @EmbeddedPostgresVersions(17)
  static class OnlyOn17 {
    @Test
    void recordsItsVersion(EmbeddedPostgresServer pg) {
      ORDER.add(pg.majorVersion());
    }
  }

  /** Lists a version twice. */
  @EmbeddedPostgresVersions({16, 16})
  static class DuplicateVersions {
    @Test
    void neverRuns(EmbeddedPostgresServer pg) {
      throw new AssertionError("ran on " + pg);
    }
  }

  /** A version this kit has no binaries for (13): fails with the dependency to add. */
  @EmbeddedPostgresTest(version = 13)
  static class NoBinaries {
    @Test
    void neverGetsAServer(EmbeddedPostgresServer pg) {
      throw new AssertionError("ran on " + pg);
    }
  }

  /** Asks for the server in a @BeforeAll, which runs once for all versions. */
  @EmbeddedPostgresVersions(17)
  static class ServerInBeforeAll {
    @BeforeAll
    static void tooEarly(EmbeddedPostgresServer pg) {
      throw new AssertionError("got " + pg);
    }

    @Test
    void neverRuns() {
      throw new AssertionError("ran");
    }
  }
}

package io.datum.cdc.cli;

import static io.datum.cdc.cli.PgcdcProcess.pgcdcInProcess;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcConnectionException;
import io.datum.cdc.CdcException;
import io.datum.cdc.CdcReplicationException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.cli.PgcdcProcess.Run;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each class of fault that retrying cannot heal, driven through each path it applies to (issue #26:
 * "a test table that drives each class through each path"): the library's start, {@code pgcdc
 * stream --retry-start} (also with each store that keeps files), and the one-shot commands {@code
 * status}, {@code slot drop} and {@code snapshot}. Each fails at once (no retry: within {@link
 * #AT_ONCE}, no "retrying in" line), with the exception type or exit code and the remedy of its
 * row. The connector's task is driven through the same classes in cdc-kafka-connect's {@code
 * ConnectFailureClassesTest}; a missing privilege on {@code pg_logical_emit_message} for {@code
 * pgcdc snapshot} in {@code SnapshotCommandsTest} (it takes EXECUTE from PUBLIC).
 */
@EmbeddedPostgresTest(settings = "max_replication_slots=6")
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class FailureClassesTest {

  /** A fault that cannot heal ends a path within this: no backoff, no retry. */
  private static final Duration AT_ONCE = Duration.ofSeconds(15);

  /** The slot the one-shot commands name. */
  private static final String SLOT = "fcl_slot";

  private static EmbeddedPostgresServer pg;

  /** A port nothing listened on when the class started. */
  private static int closedPort;

  @TempDir static Path dir;

  /** The faults, each a way to meet it. */
  enum Fault {
    /** A role that may not log in: SQLSTATE 28000. */
    AUTHENTICATION,
    /** A role without the REPLICATION attribute: SQLSTATE 42501. */
    PRIVILEGE,
    /** A JDBC URL naming no database of the server: SQLSTATE 3D000. */
    MISSING_DATABASE,
    /** A publication that does not exist, not to be created. */
    MISSING_PUBLICATION,
    /** A slot that does not exist, not to be created. */
    MISSING_SLOT,
    /** Every replication slot in use: SQLSTATE 53400. */
    SERVER_LIMIT,
    /**
     * A port nothing listens on: a fault that may pass, which a one-shot command reports as such
     * (exit 1, "could not be reached") without retrying; {@code --retry-start} waits for it ({@code
     * StreamOperationsTest}).
     */
    UNREACHABLE,
    /** A {@code file:} store path through a regular file (fails for root too, unlike chmod). */
    FILE_STORE_PATH,
    /** A {@code rocksdb:} store path through a regular file. */
    ROCKSDB_STORE_PATH,
    /** A {@code mapdb:} store path through a regular file. */
    MAPDB_STORE_PATH
  }

  /** The entry points. */
  enum Entry {
    LIBRARY_START,
    STREAM_RETRY_START,
    STATUS,
    SLOT_DROP,
    SNAPSHOT
  }

  @BeforeAll
  static void setUp(EmbeddedPostgresServer server) throws Exception {
    pg = server;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    Files.writeString(dir.resolve("a-file"), "a regular file, not a directory");
    pg.execute(
        "CREATE TABLE fcl_t (id int PRIMARY KEY)",
        "CREATE PUBLICATION fcl_pub FOR TABLE fcl_t",
        "CREATE ROLE fcl_nologin NOLOGIN",
        "CREATE ROLE fcl_plain LOGIN",
        "GRANT SELECT ON fcl_t TO fcl_plain",
        "SELECT pg_create_logical_replication_slot('" + SLOT + "', 'pgoutput')");
  }

  /**
   * The table: fault, entry point, expected exception type (library) or exit code (pgcdc), and the
   * texts the message must hold (the remedy).
   */
  static Stream<Arguments> table() {
    String auth = "authentication failed, which retrying cannot fix";
    String unreachable = "(the server could not be reached: check that it runs and the URL)";
    String notADirectory =
        "a-file/store: Not a directory (a part of the path is a regular file, not a directory:"
            + " choose another path)";
    String noDb = "[SQLSTATE 3D000]: the database named in the JDBC URL does not exist";
    return Stream.of(
        row(Fault.AUTHENTICATION, Entry.LIBRARY_START, CdcConfigurationException.class, auth),
        row(Fault.AUTHENTICATION, Entry.STREAM_RETRY_START, 2, auth, "--password-env"),
        row(Fault.AUTHENTICATION, Entry.STATUS, 2, auth, "check --user and the password"),
        row(Fault.AUTHENTICATION, Entry.SLOT_DROP, 2, auth, "--password-file"),
        row(Fault.AUTHENTICATION, Entry.SNAPSHOT, 2, auth, "~/.pgpass"),
        row(Fault.PRIVILEGE, Entry.LIBRARY_START, CdcReplicationException.class, "REPLICATION"),
        row(Fault.PRIVILEGE, Entry.STREAM_RETRY_START, 2, "REPLICATION"),
        row(
            Fault.PRIVILEGE,
            Entry.SLOT_DROP,
            2,
            "[SQLSTATE 42501]: the role lacks a privilege, which retrying cannot fix",
            "ALTER ROLE ... WITH REPLICATION"),
        row(Fault.MISSING_DATABASE, Entry.LIBRARY_START, CdcConfigurationException.class, noDb),
        row(Fault.MISSING_DATABASE, Entry.STREAM_RETRY_START, 2, noDb),
        row(Fault.MISSING_DATABASE, Entry.STATUS, 2, noDb),
        row(Fault.MISSING_DATABASE, Entry.SLOT_DROP, 2, noDb),
        row(Fault.MISSING_DATABASE, Entry.SNAPSHOT, 2, noDb),
        row(
            Fault.MISSING_PUBLICATION,
            Entry.LIBRARY_START,
            CdcReplicationException.class,
            "publication \"fcl_nopub\" does not exist"),
        row(
            Fault.MISSING_PUBLICATION,
            Entry.STREAM_RETRY_START,
            2,
            "publication \"fcl_nopub\" does not exist",
            "--create-publication"),
        row(
            Fault.MISSING_SLOT,
            Entry.LIBRARY_START,
            CdcReplicationException.class,
            "pg_create_logical_replication_slot('fcl_noslot', 'pgoutput')"),
        row(Fault.MISSING_SLOT, Entry.STREAM_RETRY_START, 2, "pgcdc --create-slot"),
        row(Fault.MISSING_SLOT, Entry.STATUS, 2, "replication slot \"fcl_noslot\" does not exist"),
        row(
            Fault.MISSING_SLOT,
            Entry.SLOT_DROP,
            2,
            "replication slot \"fcl_noslot\" does not exist"),
        row(Fault.MISSING_SLOT, Entry.SNAPSHOT, 2, "no replication slot \"fcl_noslot\""),
        row(
            Fault.SERVER_LIMIT,
            Entry.LIBRARY_START,
            CdcReplicationException.class,
            "[SQLSTATE 53400]",
            "raise max_replication_slots"),
        row(
            Fault.SERVER_LIMIT,
            Entry.STREAM_RETRY_START,
            2,
            "[SQLSTATE 53400]",
            "raise max_replication_slots"),
        row(
            Fault.UNREACHABLE,
            Entry.LIBRARY_START,
            CdcConnectionException.class,
            ":" + closedPort + " refused"),
        row(Fault.UNREACHABLE, Entry.STATUS, 1, unreachable),
        row(Fault.UNREACHABLE, Entry.SLOT_DROP, 1, unreachable),
        row(Fault.UNREACHABLE, Entry.SNAPSHOT, 1, unreachable),
        row(Fault.FILE_STORE_PATH, Entry.STREAM_RETRY_START, 1, notADirectory),
        row(Fault.ROCKSDB_STORE_PATH, Entry.STREAM_RETRY_START, 1, notADirectory),
        row(Fault.MAPDB_STORE_PATH, Entry.STREAM_RETRY_START, 1, notADirectory));
  }

  private static Arguments row(Fault fault, Entry entry, Object expected, String... texts) {
    return Arguments.of(fault, entry, expected, List.of(texts));
  }

  @ParameterizedTest(name = "{0} through {1}")
  @MethodSource("table")
  void failsAtOnceNamingTheRemedy(Fault fault, Entry entry, Object expected, List<String> texts)
      throws Exception {
    List<String> fillers = fault == Fault.SERVER_LIMIT ? fillSlots() : List.of();
    try {
      long start = System.nanoTime();
      String message =
          assertTimeoutPreemptively(
              AT_ONCE,
              () ->
                  entry == Entry.LIBRARY_START
                      ? library(fault, expected)
                      : pgcdc(fault, entry, expected),
              () -> fault + " through " + entry + " did not fail within " + AT_ONCE);
      for (String text : texts) {
        assertTrue(message.contains(text), fault + " through " + entry + ": " + message);
      }
      assertFalse(message.contains("retrying in"), message); // pgcdc --retry-start logs each retry
      assertTrue(System.nanoTime() - start < AT_ONCE.toNanos());
    } finally {
      for (String filler : fillers) {
        pg.execute("SELECT pg_drop_replication_slot('" + filler + "')");
      }
    }
  }

  /** Creates slots until every one of max_replication_slots is in use; returns their names. */
  private static List<String> fillSlots() throws Exception {
    int free =
        Integer.parseInt(
            pg.queryString(
                "SELECT (current_setting('max_replication_slots')::int - count(*))::text"
                    + " FROM pg_replication_slots"));
    List<String> fillers = new ArrayList<>();
    for (int i = 0; i < free; i++) {
      fillers.add("fcl_filler_" + i);
      pg.execute("SELECT pg_create_logical_replication_slot('fcl_filler_" + i + "', 'pgoutput')");
    }
    return fillers;
  }

  private static String urlWithoutUser() {
    return pg.jdbcUrl().replace("?user=" + pg.user(), "");
  }

  private static String url(Fault fault) {
    String url = urlWithoutUser();
    return switch (fault) {
      case MISSING_DATABASE -> url.replace("/postgres", "/fcl_nodb");
      case UNREACHABLE -> url.replace(":" + pg.port() + "/", ":" + closedPort + "/");
      default -> url;
    };
  }

  private static String user(Fault fault) {
    return switch (fault) {
      case AUTHENTICATION -> "fcl_nologin";
      case PRIVILEGE -> "fcl_plain";
      default -> pg.user();
    };
  }

  private static String slot(Fault fault) {
    return switch (fault) {
      case MISSING_SLOT -> "fcl_noslot";
      case SERVER_LIMIT -> "fcl_new";
      default -> SLOT;
    };
  }

  private static String store(Fault fault) {
    Path throughAFile = dir.resolve("a-file").resolve("store");
    return switch (fault) {
      case FILE_STORE_PATH -> "file:" + throughAFile;
      case ROCKSDB_STORE_PATH -> "rocksdb:" + throughAFile;
      case MAPDB_STORE_PATH -> "mapdb:" + throughAFile.resolve("cdc.db");
      default -> "file:" + dir.resolve(fault.name());
    };
  }

  private static String publication(Fault fault) {
    return fault == Fault.MISSING_PUBLICATION ? "fcl_nopub" : "fcl_pub";
  }

  /** Starts the library's source; returns the message of its failure, of the expected type. */
  private static String library(Fault fault, Object expected) {
    PgCdcSource source =
        PgCdcSource.builder()
            .jdbcUrl(url(fault))
            .user(user(fault))
            .slot(slot(fault))
            .publication(publication(fault))
            .createSlot(fault != Fault.MISSING_SLOT)
            .checkpointStore(new MemoryCheckpointStore())
            .build();
    try (source) {
      @SuppressWarnings("unchecked")
      Class<? extends CdcException> type = (Class<? extends CdcException>) expected;
      return assertThrows(
              type,
              () -> source.start((event, checkpoints) -> checkpoints.acknowledge(event.offset())))
          .getMessage();
    }
  }

  /** Runs pgcdc; returns its error output, after checking the exit code. */
  private static String pgcdc(Fault fault, Entry entry, Object expected) {
    List<String> args =
        new ArrayList<>(
            List.of(
                switch (entry) {
                  case STREAM_RETRY_START -> "stream";
                  case STATUS -> "status";
                  case SLOT_DROP -> "slot";
                  case SNAPSHOT -> "snapshot";
                  case LIBRARY_START -> throw new IllegalArgumentException(entry.name());
                }));
    if (entry == Entry.SLOT_DROP) {
      args.add("drop");
    }
    args.addAll(List.of("--url", url(fault), "--user", user(fault), "--slot", slot(fault)));
    switch (entry) {
      case STREAM_RETRY_START -> {
        args.addAll(
            List.of("--publication", publication(fault), "--store", store(fault), "--retry-start"));
        if (fault != Fault.MISSING_SLOT) {
          args.add("--create-slot");
        }
      }
      case SLOT_DROP -> args.add("--yes");
      case SNAPSHOT -> args.addAll(List.of("--table", "public.fcl_t"));
      default -> {}
    }
    Run run = pgcdcInProcess(args.toArray(new String[0]));
    assertEquals(expected, run.exitCode(), fault + " through " + entry + ": " + run.stderr());
    return run.stderr();
  }
}

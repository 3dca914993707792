package io.datum.cdc.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.PgLsn;
import io.datum.cdc.embedded.ChildJvm;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.spi.CheckpointCodec;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code pgcdc demo}: starts an embedded PostgreSQL, creates a small schema and a slot, runs a
 * scripted workload, and streams it with {@code pgcdc stream} in a child process using a {@code
 * file:} checkpoint store. In the middle of a large transaction the child is killed with SIGKILL,
 * at once, while its acknowledgements are still being stored in the background; the demo reports
 * how many printed events the store held and how many it did not yet. More changes are written
 * while nothing runs; a second child resumes on the same slot and store, and the demo shows that
 * exactly the printed events not stored come again. The children's JSON lines are copied to stdout;
 * narration and the summary go to stderr.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description =
        "Stream a scripted workload of an embedded PostgreSQL; kill -9 the consumer and resume.")
final class DemoCommand implements Callable<Integer> {

  static final String SLOT = "pgcdc_demo";
  static final int LARGE_TRANSACTION_ROWS = 200;

  /** The first consumer is killed once this many events of the large transaction were printed. */
  static final int PRINTED_BEFORE_KILL = 5;

  @Option(names = "--verbose", description = "info logs and stack traces of errors on stderr")
  boolean verbose;

  @Option(
      names = "--idle-exit",
      paramLabel = "SECONDS",
      defaultValue = "2",
      description =
          "the resumed consumer exits after SECONDS without a change (default ${DEFAULT-VALUE})")
  double idleExitSeconds;

  private final PrintStream out = System.out;
  private final PrintStream err = System.err;
  private final ObjectMapper json = new ObjectMapper();
  private final List<JsonNode> printed = new ArrayList<>();

  @Override
  public Integer call() throws Exception {
    Path storeDir = Files.createTempDirectory("pgcdc-demo-store");
    err.println("pgcdc demo: starting an embedded PostgreSQL 17 (wal_level=logical)...");
    try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.builder().start()) {
      DemoWorkload workload = new DemoWorkload(pg);
      workload.createSchema();
      pg.execute("SELECT pg_create_logical_replication_slot('" + SLOT + "', 'pgoutput')");
      err.println(
          "pgcdc demo: tables customers, orders, audit_log; publication and slot "
              + SLOT
              + "; checkpoints in file:"
              + storeDir);
      workload.runBeforeKill(LARGE_TRANSACTION_ROWS);

      List<String> stream =
          List.of(
              "stream",
              "--url",
              pg.jdbcUrl(),
              "--user",
              pg.user(),
              "--slot",
              SLOT,
              "--publication",
              SLOT,
              "--store",
              "file:" + storeDir);
      err.println("pgcdc demo: $ pgcdc " + String.join(" ", stream));
      Process first = consumer(stream);
      int large = 0;
      try (BufferedReader lines = reader(first)) {
        String line;
        while (large < PRINTED_BEFORE_KILL && (line = lines.readLine()) != null) {
          if (print(line).get("event_count").asInt() == LARGE_TRANSACTION_ROWS) {
            large++;
          }
        }
        // SIGKILL at once, without letting its background stores catch up: no graceful stop, no
        // final status update. Through the ProcessHandle, since Process.destroyForcibly() also
        // closes our end of the pipe, losing lines it still holds.
        first.toHandle().destroyForcibly();
        first.waitFor();
        while ((line = lines.readLine()) != null) {
          print(line); // printed by the consumer before it died
        }
      }
      int beforeKill = printed.size();
      CdcCheckpoint atKill = stored(storeDir);
      Set<String> storedAtKill = new HashSet<>();
      Set<String> notStoredAtKill = new HashSet<>();
      for (JsonNode e : printed) {
        (isAcknowledged(atKill, e) ? storedAtKill : notStoredAtKill).add(key(e));
      }
      err.println(
          "pgcdc demo: kill -9 of the consumer after it printed "
              + beforeKill
              + " events, in the middle of the "
              + LARGE_TRANSACTION_ROWS
              + "-row transaction; the store held the acknowledgements of "
              + storedAtKill.size()
              + " of them, "
              + notStoredAtKill.size()
              + " were printed but not yet stored (acknowledgements are stored in the"
              + " background); stored watermark "
              + (atKill == null ? "none" : describe(atKill)));
      workload.runWhileDown();
      workload.runAfterRestart();
      err.println(
          "pgcdc demo: wrote more changes while no consumer runs; resuming on the same slot and store");
      List<String> resume = new ArrayList<>(stream);
      resume.addAll(List.of("--idle-exit", Double.toString(idleExitSeconds)));
      Process second = consumer(resume);
      try (BufferedReader lines = reader(second)) {
        String line;
        while ((line = lines.readLine()) != null) {
          print(line);
        }
      }
      if (!second.waitFor(60, TimeUnit.SECONDS) || second.exitValue() != 0) {
        throw new IllegalStateException(
            "the resumed consumer failed (exit "
                + (second.isAlive() ? "none" : second.exitValue())
                + ")");
      }
      Set<String> cameAgain = new HashSet<>();
      for (JsonNode e : printed.subList(beforeKill, printed.size())) {
        cameAgain.add(key(e));
      }
      long notStoredAgain = notStoredAtKill.stream().filter(cameAgain::contains).count();
      long storedAgain = storedAtKill.stream().filter(cameAgain::contains).count();
      err.println(
          "pgcdc demo: after the resume "
              + notStoredAgain
              + " of the "
              + notStoredAtKill.size()
              + " events printed but not stored at the kill came again, and "
              + storedAgain
              + " of the "
              + storedAtKill.size()
              + " stored ones");
      summarise(pg, beforeKill);
    } finally {
      deleteTree(storeDir);
    }
    return 0;
  }

  private void summarise(EmbeddedPostgresServer pg, int beforeKill) throws Exception {
    Set<String> events = new HashSet<>();
    Set<String> transactions = new HashSet<>();
    int again = 0;
    for (JsonNode e : printed) {
      transactions.add(e.get("tx_end_lsn").asText());
      if (!events.add(e.get("tx_end_lsn").asText() + '#' + e.get("event_index").asInt())) {
        again++;
      }
    }
    String last = printed.get(printed.size() - 1).get("tx_end_lsn").asText();
    String confirmed =
        pg.queryString(
            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = '"
                + SLOT
                + "'");
    err.println(
        "pgcdc demo: "
            + printed.size()
            + " events ("
            + events.size()
            + " distinct) in "
            + transactions.size()
            + " transactions; "
            + again
            + " delivered again after the kill"
            + " (printed, but their acknowledgement not yet stored when the consumer was killed;"
            + " the stored ones did not come again);"
            + " final watermark "
            + last
            + ", slot confirmed_flush_lsn "
            + confirmed);
  }

  private Process consumer(List<String> args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(ChildJvm.classPath());
    command.add(Pgcdc.class.getName());
    command.addAll(args);
    if (verbose) {
      command.add("--verbose");
    }
    return new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
  }

  private static BufferedReader reader(Process p) {
    return new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
  }

  private JsonNode print(String line) throws Exception {
    out.println(line);
    out.flush();
    JsonNode event = json.readTree(line);
    printed.add(event);
    return event;
  }

  private static String key(JsonNode event) {
    return event.get("tx_end_lsn").asText() + '#' + event.get("event_index").asInt();
  }

  /** Whether a stored checkpoint (null: none) includes a printed event's acknowledgement. */
  private static boolean isAcknowledged(CdcCheckpoint stored, JsonNode event) {
    if (stored == null) {
      return false;
    }
    return stored.isAcknowledged(
        PgLsn.parse(event.get("tx_end_lsn").asText()), event.get("event_index").asInt());
  }

  /**
   * Reads the slot's checkpoint file of the {@code file:} store, which the consumer process holds
   * open (and locked), so it is decoded here rather than opened as a store.
   */
  private static CdcCheckpoint stored(Path storeDir) throws Exception {
    Path file = storeDir.resolve(SLOT + ".checkpoint");
    if (!Files.exists(file)) {
      return null;
    }
    return CheckpointCodec.decode(Files.readAllBytes(file), SLOT, file.toString());
  }

  private static String describe(CdcCheckpoint stored) {
    int beyond = 0;
    for (CdcCheckpoint.PartialTransaction tx : stored.acknowledgedBeyond()) {
      beyond += tx.acknowledgedCount();
    }
    return stored.watermark()
        + " and "
        + beyond
        + " acknowledged events after it"
        + (stored.acknowledgedRuns().isEmpty()
            ? ""
            : " (and " + stored.acknowledgedRuns().size() + " runs of whole transactions)");
  }

  private static void deleteTree(Path dir) throws Exception {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}

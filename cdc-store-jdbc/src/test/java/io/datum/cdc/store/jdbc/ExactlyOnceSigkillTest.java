package io.datum.cdc.store.jdbc;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.embedded.ChildJvm;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Exactly once under SIGKILL: a child JVM ({@link ExactlyOnceChild}) streams 300 numbered rows into
 * a table with a primary key (plain INSERT, no upsert), acknowledging in its transaction, and is
 * killed with SIGKILL again and again: in odd rounds while it holds a transaction with a row
 * written and the checkpoint row updated but not committed, in even rounds after a random number of
 * events, wherever it is. After every kill the table holds exactly the rows 1..m (the committed
 * prefix, each once), a held row is never in it, and a restarted child never meets a duplicate key;
 * at the end every source row is in the table exactly once. {@code -Ddatum.cdc.test.seed} repeats a
 * run.
 */
@EmbeddedPostgresTest
class ExactlyOnceSigkillTest {

  private static final int TOTAL = 300;
  private static final int ROUNDS = 8;
  private static final int[] BATCHES = {1, 3, 10};

  private final EmbeddedPostgresServer pg;

  @TempDir Path tmp;

  ExactlyOnceSigkillTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  /** The tests share the server: each starts without the other's slot, publication and tables. */
  @BeforeEach
  void dropLeftovers() throws SQLException {
    pg.execute(
        "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
            + " WHERE slot_name = 'eo' AND active_pid IS NOT NULL");
    await()
        .atMost(Duration.ofSeconds(30))
        .ignoreExceptions()
        .until(
            () -> {
              pg.execute(
                  "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
                      + " WHERE slot_name = 'eo'");
              return true;
            });
    pg.execute(
        "DROP PUBLICATION IF EXISTS eo", "DROP TABLE IF EXISTS eo_src, eo_sink, eo_checkpoint");
  }

  /**
   * With one handler thread, and with eight, each writing and committing its own events on its own
   * connection (at {@code batch} events or at the end of its batch). With one thread the table
   * holds the committed prefix after every kill; with eight the rows commit out of order, so it
   * holds some rows, each once (a restarted child meeting a duplicate key fails), never the held
   * one; at the end every row is there exactly once.
   */
  @ParameterizedTest(name = "{0} handler thread(s)")
  @ValueSource(ints = {1, 8})
  @Timeout(value = 180, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void everySourceRowIsInTheTableExactlyOnceAfterSigkillsAtRandomMoments(int threads)
      throws Exception {
    pg.execute(
        "CREATE TABLE eo_src (id int PRIMARY KEY)",
        "CREATE TABLE eo_sink (id int PRIMARY KEY)",
        "CREATE PUBLICATION eo FOR TABLE eo_src",
        "SELECT pg_create_logical_replication_slot('eo', 'pgoutput')");
    for (int from = 1; from <= TOTAL; from += 10) { // 30 source transactions of 10 rows
      pg.execute(
          "INSERT INTO eo_src SELECT g FROM generate_series(" + from + ", " + (from + 9) + ") g");
    }
    long seed = Long.getLong("datum.cdc.test.seed", System.nanoTime());
    Random random = new Random(seed);
    String context =
        "seed " + seed + " (-Ddatum.cdc.test.seed to repeat), " + threads + " thread(s)";
    int holds = 0;
    for (int round = 1; round <= ROUNDS; round++) {
      int before = sink().size();
      int remaining = TOTAL - before;
      if (remaining < 25) {
        break; // too few left for another kill in the middle
      }
      int batch = BATCHES[round % BATCHES.length];
      boolean hold = round % 2 == 1;
      int at = 1 + random.nextInt(Math.min(40, remaining - 1));
      String when = context + ", round " + round + ", batch " + batch;
      Path err = tmp.resolve("child" + threads + "-" + round + ".err");
      try (Child child = Child.start(err, pg, batch, hold ? at : 0, threads)) {
        int held = -1;
        int written = 0;
        while (held < 0 && (hold || written < at)) {
          String line = child.readLine(when);
          if (line.startsWith("written ")) {
            written++;
          } else if (line.startsWith("holding ")) {
            held = Integer.parseInt(line.substring("holding ".length()));
          }
        }
        child.kill();
        child.drain(when);
        List<Integer> rows = sink();
        if (threads == 1) {
          assertEquals(prefix(rows.size()), rows, when + ": the committed prefix, each row once");
        } else {
          assertTrue(rows.size() >= before, when + ": rows went missing");
        }
        if (hold) {
          holds++;
          assertFalse(rows.contains(held), when + ": row " + held + " was never committed");
          assertTrue(threads > 1 || rows.size() < held, when + ": rows " + rows.size());
        }
      }
    }
    assertTrue(holds >= 3, context + ": kills between write and commit: " + holds);
    Path err = tmp.resolve("child" + threads + "-last.err");
    try (Child last = Child.start(err, pg, 7, 0, threads)) {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> last.failure() != null || sink().size() == TOTAL);
      last.kill();
      last.drain(context + ", last round");
    }
    assertEquals(prefix(TOTAL), sink(), context + ": every source row exactly once");
  }

  private static List<Integer> prefix(int n) {
    return IntStream.rangeClosed(1, n).boxed().collect(Collectors.toList());
  }

  private List<Integer> sink() throws SQLException {
    List<Integer> ids = new ArrayList<>();
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT id FROM eo_sink ORDER BY id")) {
      while (rs.next()) {
        ids.add(rs.getInt(1));
      }
    }
    return ids;
  }

  /** A child JVM running {@link ExactlyOnceChild}; its stdout read line by line. */
  private static final class Child implements AutoCloseable {
    private final Process process;
    private final BufferedReader stdout;
    private final Path stderr;
    private volatile String failure;

    private Child(Process process, Path stderr) {
      this.process = process;
      this.stdout =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      this.stderr = stderr;
    }

    static Child start(Path stderr, EmbeddedPostgresServer pg, int batch, int holdAt, int threads)
        throws IOException {
      List<String> command =
          List.of(
              Path.of(System.getProperty("java.home"), "bin", "java").toString(),
              "-cp",
              ChildJvm.classPath(),
              ExactlyOnceChild.class.getName(),
              pg.jdbcUrl(),
              pg.user(),
              Integer.toString(batch),
              Integer.toString(holdAt),
              Integer.toString(threads));
      Process process =
          new ProcessBuilder(command)
              .redirectError(ProcessBuilder.Redirect.to(stderr.toFile()))
              .start();
      Child child = new Child(process, stderr);
      return child;
    }

    /** Returns the next line; fails if the child failed or ended. */
    String readLine(String when) throws IOException {
      String line = stdout.readLine();
      if (line == null || line.startsWith("FAILED")) {
        throw new AssertionError(when + ": the child ended: " + line + stderr());
      }
      return line;
    }

    /** Returns a FAILED line the child printed, reading what is available; null if none. */
    String failure() throws IOException {
      while (failure == null && stdout.ready()) {
        String line = stdout.readLine();
        if (line == null) {
          break;
        }
        if (line.startsWith("FAILED")) {
          failure = line;
        }
      }
      if (failure == null && !process.isAlive()) {
        failure = "exited with status " + process.exitValue();
      }
      return failure;
    }

    /** Reads what a killed child printed; fails on a FAILED line. */
    void drain(String when) throws IOException {
      for (String line = stdout.readLine(); line != null; line = stdout.readLine()) {
        if (line.startsWith("FAILED")) {
          failure = line;
        }
      }
      if (failure != null) {
        throw new AssertionError(when + ": the child failed: " + failure + stderr());
      }
    }

    void kill() throws InterruptedException {
      process.toHandle().destroyForcibly(); // SIGKILL; keeps stdout readable
      assertTrue(process.waitFor(30, TimeUnit.SECONDS), "child did not die");
    }

    private String stderr() {
      try {
        String text = Files.readString(stderr);
        return "\nchild stderr:\n"
            + (text.length() > 4000 ? text.substring(text.length() - 4000) : text);
      } catch (IOException e) {
        return "";
      }
    }

    @Override
    public void close() throws IOException {
      if (process.isAlive()) {
        process.destroyForcibly();
      }
      process.getOutputStream().close();
      stdout.close();
    }
  }
}

package io.datum.cdc.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.PgLsn;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.store.file.FileCheckpointStore;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Fault injection: a workload commits numbered rows while a {@code pgcdc stream} consumer (file
 * store, default options: unlimited reconnects, per-event durable acknowledgements) appends what it
 * prints to a ledger; at random moments the consumer is killed with SIGKILL and restarted, its
 * walsender is terminated, PostgreSQL crashes and restarts, or (a decode-error round) the consumer
 * is killed, a row with a value of a type then dropped is written, and a new consumer must deliver
 * it raw and marked ({@code "undecoded"}) and go on. At the end a checker proves that every
 * committed row was delivered, and that no event whose acknowledgement the store held at a SIGKILL
 * (read from the store right after each kill) was printed again; rows printed but not yet
 * acknowledged at a kill may come again and are counted. Runs in each acknowledgement mode of
 * {@code pgcdc stream} (stdout, {@code --output}, {@code --acks-from}). Rounds: {@code
 * -Dfaults.rounds=N} (default 6 per mode, a short CI run); seed: {@code -Dfaults.seed=S}.
 */
@EmbeddedPostgresTest
class FaultInjectionTest {

  private final EmbeddedPostgresServer pg;

  FaultInjectionTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  /**
   * How the consumer acknowledges: {@code stdout} (the default: once flushed to stdout, which is
   * appended to the ledger), {@code output} ({@code --output LEDGER}: once fsynced) or {@code acks}
   * ({@code --acks-from -}: this test reads stdout, appends each line to the ledger and then writes
   * it back as the acknowledgement).
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"stdout", "output", "acks"})
  void everyCommittedChangeIsDeliveredThroughKillsDisconnectsAndCrashes(
      String mode, @TempDir Path dir) throws Exception {
    int rounds = Integer.getInteger("faults.rounds", 6);
    long seed = Long.getLong("faults.seed", System.nanoTime());
    Random random = new Random(seed);
    String slot = "faults_" + mode;
    String table = "numbered_" + mode;
    pg.execute(
        "CREATE TABLE " + table + " (id bigint PRIMARY KEY)",
        "CREATE PUBLICATION " + slot + " FOR TABLE " + table,
        "SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
    Path ledger = dir.resolve("ledger.jsonl");
    Files.createFile(ledger);
    Path store = dir.resolve("store");
    Consumers consumers = new Consumers(mode, slot, ledger, store);
    Workload workload = new Workload(table);
    Thread writer = new Thread(workload, "fault-workload");
    writer.start();
    Map<String, Integer> faults = new HashMap<>();
    List<Kill> kills = new ArrayList<>();
    Consumer consumer = consumers.start(null);
    int poisoned = 0;
    try {
      for (int round = 0; round < rounds; round++) {
        long target = workload.committed.get() + 200;
        await().atMost(Duration.ofSeconds(60)).until(() -> workload.committed.get() >= target);
        // round 1 is always a decode-error round, so that a short run has one
        switch (round == 1 ? 3 : random.nextInt(4)) {
          case 0 -> {
            consumer.kill(); // SIGKILL
            kills.add(Kill.after(ledger, store, slot));
            consumer = consumers.start(null);
            faults.merge("consumer SIGKILL", 1, Integer::sum);
          }
          case 1 -> {
            pg.execute(
                "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
                    + " WHERE slot_name = '"
                    + slot
                    + "' AND active_pid IS NOT NULL");
            faults.merge("walsender terminated", 1, Integer::sum);
          }
          case 2 -> {
            pg.restart(EmbeddedPostgresServer.ShutdownMode.IMMEDIATE);
            faults.merge("PostgreSQL crash + restart", 1, Integer::sum);
          }
          default -> {
            // a value that cannot be decoded: written while the consumer is down, its type
            // dropped before the consumer reads it; the default policy (raw) must deliver it
            // marked, and the stream must go on
            consumer.kill();
            kills.add(Kill.after(ledger, store, slot));
            poisoned++;
            String poison = "poison_" + mode + poisoned;
            pg.execute(
                "CREATE DOMAIN " + poison + "_d AS int CHECK (VALUE > 0)",
                "CREATE TABLE " + poison + " (id bigint PRIMARY KEY, v " + poison + "_d[])",
                "ALTER PUBLICATION " + slot + " ADD TABLE " + poison,
                "INSERT INTO " + poison + " VALUES (" + poisoned + ", '{7}')",
                "DROP TABLE " + poison,
                "DROP DOMAIN " + poison + "_d");
            consumer = consumers.start(null);
            faults.merge("undecodable value (consumer SIGKILL, type dropped)", 1, Integer::sum);
          }
        }
      }
    } finally {
      workload.stop.set(true);
      writer.join();
    }
    // let the consumer drain; then a final one that exits when idle
    consumer.kill();
    kills.add(Kill.after(ledger, store, slot));
    Consumer last = consumers.start("3");
    // it drains the backlog at the store's pace (an fsync per event): wait while it makes progress
    long size = -1;
    long lastProgress = System.nanoTime();
    while (!last.process().waitFor(5, TimeUnit.SECONDS)
        && System.nanoTime() - lastProgress < TimeUnit.SECONDS.toNanos(60)) {
      long now = Files.size(ledger);
      if (now != size) {
        size = now;
        lastProgress = System.nanoTime();
      }
    }
    if (last.process().isAlive()) {
      last.kill();
      List<String> err =
          Files.readAllLines(ledger.resolveSibling("consumer.err"), StandardCharsets.UTF_8);
      fail(
          "final consumer made no progress for 60 s; the consumers' stderr ends with:\n"
              + String.join("\n", err.subList(Math.max(0, err.size() - 40), err.size())));
    }

    Set<Long> committed = new TreeSet<>();
    try (Connection c = pg.getConnection();
        Statement st = c.createStatement();
        var rs = st.executeQuery("SELECT id FROM " + table)) {
      while (rs.next()) {
        committed.add(rs.getLong(1));
      }
    }
    ObjectMapper json = new ObjectMapper();
    Map<Long, Integer> delivered = new HashMap<>();
    Set<Long> poisonDelivered = new TreeSet<>();
    List<String> badPoison = new ArrayList<>();
    List<JsonNode> lines = new ArrayList<>();
    for (String line : Files.readAllLines(ledger, StandardCharsets.UTF_8)) {
      JsonNode event = null;
      try {
        event = line.isBlank() ? null : json.readTree(line);
      } catch (JacksonException torn) {
        // the last line of a consumer killed while writing it
      }
      lines.add(event);
      if (event != null && event.get("table").asText().startsWith("poison")) {
        poisonDelivered.add(event.get("after").get("id").asLong());
        if (!event.path("undecoded").toString().equals("[\"v\"]")
            || !event.get("after").get("v").asText().equals("{7}")) {
          badPoison.add(line);
        }
      } else if (event != null) {
        delivered.merge(event.get("after").get("id").asLong(), 1, Integer::sum);
      }
    }
    List<Long> missing = new ArrayList<>();
    for (long id : committed) {
      if (!delivered.containsKey(id)) {
        missing.add(id);
      }
    }
    // an event whose acknowledgement the store held when a consumer was killed must never be
    // printed again by a later consumer
    List<String> acknowledgedAgain = new ArrayList<>();
    for (Kill kill : kills) {
      for (JsonNode event :
          lines.subList(Math.min(kill.linesBefore(), lines.size()), lines.size())) {
        if (event != null && kill.acknowledged(event)) {
          acknowledgedAgain.add(event.toString());
        }
      }
    }
    long duplicates = delivered.values().stream().mapToLong(n -> n - 1).sum();
    System.out.printf(
        "fault injection, %s mode (seed %d): %d rounds %s; %d undecodable rows delivered raw;"
            + " %d rows committed, %d deliveries,"
            + " %d delivered more than once (printed but not yet acknowledged at a SIGKILL),"
            + " %d acknowledged and delivered again, %d missing%n",
        mode,
        seed,
        rounds,
        faults,
        poisonDelivered.size(),
        committed.size(),
        delivered.values().stream().mapToLong(n -> n).sum(),
        duplicates,
        acknowledgedAgain.size(),
        missing.size());
    assertEquals(List.of(), missing, "committed rows never delivered (seed " + seed + ")");
    Set<Long> poisonWritten = new TreeSet<>();
    for (long n = 1; n <= poisoned; n++) {
      poisonWritten.add(n);
    }
    assertEquals(poisonWritten, poisonDelivered, "undecodable rows delivered (seed " + seed + ")");
    assertEquals(List.of(), badPoison, "undecodable rows raw and marked (seed " + seed + ")");
    assertEquals(
        committed, new TreeSet<>(delivered.keySet()), "delivered rows that were never committed");
    assertEquals(
        List.of(),
        acknowledgedAgain,
        "acknowledged before a SIGKILL, delivered again (seed " + seed + ")");
  }

  /**
   * What the store held right after a consumer was SIGKILLed, and how many ledger lines were
   * written by then.
   */
  private record Kill(int linesBefore, CdcCheckpoint stored) {

    static Kill after(Path ledger, Path store, String slot) throws Exception {
      int lines = 0;
      for (byte b : Files.readAllBytes(ledger)) {
        if (b == '\n') {
          lines++;
        }
      }
      try (FileCheckpointStore checkpoints = FileCheckpointStore.open(store)) {
        return new Kill(lines, checkpoints.load(slot).orElse(null));
      }
    }

    boolean acknowledged(JsonNode event) {
      if (stored == null) {
        return false;
      }
      return stored.isAcknowledged(
          PgLsn.parse(event.get("tx_end_lsn").asText()), event.get("event_index").asInt());
    }
  }

  /** A running consumer, and in {@code acks} mode the thread that reads and acknowledges. */
  private record Consumer(Process process, Thread pump) {

    /** SIGKILL, then waits for the process and for the pump to copy what it had printed. */
    void kill() throws InterruptedException {
      process.toHandle().destroyForcibly();
      process.waitFor();
      if (pump != null) {
        pump.join();
      }
    }
  }

  /** Starts consumers of one mode. */
  private final class Consumers {
    final String mode;
    final String slot;
    final Path ledger;
    final Path store;

    Consumers(String mode, String slot, Path ledger, Path store) {
      this.mode = mode;
      this.slot = slot;
      this.ledger = ledger;
      this.store = store;
    }

    Consumer start(String idleExit) throws Exception {
      List<String> command =
          new ArrayList<>(PgcdcProcess.command(PgcdcProcess.streamArgs(pg, store, slot, slot)));
      if (idleExit != null) {
        command.addAll(List.of("--idle-exit", idleExit));
      }
      ProcessBuilder builder =
          new ProcessBuilder(command)
              .redirectError(
                  ProcessBuilder.Redirect.appendTo(ledger.resolveSibling("consumer.err").toFile()));
      switch (mode) {
        case "stdout" -> builder.redirectOutput(ProcessBuilder.Redirect.appendTo(ledger.toFile()));
        case "output" -> {
          command.addAll(List.of("--output", ledger.toString()));
          builder.redirectOutput(
              ProcessBuilder.Redirect.appendTo(ledger.resolveSibling("stdout").toFile()));
        }
        default -> command.addAll(List.of("--acks-from", "-"));
      }
      Process process = builder.start();
      if (!mode.equals("acks")) {
        return new Consumer(process, null);
      }
      Thread pump = new Thread(() -> pump(process), "fault-acks");
      pump.start();
      return new Consumer(process, pump);
    }

    /**
     * Appends each line to the ledger, then acknowledges it, until stdout ends; after the consumer
     * died only the copying goes on.
     */
    private void pump(Process process) {
      try (BufferedReader lines =
              new BufferedReader(
                  new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
          OutputStream ledgerOut = Files.newOutputStream(ledger, StandardOpenOption.APPEND)) {
        OutputStream acks = process.getOutputStream();
        boolean acking = true;
        String line;
        while ((line = lines.readLine()) != null) {
          ledgerOut.write((line + '\n').getBytes(StandardCharsets.UTF_8));
          ledgerOut.flush();
          if (acking) {
            try {
              acks.write((line + '\n').getBytes(StandardCharsets.UTF_8));
              acks.flush();
            } catch (IOException dead) {
              acking = false; // the consumer was killed; its printed lines are still copied
            }
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /** Commits transactions of 1 to 20 numbered rows until stopped; survives server restarts. */
  private final class Workload implements Runnable {
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicLong committed = new AtomicLong();
    final String table;

    Workload(String table) {
      this.table = table;
    }

    @Override
    public void run() {
      Random random = new Random();
      long next = 1;
      Connection c = null;
      while (!stop.get()) {
        try {
          if (c == null) {
            c = pg.getConnection();
          }
          int rows = 1 + random.nextInt(20);
          try (Statement st = c.createStatement()) {
            st.execute(
                "INSERT INTO "
                    + table
                    + " SELECT generate_series("
                    + next
                    + ", "
                    + (next + rows - 1)
                    + ")");
          }
          next += rows;
          committed.addAndGet(rows);
        } catch (SQLException e) {
          // the server is restarting; whether the last insert committed is read back at the end
          next += 20; // never reuse ids whose fate is unknown
          try {
            if (c != null) {
              c.close();
            }
          } catch (SQLException closing) {
            e.addSuppressed(closing); // the connection is already broken
          }
          c = null;
          await()
              .atMost(Duration.ofSeconds(60))
              .ignoreExceptions()
              .until(
                  () -> {
                    try (Connection probe = pg.getConnection()) {
                      return probe.isValid(1);
                    }
                  });
        }
      }
      try {
        if (c != null) {
          c.close();
        }
      } catch (SQLException e) {
        throw new IllegalStateException(e);
      }
    }
  }
}

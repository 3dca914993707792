package io.datum.cdc.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.PgLsn;
import io.datum.cdc.embedded.ChildJvm;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.store.file.FileCheckpointStore;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fault injection: a workload commits numbered rows while a {@code pgcdc stream} consumer (file
 * store, default options: unlimited reconnects, per-event durable acknowledgements) appends what it
 * prints to a ledger; at random moments the consumer is killed with SIGKILL and restarted, its
 * walsender is terminated, PostgreSQL crashes and restarts, or (PostgreSQL 17+) the primary crashes
 * and its physical standby is promoted. At the end a checker proves that every row committed in the
 * final primary was delivered, that every delivered row is in it, and that no event whose
 * acknowledgement the store held at a SIGKILL (read from the store right after each kill) was
 * printed again; rows printed but not yet acknowledged at a kill may come again and are counted.
 * Rounds: {@code -Dfaults.rounds=N} (default 6, a short CI run, with at least one failover); seed:
 * {@code -Dfaults.seed=S}.
 *
 * <p>The failover round: the slot is a failover slot and the consumer runs with {@code
 * --failover-slot} and a URL naming the primary and its standby with {@code
 * targetServerType=primary}. A round makes a standby if there is none (and restarts the consumer
 * with SIGTERM, so that its URL names it), waits until the standby has synchronized the slot and
 * received the primary's WAL, crashes the primary (immediate shutdown), promotes the standby, and
 * waits until the running consumer prints a row committed on the new primary. The workload follows
 * the new primary; rows it committed on the old one that never reached the standby are lost with
 * it, and so must never have been printed.
 */
@EmbeddedPostgresTest
class FaultInjectionTest {

  private static final String FAILOVER = "failover (primary crash + standby promotion)";
  private final EmbeddedPostgresServer pg;
  private final boolean failoverSlots;

  /** The server the workload writes to and the consumers stream from: pg until a failover. */
  private volatile EmbeddedPostgresServer primary;

  /** The primary's physical standby, made by the first failover round after a promotion. */
  private EmbeddedPostgresServer standby;

  private final List<EmbeddedPostgresServer> made = new ArrayList<>();

  /** Per failover: milliseconds waiting for the slot's sync, and from the crash to a new row. */
  private final List<String> failoverMillis = new ArrayList<>();

  FaultInjectionTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
    this.primary = pg;
    this.failoverSlots = pg.majorVersion() >= 17;
  }

  @Test
  void everyCommittedChangeIsDeliveredThroughKillsDisconnectsAndCrashes(@TempDir Path dir)
      throws Exception {
    int rounds = Integer.getInteger("faults.rounds", 6);
    long seed = Long.getLong("faults.seed", System.nanoTime());
    Random random = new Random(seed);
    pg.execute(
        "CREATE TABLE numbered (id bigint PRIMARY KEY)",
        "CREATE PUBLICATION faults FOR TABLE numbered",
        failoverSlots
            ? "SELECT pg_create_logical_replication_slot('faults', 'pgoutput', failover => true)"
            : "SELECT pg_create_logical_replication_slot('faults', 'pgoutput')");
    Path ledger = dir.resolve("ledger.jsonl");
    Path store = dir.resolve("store");
    Workload workload = new Workload();
    Thread writer = new Thread(workload, "fault-workload");
    writer.start();
    Map<String, Integer> faults = new HashMap<>();
    List<Kill> kills = new ArrayList<>();
    Process consumer = consumer(ledger, store, null);
    try {
      for (int round = 0; round < rounds; round++) {
        long target = workload.committed.get() + 200;
        await().atMost(Duration.ofSeconds(60)).until(() -> workload.committed.get() >= target);
        int kind = random.nextInt(failoverSlots ? 4 : 3);
        if (failoverSlots && round == rounds - 1 && !faults.containsKey(FAILOVER)) {
          kind = 3; // every run has a failover
        }
        switch (kind) {
          case 0 -> {
            consumer.toHandle().destroyForcibly(); // SIGKILL
            consumer.waitFor();
            kills.add(Kill.after(ledger, store));
            consumer = consumer(ledger, store, null);
            faults.merge("consumer SIGKILL", 1, Integer::sum);
          }
          case 1 -> {
            primary.execute(
                "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
                    + " WHERE slot_name = 'faults' AND active_pid IS NOT NULL");
            faults.merge("walsender terminated", 1, Integer::sum);
          }
          case 2 -> {
            primary.restart(EmbeddedPostgresServer.ShutdownMode.IMMEDIATE);
            faults.merge("PostgreSQL crash + restart", 1, Integer::sum);
          }
          default -> {
            if (standby == null) {
              standby = primary.createStandby("standby" + (made.size() + 1));
              made.add(standby);
              // SIGTERM, a graceful stop, so that the next consumer's URL names the standby
              String walsender =
                  primary.queryString(
                      "SELECT coalesce((SELECT active_pid::text FROM pg_replication_slots"
                          + " WHERE slot_name = 'faults'), '')");
              consumer.destroy();
              consumer.waitFor();
              kills.add(Kill.after(ledger, store));
              consumer = consumer(ledger, store, null);
              faults.merge("consumer SIGTERM for a new standby", 1, Integer::sum);
              await() // streaming again before the crash, so that the failover is what it meets
                  .atMost(Duration.ofSeconds(60))
                  .until(
                      () ->
                          "t"
                              .equals(
                                  primary.queryString(
                                      "SELECT coalesce((SELECT active AND active_pid::text <> '"
                                          + walsender
                                          + "' FROM pg_replication_slots"
                                          + " WHERE slot_name = 'faults'), false)")));
            }
            failover(consumer, ledger, workload);
            faults.merge(FAILOVER, 1, Integer::sum);
          }
        }
      }
    } finally {
      workload.stop.set(true);
      writer.join();
    }
    // let the consumer drain; then a final one that exits when idle
    consumer.toHandle().destroyForcibly();
    consumer.waitFor();
    kills.add(Kill.after(ledger, store));
    Process last = consumer(ledger, store, "3");
    // it drains the backlog at the store's pace (an fsync per event): wait while it makes progress
    long size = -1;
    long lastProgress = System.nanoTime();
    while (!last.waitFor(5, TimeUnit.SECONDS)
        && System.nanoTime() - lastProgress < TimeUnit.SECONDS.toNanos(60)) {
      long now = Files.size(ledger);
      if (now != size) {
        size = now;
        lastProgress = System.nanoTime();
      }
    }
    if (last.isAlive()) {
      last.toHandle().destroyForcibly();
      List<String> err =
          Files.readAllLines(ledger.resolveSibling("consumer.err"), StandardCharsets.UTF_8);
      fail(
          "final consumer made no progress for 60 s; the consumers' stderr ends with:\n"
              + String.join("\n", err.subList(Math.max(0, err.size() - 40), err.size())));
    }

    Set<Long> committed = new TreeSet<>();
    try (Connection c = primary.getConnection();
        Statement st = c.createStatement();
        var rs = st.executeQuery("SELECT id FROM numbered")) {
      while (rs.next()) {
        committed.add(rs.getLong(1));
      }
    }
    ObjectMapper json = new ObjectMapper();
    Map<Long, Integer> delivered = new HashMap<>();
    List<JsonNode> lines = new ArrayList<>();
    for (String line : Files.readAllLines(ledger, StandardCharsets.UTF_8)) {
      JsonNode event = null;
      try {
        event = line.isBlank() ? null : json.readTree(line);
      } catch (JacksonException torn) {
        // the last line of a consumer killed while writing it
      }
      lines.add(event);
      if (event != null) {
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
        "fault injection (seed %d): %d rounds %s; %d rows committed, %d deliveries,"
            + " %d delivered more than once (printed but not yet acknowledged at a SIGKILL),"
            + " %d acknowledged and delivered again, %d missing; failovers: %s%n",
        seed,
        rounds,
        faults,
        committed.size(),
        delivered.values().stream().mapToLong(n -> n).sum(),
        duplicates,
        acknowledgedAgain.size(),
        missing.size(),
        failoverMillis);
    assertEquals(List.of(), missing, "committed rows never delivered (seed " + seed + ")");
    assertEquals(
        committed, new TreeSet<>(delivered.keySet()), "delivered rows that were never committed");
    assertEquals(
        List.of(),
        acknowledgedAgain,
        "acknowledged before a SIGKILL, delivered again (seed " + seed + ")");
    for (EmbeddedPostgresServer server : made) {
      server.close();
    }
  }

  /**
   * Crashes the primary and promotes its standby, once the standby has synchronized the slot and
   * received the WAL written so far (later WAL reaches a failover slot's walsender only after the
   * standby has it: synchronized_standby_slots); then waits until the running consumer prints a row
   * committed on the new primary.
   */
  private void failover(Process consumer, Path ledger, Workload workload) throws Exception {
    EmbeddedPostgresServer next = standby;
    long waiting = System.nanoTime();
    await()
        .atMost(Duration.ofSeconds(120))
        .until(
            () ->
                "t"
                    .equals(
                        next.queryString(
                            "SELECT coalesce((SELECT synced AND NOT temporary"
                                + " FROM pg_replication_slots WHERE slot_name = 'faults'), false)")));
    String written = primary.queryString("SELECT pg_current_wal_lsn()");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                "t"
                    .equals(
                        next.queryString(
                            "SELECT pg_last_wal_receive_lsn() >= '" + written + "'::pg_lsn")));
    EmbeddedPostgresServer old = primary;
    long crashed = System.nanoTime();
    old.stop(EmbeddedPostgresServer.ShutdownMode.IMMEDIATE);
    next.promote();
    primary = next;
    standby = null;
    if (old != pg) {
      old.close();
    }
    long target = workload.committed.get() + 50;
    await().atMost(Duration.ofSeconds(60)).until(() -> workload.committed.get() >= target);
    long newest = Long.parseLong(next.queryString("SELECT max(id) FROM numbered"));
    await()
        .atMost(Duration.ofSeconds(90))
        .until(() -> !consumer.isAlive() || printedAtLeast(ledger, newest));
    if (!consumer.isAlive()) {
      List<String> err =
          Files.readAllLines(ledger.resolveSibling("consumer.err"), StandardCharsets.UTF_8);
      fail(
          "the consumer did not survive the failover (exit "
              + consumer.exitValue()
              + "); its stderr ends with:\n"
              + String.join("\n", err.subList(Math.max(0, err.size() - 20), err.size())));
    }
    failoverMillis.add(
        "sync "
            + (crashed - waiting) / 1_000_000
            + " ms, crash to new row printed "
            + (System.nanoTime() - crashed) / 1_000_000
            + " ms");
  }

  /** Whether the last 256 kB of the ledger hold a row whose id is {@code id} or more. */
  private static boolean printedAtLeast(Path ledger, long id) throws Exception {
    byte[] all = Files.readAllBytes(ledger);
    int from = Math.max(0, all.length - (1 << 18));
    String tail = new String(all, from, all.length - from, StandardCharsets.UTF_8);
    ObjectMapper json = new ObjectMapper();
    for (String line : tail.split("\n")) {
      try {
        JsonNode event = json.readTree(line);
        if (event != null && event.has("after") && event.get("after").get("id").asLong() >= id) {
          return true;
        }
      } catch (JacksonException torn) {
        // the first line of the tail, cut, or a line being written
      }
    }
    return false;
  }

  /**
   * What the store held right after a consumer was SIGKILLed, and how many ledger lines were
   * written by then.
   */
  private record Kill(int linesBefore, CdcCheckpoint stored) {

    static Kill after(Path ledger, Path store) throws Exception {
      int lines = 0;
      for (byte b : Files.readAllBytes(ledger)) {
        if (b == '\n') {
          lines++;
        }
      }
      try (FileCheckpointStore checkpoints = FileCheckpointStore.open(store)) {
        return new Kill(lines, checkpoints.load("faults").orElse(null));
      }
    }

    boolean acknowledged(JsonNode event) {
      if (stored == null) {
        return false;
      }
      PgLsn end = PgLsn.parse(event.get("tx_end_lsn").asText());
      if (!end.isAfter(stored.watermark())) {
        return true;
      }
      for (CdcCheckpoint.PartialTransaction partial : stored.acknowledgedBeyond()) {
        if (partial.txEndLsn().equals(end)) {
          return partial.isAcknowledged(event.get("event_index").asInt());
        }
      }
      return false;
    }
  }

  /** The primary, and its standby if there is one, with {@code targetServerType=primary}. */
  private String url() {
    return "jdbc:postgresql://localhost:"
        + primary.port()
        + (standby == null ? "" : ",localhost:" + standby.port())
        + "/postgres?user="
        + pg.user()
        + "&targetServerType=primary";
  }

  private Process consumer(Path ledger, Path store, String idleExit) throws Exception {
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                ChildJvm.classPath(),
                Pgcdc.class.getName(),
                "stream",
                "--url",
                url(),
                "--user",
                pg.user(),
                "--slot",
                "faults",
                "--publication",
                "faults",
                "--store",
                "file:" + store));
    if (idleExit != null) {
      command.addAll(List.of("--idle-exit", idleExit));
    }
    if (failoverSlots) {
      command.add("--failover-slot");
    }
    return new ProcessBuilder(command)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(ledger.toFile()))
        .redirectError(
            ProcessBuilder.Redirect.appendTo(ledger.resolveSibling("consumer.err").toFile()))
        .start();
  }

  /** Commits transactions of 1 to 20 numbered rows until stopped; survives server restarts. */
  private final class Workload implements Runnable {
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicLong committed = new AtomicLong();

    @Override
    public void run() {
      Random random = new Random();
      long next = 1;
      Connection c = null;
      while (!stop.get()) {
        try {
          if (c == null) {
            c = primary.getConnection();
          }
          int rows = 1 + random.nextInt(20);
          try (Statement st = c.createStatement()) {
            st.execute(
                "INSERT INTO numbered SELECT generate_series("
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
                    try (Connection probe = primary.getConnection()) {
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

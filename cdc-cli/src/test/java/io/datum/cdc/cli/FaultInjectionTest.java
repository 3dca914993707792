package io.datum.cdc.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
 * walsender is terminated, PostgreSQL crashes and restarts, (a decode-error round) the consumer is
 * killed, a row with a value of a type then dropped is written, and a new consumer must deliver it
 * raw and marked ({@code "undecoded"}) and go on, or (a failover round, mode {@code failover} only)
 * the primary crashes and its physical standby is promoted. At the end a checker proves that every
 * row committed in the final primary was delivered, that every delivered row is in it, and that no
 * event whose acknowledgement the store held at a SIGKILL (read from the store right after each
 * kill) was printed again; rows printed but not yet acknowledged at a kill may come again and are
 * counted. Runs in each acknowledgement mode of {@code pgcdc stream} (stdout, {@code --output},
 * {@code --acks-from}) and in mode {@code failover}: stdout plus failover rounds. Rounds: {@code
 * -Dfaults.rounds=N} (default 6 per mode, a short CI run; round 1 is always a decode-error round,
 * and in mode {@code failover} the last round is a failover round if none came before, which wins
 * over the decode-error round in a 2-round run); seed: {@code -Dfaults.seed=S}.
 *
 * <p>The failover round (PostgreSQL 17+; on older versions mode {@code failover} is skipped): the
 * slot is a failover slot ({@code failover => true}) and the consumer runs with {@code
 * --failover-slot} and a URL naming the primary and its standby with {@code
 * targetServerType=primary}. A round makes a standby of the primary ({@link
 * EmbeddedPostgresServer#createStandby(String)}), restarts the consumer with SIGTERM so that its
 * URL names it, waits until the standby has synchronized the slot and received the primary's WAL,
 * crashes the primary (immediate shutdown), promotes the standby, and waits until the running
 * consumer prints a row committed on the new primary. The workload, the other faults and the
 * checker follow the new primary; rows committed on the old one that never reached the standby are
 * lost with it, and so must never have been printed.
 *
 * <p>Mode {@code standby} (PostgreSQL 16+; skipped before): the consumer streams from a slot on a
 * physical standby ({@code --url} the standby, {@code --primary-url} its primary) while the
 * workload writes to the primary. Its rounds: a consumer SIGKILL, a walsender termination on the
 * standby, a standby crash and restart, a primary crash and restart, a decode-error round, and a
 * promotion of the standby (the primary crashes, the standby is promoted, and the running consumer
 * must print a row committed on it), once per run and in the last round if none came before; after
 * it the rounds are those of the stdout mode against the promoted server. The checker reads the
 * final primary, as in mode {@code failover}.
 *
 * <p>Servers: the class's server {@code pg} is shared by all invocations, and a failover crashes
 * its primary for good. So mode {@code failover} never touches {@code pg}: it starts a primary of
 * its own, of {@code pg}'s version and settings, and closes it and every standby it made at its
 * end; the other modes run against {@code pg}, so the order of the modes does not matter. All of
 * them reach their server through {@link #primary}, which only a failover changes: one workload,
 * one consumer launcher and one checker for every mode.
 *
 * <p>{@code fsync=on} (the testkit turns it off): the workload commits as fast as the server lets
 * it, and every committed row must then be delivered, at the pace of a store that syncs each
 * acknowledgement; without fsync the workload commits four to eight times as many rows, which only
 * makes the run longer.
 */
@EmbeddedPostgresTest(settings = "fsync=on")
class FaultInjectionTest {

  private static final String FAILOVER = "failover (primary crash + standby promotion)";

  private static final String PROMOTION = "the source's standby promoted (primary crash)";

  private final EmbeddedPostgresServer pg;

  /**
   * The server the workload writes to and the consumers stream from: {@code pg}, or in mode {@code
   * failover} its own primary, replaced by the promoted standby at each failover. A new test
   * instance, so a new field, per invocation.
   */
  private volatile EmbeddedPostgresServer primary;

  /** The primary's physical standby during a failover round; null otherwise. */
  private EmbeddedPostgresServer standby;

  /**
   * In mode {@code standby}, the primary's standby the consumers stream from, until it is promoted
   * (it is then the primary); null otherwise. See {@link #source()}.
   */
  private volatile EmbeddedPostgresServer sourceStandby;

  /** The server the consumers stream from: the source's standby, else the primary. */
  private EmbeddedPostgresServer source() {
    EmbeddedPostgresServer s = sourceStandby;
    return s != null ? s : primary;
  }

  /** The servers mode {@code failover} started or made, closed at its end. */
  private final List<EmbeddedPostgresServer> made = new ArrayList<>();

  /** Per failover: milliseconds waiting for the slot's sync, and from the crash to a new row. */
  private final List<String> failoverMillis = new ArrayList<>();

  FaultInjectionTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
    this.primary = pg;
  }

  /**
   * How the consumer acknowledges: {@code stdout} (the default: once flushed to stdout, which is
   * appended to the ledger), {@code output} ({@code --output LEDGER}: once fsynced) or {@code acks}
   * ({@code --acks-from -}: this test reads stdout, appends each line to the ledger and then writes
   * it back as the acknowledgement), or {@code failover} (stdout, against a primary of its own,
   * with failover rounds).
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"stdout", "output", "acks", "failover", "standby"})
  void everyCommittedChangeIsDeliveredThroughKillsDisconnectsAndCrashes(
      String mode, @TempDir Path dir) throws Exception {
    boolean failover = mode.equals("failover");
    if (failover || mode.equals("standby")) {
      assumeTrue(
          pg.majorVersion() >= (failover ? 17 : 16),
          failover
              ? "failover slots need PostgreSQL 17+"
              : "logical decoding on a standby needs PostgreSQL 16+");
      primary =
          EmbeddedPostgresServer.builder()
              .majorVersion(pg.majorVersion())
              .settings(pg.settings())
              .start();
      made.add(primary);
    }
    if (mode.equals("standby")) {
      sourceStandby = primary.createStandby("fault_source");
      made.add(sourceStandby);
    }
    try {
      run(mode, failover, dir);
    } finally {
      // the standbys first: closing one still following its primary forgets it there
      for (int i = made.size() - 1; i >= 0; i--) {
        made.get(i).close();
      }
    }
  }

  private void run(String mode, boolean failover, Path dir) throws Exception {
    int rounds = Integer.getInteger("faults.rounds", 6);
    long seed = Long.getLong("faults.seed", System.nanoTime());
    Random random = new Random(seed);
    String slot = "faults_" + mode;
    String table = "numbered_" + mode;
    boolean onStandby = mode.equals("standby");
    primary.execute(
        "CREATE TABLE " + table + " (id bigint PRIMARY KEY)",
        "CREATE PUBLICATION " + slot + " FOR TABLE " + table);
    createSlot(slot, failover);
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
        // round 1 is always a decode-error round, so that a short run has one; in mode failover
        // the last round is a failover round if none came before
        int kind = round == 1 ? 3 : random.nextInt(failover ? 5 : onStandby ? 6 : 4);
        if (failover && round == rounds - 1 && !faults.containsKey(FAILOVER)) {
          kind = 4;
        }
        if (onStandby && round == Math.max(2, rounds * 2 / 3) && sourceStandby != null) {
          promote(consumer, table, ledger, workload);
          faults.merge(PROMOTION, 1, Integer::sum);
          continue;
        }
        if (onStandby && kind >= 4) {
          // the standby is promoted once, two thirds into the run (the rounds after it are the
          // stdout mode's against the promoted server); before, a primary crash instead
          if (sourceStandby == null) {
            kind = kind - 4; // promoted: a SIGKILL or a walsender termination
          } else {
            primary.restart(EmbeddedPostgresServer.ShutdownMode.IMMEDIATE);
            faults.merge("primary crash + restart", 1, Integer::sum);
            continue;
          }
        }
        switch (kind) {
          case 0 -> {
            consumer.kill(); // SIGKILL
            kills.add(Kill.after(ledger, store, slot));
            consumer = consumers.start(null);
            faults.merge("consumer SIGKILL", 1, Integer::sum);
          }
          case 1 -> {
            source()
                .execute(
                    "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
                        + " WHERE slot_name = '"
                        + slot
                        + "' AND active_pid IS NOT NULL");
            faults.merge("walsender terminated", 1, Integer::sum);
          }
          case 2 -> {
            EmbeddedPostgresServer crashed = source();
            crashed.restart(EmbeddedPostgresServer.ShutdownMode.IMMEDIATE);
            faults.merge(
                crashed == primary ? "PostgreSQL crash + restart" : "standby crash + restart",
                1,
                Integer::sum);
          }
          case 3 -> {
            // a value that cannot be decoded: written while the consumer is down, its type
            // dropped before the consumer reads it; the default policy (raw) must deliver it
            // marked, and the stream must go on
            consumer.kill();
            kills.add(Kill.after(ledger, store, slot));
            poisoned++;
            String poison = "poison_" + mode + poisoned;
            primary.execute(
                "CREATE DOMAIN " + poison + "_d AS int CHECK (VALUE > 0)",
                "CREATE TABLE " + poison + " (id bigint PRIMARY KEY, v " + poison + "_d[])",
                "ALTER PUBLICATION " + slot + " ADD TABLE " + poison,
                "INSERT INTO " + poison + " VALUES (" + poisoned + ", '{7}')",
                "DROP TABLE " + poison,
                "DROP DOMAIN " + poison + "_d");
            consumer = consumers.start(null);
            faults.merge("undecodable value (consumer SIGKILL, type dropped)", 1, Integer::sum);
          }
          default -> {
            standby = primary.createStandby("standby" + made.size());
            made.add(standby);
            // SIGTERM, a graceful stop, so that the next consumer's URL names the standby
            String walsender = activeWalsender(slot);
            consumer.stop();
            kills.add(Kill.after(ledger, store, slot));
            consumer = consumers.start(null);
            faults.merge("consumer SIGTERM for a new standby", 1, Integer::sum);
            // streaming again before the crash, so that the failover is what it meets
            await()
                .atMost(Duration.ofSeconds(60))
                .until(
                    () -> {
                      String now = activeWalsender(slot);
                      return !now.isEmpty() && !now.equals(walsender);
                    });
            failover(consumer, slot, table, ledger, workload);
            faults.merge(FAILOVER, 1, Integer::sum);
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
    try (Connection c = primary.getConnection();
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
            + " %d acknowledged and delivered again, %d missing%s%n",
        mode,
        seed,
        rounds,
        faults,
        poisonDelivered.size(),
        committed.size(),
        delivered.values().stream().mapToLong(n -> n).sum(),
        duplicates,
        acknowledgedAgain.size(),
        missing.size(),
        failoverMillis.isEmpty() ? "" : "; failovers: " + failoverMillis);
    assertEquals(List.of(), missing, "committed rows never delivered (seed " + seed + ")");
    Set<Long> poisonWritten = new TreeSet<>();
    for (long n = 1; n <= poisoned; n++) {
      poisonWritten.add(n);
    }
    assertEquals(poisonWritten, poisonDelivered, "undecodable rows delivered (seed " + seed + ")");
    assertEquals(List.of(), badPoison, "undecodable rows raw and marked (seed " + seed + ")");
    assertEquals(
        committed,
        new TreeSet<>(delivered.keySet()),
        "delivered rows that were never committed, or (failover) not in the final primary");
    assertEquals(
        List.of(),
        acknowledgedAgain,
        "acknowledged before a SIGKILL, delivered again (seed " + seed + ")");
  }

  /**
   * Creates the slot where the consumers stream from: on the primary (a failover slot in mode
   * failover), or on the standby once it has replayed the table and publication; a standby's slot
   * creation waits for a running-transactions record from the primary, which this asks for.
   */
  private void createSlot(String slot, boolean failover) throws Exception {
    String create =
        "SELECT pg_create_logical_replication_slot('"
            + slot
            + "', 'pgoutput'"
            + (failover ? ", failover => true)" : ")");
    EmbeddedPostgresServer on = sourceStandby;
    if (on == null) {
      primary.execute(create);
      return;
    }
    on.awaitReplay(Duration.ofSeconds(60));
    java.util.concurrent.CompletableFuture<Void> created =
        java.util.concurrent.CompletableFuture.runAsync(
            () -> {
              try {
                on.execute(create);
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
            });
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              primary.execute("SELECT pg_log_standby_snapshot()");
              return created.isDone();
            });
    created.get();
    // the primary keeps the catalog rows the new slot needs once the standby's hot_standby_feedback
    // names its catalog_xmin, in the standby's physical slot; a checkpoint writes that slot to
    // disk, so that a primary crash keeps it too (else, until the standby reconnects, the primary
    // protects only what the slot held at its last checkpoint, and the decode-error rounds' DDL can
    // invalidate the standby's slot: docs/configuration.md, "Streaming from a standby")
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                "t"
                    .equals(
                        primary.queryString(
                            "SELECT coalesce((SELECT catalog_xmin IS NOT NULL FROM"
                                + " pg_replication_slots WHERE slot_name = 'fault_source'),"
                                + " false)")));
    primary.execute("CHECKPOINT");
  }

  /**
   * Mode standby: crashes the primary and promotes the source's standby (the rows the standby had
   * not received are lost with the primary, and were never printed); the workload and the later
   * faults follow the promoted server; waits until the running consumer prints a row committed on
   * it.
   */
  private void promote(Consumer consumer, String table, Path ledger, Workload workload)
      throws Exception {
    // the standby first replays what the primary has flushed, so that every row the workload
    // counted (undecodable ones too) is in the promoted server; what the primary writes after
    // this may be lost with it, and was then never printed (the checker reads the final primary)
    EmbeddedPostgresServer old = primary;
    sourceStandby.awaitReplay(Duration.ofSeconds(60));
    long crashed = System.nanoTime();
    old.stop(EmbeddedPostgresServer.ShutdownMode.IMMEDIATE);
    EmbeddedPostgresServer promoted = sourceStandby;
    promoted.promote();
    primary = promoted;
    sourceStandby = null;
    awaitNewRowPrinted(consumer, table, ledger, workload, "the standby's promotion");
    failoverMillis.add(
        "promotion: crash to new row printed " + (System.nanoTime() - crashed) / 1_000_000 + " ms");
  }

  /** The pid of the walsender of {@code slot} on the primary, or the empty string if none. */
  private String activeWalsender(String slot) throws SQLException {
    return primary.queryString(
        "SELECT coalesce((SELECT active_pid::text FROM pg_replication_slots WHERE slot_name = '"
            + slot
            + "'), '')");
  }

  /**
   * Crashes the primary and promotes its standby, once the standby has synchronized the slot and
   * received the WAL written so far (later WAL reaches a failover slot's walsender only after the
   * standby has it: synchronized_standby_slots); then waits until the running consumer prints a row
   * committed on the new primary.
   */
  private void failover(
      Consumer consumer, String slot, String table, Path ledger, Workload workload)
      throws Exception {
    EmbeddedPostgresServer next = standby;
    long waiting = System.nanoTime();
    await()
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofMillis(200))
        .until(
            () -> {
              next.hurrySlotSync(); // else the sync worker may nap for up to 30 s
              return "t"
                  .equals(
                      next.queryString(
                          "SELECT coalesce((SELECT synced AND NOT temporary"
                              + " FROM pg_replication_slots WHERE slot_name = '"
                              + slot
                              + "'), false)"));
            });
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
    old.close();
    awaitNewRowPrinted(consumer, table, ledger, workload, "the failover");
    failoverMillis.add(
        "sync "
            + (crashed - waiting) / 1_000_000
            + " ms, crash to new row printed "
            + (System.nanoTime() - crashed) / 1_000_000
            + " ms");
  }

  /**
   * After a promotion, waits until the running consumer prints a row the workload committed on the
   * new primary, failing with the consumer's stderr if it died.
   */
  private void awaitNewRowPrinted(
      Consumer consumer, String table, Path ledger, Workload workload, String what)
      throws Exception {
    long target = workload.committed.get() + 50;
    await().atMost(Duration.ofSeconds(60)).until(() -> workload.committed.get() >= target);
    long newest = Long.parseLong(primary.queryString("SELECT max(id) FROM " + table));
    Process process = consumer.process();
    await()
        .atMost(Duration.ofSeconds(90))
        .until(() -> !process.isAlive() || printedAtLeast(ledger, newest));
    if (!process.isAlive()) {
      List<String> err =
          Files.readAllLines(ledger.resolveSibling("consumer.err"), StandardCharsets.UTF_8);
      fail(
          "the consumer did not survive "
              + what
              + " (exit "
              + process.exitValue()
              + "); its stderr ends with:\n"
              + String.join("\n", err.subList(Math.max(0, err.size() - 20), err.size())));
    }
  }

  /**
   * Whether the last 256 kB of the ledger hold a row (not an undecodable one) {@code id} or more.
   */
  private static boolean printedAtLeast(Path ledger, long id) throws IOException {
    byte[] all = Files.readAllBytes(ledger);
    int from = Math.max(0, all.length - (1 << 18));
    String tail = new String(all, from, all.length - from, StandardCharsets.UTF_8);
    ObjectMapper json = new ObjectMapper();
    for (String line : tail.split("\n")) {
      try {
        JsonNode event = json.readTree(line);
        if (event != null
            && event.has("after")
            && !event.get("table").asText().startsWith("poison")
            && event.get("after").get("id").asLong() >= id) {
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
      waitForEnd();
    }

    /** SIGTERM (a graceful stop), then waits as {@link #kill()} does. */
    void stop() throws InterruptedException {
      process.toHandle().destroy();
      waitForEnd();
    }

    private void waitForEnd() throws InterruptedException {
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
          new ArrayList<>(
              PgcdcProcess.command(
                  mode.equals("failover")
                      ? PgcdcProcess.streamArgs(
                          failoverUrl(), primary.user(), store, slot, slot, "--failover-slot")
                      : sourceStandby != null
                          ? PgcdcProcess.streamArgs(
                              sourceStandby,
                              store,
                              slot,
                              slot,
                              "--primary-url",
                              primary.jdbcUrl(),
                              // a standby restarted in the round before may still be starting
                              "--retry-start")
                          : PgcdcProcess.streamArgs(primary, store, slot, slot)));
      if (idleExit != null) {
        command.addAll(List.of("--idle-exit", idleExit));
      }
      ProcessBuilder builder =
          new ProcessBuilder(command)
              .redirectError(
                  ProcessBuilder.Redirect.appendTo(ledger.resolveSibling("consumer.err").toFile()));
      switch (mode) {
        case "stdout", "failover", "standby" ->
            builder.redirectOutput(ProcessBuilder.Redirect.appendTo(ledger.toFile()));
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

    /** The primary, and its standby if there is one, with {@code targetServerType=primary}. */
    private String failoverUrl() {
      return "jdbc:postgresql://"
          + EmbeddedPostgresServer.HOST
          + ":"
          + primary.port()
          + (standby == null ? "" : "," + EmbeddedPostgresServer.HOST + ":" + standby.port())
          + "/"
          + EmbeddedPostgresServer.DEFAULT_DATABASE
          + "?user="
          + primary.user()
          + "&targetServerType=primary";
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

  /**
   * Commits transactions of 1 to 20 numbered rows until stopped; survives server restarts, and
   * follows the primary to a promoted standby.
   */
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
            c = primary.getConnection();
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

package io.datum.cdc.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SnapshotProgress;
import io.datum.cdc.TableId;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.store.file.FileCheckpointStore;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The snapshot phase of fault injection: {@code pgcdc stream --snapshot initial --create-slot} with
 * small chunks over three tables (a bigint key, a composite key, a partitioned table published via
 * its root) of tens of thousands of rows, SIGKILLed at random moments of its snapshot (the first
 * kill in the exported phase, the next ones during the online remainder the restarted consumers
 * read) and restarted each time on the same {@code file:} store, while a writer inserts, updates
 * (also the key) and deletes. Keys are never reused: inserts and key updates take fresh keys above
 * every initial one, so a key's rows are one row's history.
 *
 * <p>Two tables without a key ride along: {@code s_log} (insert-only, default replica identity) and
 * {@code s_full} (REPLICA IDENTITY FULL, duplicate rows, updates, deletes, one TRUNCATE). The first
 * run reads them at the exported snapshot; a run after a kill reads one not yet done whole again,
 * after a reset (a {@code truncate} line with a {@code snapshot} object). Replaying every line in
 * order (a truncate empties the table, a change line once by {@code tx_end_lsn} and {@code
 * event_index}) gives each as a multiset of rows, and after a reset in a run every update and
 * delete finds its old row.
 *
 * <p>At the end, after a sentinel row per table, the checker proves: (1) no read row whose
 * acknowledgement the store held right after a kill (its key outside the table's remaining ranges,
 * or listed as acknowledged in them, or the table done) is printed again by a later consumer; (2)
 * replaying every printed line in order into one map per table gives the table's content, row by
 * row; (3) within one consumer's run, no read line of a key comes after a change line of that key
 * unless it carries the values of the last such change (a read after a delete or a key change away
 * is never right); and the store records the initial snapshot as completed. Runs in each
 * acknowledgement mode (stdout, {@code --output}, {@code --acks-from -}; {@code
 * -Dfaults.snapshot.modes=stdout} for one). Kills: {@code -Dfaults.snapshot.kills=N} (default 4),
 * seed {@code -Dfaults.seed=S}, table sizes {@code -Dfaults.snapshot.rows=N} (see {@link
 * #SIMPLE_ROWS}).
 *
 * <p>{@code fsync=on} (the testkit turns it off): the workload commits as fast as the server lets
 * it, and every committed row must then be delivered, at the pace of a store that syncs each
 * acknowledgement; without fsync the workload commits four to eight times as many rows, which only
 * makes the run longer.
 */
@EmbeddedPostgresTest(settings = "fsync=on")
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class SnapshotFaultInjectionTest {

  /**
   * Rows of {@code s_simple}: {@code -Dfaults.snapshot.rows=N}, 20,000 by default (a CI run; 90,000
   * initial rows in the three tables at 40,000, which {@code -Pfull-size} runs); {@code s_comp} has
   * N / 2 rows, {@code s_part} 3N / 4.
   */
  private static final int SIMPLE_ROWS = Integer.getInteger("faults.snapshot.rows", 20_000);

  private static final int COMP_A = Math.max(2, SIMPLE_ROWS / 200);
  private static final int COMP_B = 100;
  private static final int PART_ROWS = SIMPLE_ROWS * 3 / 4;
  private static final long FRESH = 1_000_000;

  private static final Map<String, List<String>> KEYS =
      Map.of("s_simple", List.of("id"), "s_comp", List.of("a", "b"), "s_part", List.of("id"));

  /** Tables without a key, replayed as multisets of rows; {@code s_full} is truncated once. */
  private static final List<String> KEYLESS = List.of("s_log", "s_full");

  private static final int LOG_ROWS = SIMPLE_ROWS / 4;
  private static final int FULL_ROWS = SIMPLE_ROWS / 4;
  private static final int FULL_GROUPS = Math.max(2, FULL_ROWS / 10);

  private final EmbeddedPostgresServer pg;

  SnapshotFaultInjectionTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  /** The acknowledgement modes to run: {@code -Dfaults.snapshot.modes=stdout,output,acks}. */
  static List<String> modes() {
    return List.of(System.getProperty("faults.snapshot.modes", "stdout,output,acks").split(","));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("modes")
  void killedDuringTheSnapshotNothingIsLostNoAcknowledgedRowComesAgain(
      String mode, @TempDir Path dir) throws Exception {
    int kills = Integer.getInteger("faults.snapshot.kills", 4);
    long seed = Long.getLong("faults.seed", System.nanoTime());
    Random random = new Random(seed);
    String schema = "snap_" + mode;
    String slot = "snapfaults_" + mode;
    pg.execute(
        "CREATE SCHEMA " + schema,
        "SET search_path TO " + schema,
        "CREATE TABLE s_simple (id bigint PRIMARY KEY, v int NOT NULL, s text)",
        "INSERT INTO s_simple SELECT g, 0, 'row ' || g FROM generate_series(1, "
            + SIMPLE_ROWS
            + ") g",
        "CREATE TABLE s_comp (a int, b int, v int NOT NULL, PRIMARY KEY (a, b))",
        "INSERT INTO s_comp SELECT a, b, 0 FROM generate_series(1, "
            + COMP_A
            + ") a, generate_series(1, "
            + COMP_B
            + ") b",
        "CREATE TABLE s_part (id bigint PRIMARY KEY, v int NOT NULL) PARTITION BY RANGE (id)",
        "CREATE TABLE s_part_1 PARTITION OF s_part FOR VALUES FROM (MINVALUE) TO ("
            + PART_ROWS / 3
            + ")",
        "CREATE TABLE s_part_2 PARTITION OF s_part FOR VALUES FROM ("
            + PART_ROWS / 3
            + ") TO ("
            + PART_ROWS * 2 / 3
            + ")",
        "CREATE TABLE s_part_3 PARTITION OF s_part FOR VALUES FROM ("
            + PART_ROWS * 2 / 3
            + ") TO (MAXVALUE)",
        "INSERT INTO s_part SELECT g, 0 FROM generate_series(1, " + PART_ROWS + ") g",
        // tables without a key: insert-only, and REPLICA IDENTITY FULL with duplicate rows
        "CREATE TABLE s_log (at bigint, what text)",
        "INSERT INTO s_log SELECT g, 'boot' FROM generate_series(1, " + LOG_ROWS + ") g",
        "CREATE TABLE s_full (a int, b text)",
        "ALTER TABLE s_full REPLICA IDENTITY FULL",
        "INSERT INTO s_full SELECT g % "
            + FULL_GROUPS
            + ", 'b' FROM generate_series(1, "
            + FULL_ROWS
            + ") g",
        "ANALYZE s_simple, s_comp, s_part, s_log, s_full",
        "CREATE PUBLICATION "
            + slot
            + " FOR TABLE s_simple, s_comp, s_part, s_log, s_full"
            + " WITH (publish_via_partition_root = true)");
    Path ledger = dir.resolve("ledger.jsonl");
    Files.createFile(ledger);
    Path store = dir.resolve("store");
    Launcher launcher = new Launcher(mode, slot, ledger, store);
    LineCounter counter = new LineCounter(ledger, slot);
    Writer workload = new Writer(schema);
    Thread writer = new Thread(workload, "snapshot-fault-writer");
    List<Kill> killed = new ArrayList<>();
    int initialRows = SIMPLE_ROWS + COMP_A * COMP_B + PART_ROWS + LOG_ROWS + FULL_ROWS;
    int duringSnapshot = 0;
    int killsInKeylessReads = 0;
    long started = System.nanoTime();
    Consumer consumer = launcher.start(false);
    writer.start();
    try {
      for (int kk = 0; kk < kills; kk++) {
        int k = kk;
        // the first kill within the exported phase (before every initial row was printed); the
        // later ones once the restarted consumer printed a random number of read rows of the
        // online remainder (it streams the changes since the consistent point meanwhile)
        long target =
            counter.reads()
                + (k == 0 ? 500 + random.nextInt(initialRows / 3) : 100 + random.nextInt(3000));
        Process process = consumer.process();
        long resetsBefore = counter.resets();
        long linesBefore = counter.lines();
        long waitForReset = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        await()
            .atMost(Duration.ofSeconds(120))
            .conditionEvaluationListener(
                c -> {
                  if (c.getRemainingTimeInMS() < 200 && !c.isSatisfied()) {
                    try {
                      System.out.println(
                          "kill "
                              + k
                              + ": no progress; lines "
                              + linesBefore
                              + " -> "
                              + counter.lines()
                              + "; consumer.err tail:\n"
                              + stderrTail(ledger));
                    } catch (IOException e) {
                      throw new UncheckedIOException(e);
                    }
                  }
                })
            .pollInterval(Duration.ofMillis(5))
            .until(
                () ->
                    // the second and third kill wait up to 20 s for a reset (the keyless tables
                    // may be done already: then no reset comes)
                    counter.reads() >= target
                            && (k != 1 && k != 2 || System.nanoTime() > waitForReset)
                        || (k > 0 && counter.resets() > resetsBefore)
                        // the snapshot ended before the target: the consumer only streams
                        || counter.lines() >= linesBefore + 50_000
                        || !process.isAlive());
        if (k > 0 && counter.resets() > resetsBefore && process.isAlive()) {
          // a table without a key is being read after its reset: the second kill right at the
          // reset, later ones within the table's read rows
          long within = counter.reads() + (k == 1 ? 0 : random.nextInt(400));
          await()
              .atMost(Duration.ofSeconds(120))
              .pollInterval(Duration.ofMillis(2))
              .until(() -> counter.reads() >= within || !process.isAlive());
          killsInKeylessReads++;
        }
        if (!process.isAlive()) {
          fail("consumer exited (" + process.exitValue() + "): " + stderrTail(ledger));
        }
        consumer.kill();
        if (mode.equals("output")) {
          counter.forgetIncompleteLine(); // the next consumer cuts it off (SyncedFileOutput)
        }
        Kill kill = Kill.after(counter.lines(), store, slot);
        killed.add(kill);
        if (kill.snapshotInProgress()) {
          duringSnapshot++;
        }
        consumer = launcher.start(false);
      }
      // let the restarted consumer read on while the writer goes on
      long more = counter.lines() + 2000;
      Process process = consumer.process();
      await()
          .atMost(Duration.ofSeconds(120))
          .until(() -> counter.lines() >= more || !process.isAlive());
    } finally {
      workload.stop.set(true);
      writer.join();
    }
    if (workload.failure != null) {
      throw workload.failure;
    }
    consumer.kill();
    killed.add(Kill.after(counter.lines(), store, slot));
    pg.execute(
        "SET search_path TO " + schema,
        "INSERT INTO s_simple VALUES (-1, -1, 'sentinel')",
        "INSERT INTO s_comp VALUES (-1, -1, -1)",
        "INSERT INTO s_part VALUES (-1, -1)");
    Consumer last = launcher.start(true);
    long size = -1;
    long progress = System.nanoTime();
    while (!last.process().waitFor(3, TimeUnit.SECONDS)
        && System.nanoTime() - progress < TimeUnit.SECONDS.toNanos(60)) {
      long now = Files.size(ledger);
      if (now != size) {
        size = now;
        progress = System.nanoTime();
      }
    }
    if (last.process().isAlive()) {
      last.kill();
      fail("final consumer made no progress for 60 s: " + stderrTail(ledger));
    }
    last.waitForEnd();
    long millis = (System.nanoTime() - started) / 1_000_000;

    // the ledger, and the runs it consists of
    ObjectMapper json = new ObjectMapper();
    List<JsonNode> lines = new ArrayList<>();
    for (String line : Files.readAllLines(ledger, StandardCharsets.UTF_8)) {
      JsonNode event = null;
      try {
        event = line.isBlank() ? null : json.readTree(line);
      } catch (JacksonException torn) {
        // the last line of a consumer killed while writing it
      }
      lines.add(event);
    }
    List<Integer> runStarts = new ArrayList<>(List.of(0));
    for (Kill kill : killed) {
      runStarts.add(Math.min(kill.linesBefore(), lines.size()));
    }

    // (1) acknowledged at a kill, printed again after it
    List<String> acknowledgedAgain = new ArrayList<>();
    // read lines / change lines the store held as acknowledged at each kill
    List<String> acknowledgedAtKills = new ArrayList<>();
    for (Kill kill : killed) {
      List<JsonNode> before = lines.subList(0, Math.min(kill.linesBefore(), lines.size()));
      acknowledgedAtKills.add(
          before.stream()
                  .filter(
                      e ->
                          e != null && e.path("op").asText().equals("read") && kill.acknowledged(e))
                  .count()
              + "/"
              + before.stream()
                  .filter(
                      e ->
                          e != null
                              && !e.path("op").asText().equals("read")
                              && kill.acknowledged(e))
                  .count());
      for (JsonNode event :
          lines.subList(Math.min(kill.linesBefore(), lines.size()), lines.size())) {
        if (event != null && kill.acknowledged(event)) {
          acknowledgedAgain.add(event.toString());
        }
      }
    }

    // (2) replay everything in order; tables without a key as multisets, a change line once
    // (docs/json-lines.md: identify events by tx_end_lsn and event_index to drop duplicates)
    Map<String, Map<Map<String, String>, Integer>> bags = new HashMap<>();
    java.util.Set<String> changesApplied = new java.util.HashSet<>();
    List<String> missingOldRows = new ArrayList<>();
    Map<String, Integer> resets = new HashMap<>();
    Map<String, Map<List<String>, Map<String, String>>> replica = new HashMap<>();
    Map<String, Map<List<String>, Integer>> readCounts = new HashMap<>();
    long readLines = 0;
    long changeLines = 0;
    // (3) per run: the last change line of each key
    List<String> staleReads = new ArrayList<>();
    List<String> runs = new ArrayList<>(); // per run: read lines / change lines
    for (int r = 0; r < runStarts.size(); r++) {
      int from = runStarts.get(r);
      int to = r + 1 < runStarts.size() ? runStarts.get(r + 1) : lines.size();
      long readsBefore = readLines;
      long changesBefore = changeLines;
      java.util.Set<String> resetInRun = new java.util.HashSet<>();
      Map<String, JsonNode> lastChange = new HashMap<>(); // table|key -> after, or null (gone)
      Map<String, Boolean> changed = new HashMap<>();
      for (JsonNode event : lines.subList(from, Math.max(from, to))) {
        if (event != null && event.path("op").asText().equals("truncate")) {
          boolean reset = event.has("snapshot");
          String position = event.get("tx_end_lsn").asText() + "/" + event.get("event_index");
          if (!reset && !changesApplied.add(position)) {
            continue;
          }
          for (JsonNode t : event.get("tables")) {
            String name = t.get("table").asText();
            bags.computeIfAbsent(name, n -> new HashMap<>()).clear();
            replica.computeIfAbsent(name, n -> new HashMap<>()).clear();
            if (reset) {
              resets.merge(name, 1, Integer::sum);
              resetInRun.add(name);
            }
          }
          continue;
        }
        if (event == null || !event.has("table")) {
          continue;
        }
        String table = event.get("table").asText();
        if (KEYLESS.contains(table)) {
          String op = event.get("op").asText();
          Map<Map<String, String>, Integer> bag = bags.computeIfAbsent(table, n -> new HashMap<>());
          if (op.equals("read")) {
            readLines++;
            bag.merge(values(event.get("after")), 1, Integer::sum);
            continue;
          }
          changeLines++;
          if (!changesApplied.add(
              event.get("tx_end_lsn").asText() + "/" + event.get("event_index"))) {
            continue; // printed again after a kill before its acknowledgement was stored
          }
          JsonNode before = event.get("before");
          if (before != null && !before.isNull()) {
            Map<String, String> old = values(before);
            Integer n = bag.get(old);
            if (n == null) {
              if (resetInRun.contains(table)) {
                // after a reset in this run the bag is the table's content: an old row is there
                missingOldRows.add("run " + r + ": " + event);
              }
            } else if (n == 1) {
              bag.remove(old);
            } else {
              bag.put(old, n - 1);
            }
          }
          JsonNode after = event.get("after");
          if (after != null && !after.isNull()) {
            Map<String, String> row = values(before != null && !before.isNull() ? before : after);
            row.putAll(values(after));
            bag.merge(row, 1, Integer::sum);
          }
          continue;
        }
        if (!KEYS.containsKey(table)) {
          continue;
        }
        Map<List<String>, Map<String, String>> rows =
            replica.computeIfAbsent(table, t -> new HashMap<>());
        String op = event.get("op").asText();
        switch (op) {
          case "read" -> {
            readLines++;
            List<String> key = key(table, event.get("after"));
            readCounts.computeIfAbsent(table, t -> new HashMap<>()).merge(key, 1, Integer::sum);
            String id = table + "|" + key;
            if (changed.containsKey(id)) {
              JsonNode newest = lastChange.get(id);
              if (newest == null || !newest.equals(event.get("after"))) {
                staleReads.add(
                    "run " + r + ": " + event + " after " + (newest == null ? "its end" : newest));
              }
            }
            rows.put(key, values(event.get("after")));
          }
          case "insert" -> {
            changeLines++;
            List<String> key = key(table, event.get("after"));
            rows.put(key, values(event.get("after")));
            changed.put(table + "|" + key, true);
            lastChange.put(table + "|" + key, event.get("after"));
          }
          case "update" -> {
            changeLines++;
            JsonNode before = event.get("before");
            List<String> key = key(table, event.get("after"));
            if (before != null && !before.isNull()) {
              List<String> old = key(table, before);
              if (!old.equals(key)) {
                rows.remove(old);
                changed.put(table + "|" + old, true);
                lastChange.put(table + "|" + old, null);
              }
            }
            rows.put(key, values(event.get("after")));
            changed.put(table + "|" + key, true);
            lastChange.put(table + "|" + key, event.get("after"));
          }
          case "delete" -> {
            changeLines++;
            List<String> key = key(table, event.get("before"));
            rows.remove(key);
            changed.put(table + "|" + key, true);
            lastChange.put(table + "|" + key, null);
          }
          default -> fail("unexpected event " + event);
        }
      }
      runs.add((readLines - readsBefore) + "/" + (changeLines - changesBefore));
    }
    Map<String, Map<List<String>, Map<String, String>>> content = new HashMap<>();
    Map<String, Map<Map<String, String>, Integer>> keylessContent = new HashMap<>();
    try (Connection c = pg.getConnection()) {
      for (String table : KEYS.keySet()) {
        content.put(table, content(c, schema + "." + table, table));
      }
      for (String table : KEYLESS) {
        keylessContent.put(table, multiset(c, schema + "." + table));
      }
    }
    long reReads = 0;
    long distinctRead = 0;
    for (Map<List<String>, Integer> counts : readCounts.values()) {
      distinctRead += counts.size();
      for (int n : counts.values()) {
        reReads += n - 1;
      }
    }
    long finalRows = content.values().stream().mapToLong(Map::size).sum();
    CdcCheckpoint end;
    try (FileCheckpointStore checkpoints = FileCheckpointStore.open(store)) {
      end = checkpoints.load(slot).orElseThrow();
    }
    System.out.printf(
        "snapshot fault injection, %s mode (seed %d, %d ms): %d SIGKILLs, %d of them during the"
            + " snapshot (first in the exported phase: %s); %d initial rows, %d writes; %d lines,"
            + " %d read lines of %d distinct keys (%d read again, unacknowledged at a kill),"
            + " %d change lines; read/change lines per run %s; read/change lines acknowledged at"
            + " each kill %s; %d acknowledged reads"
            + " printed again, %d stale reads;"
            + " %d rows at the end; resets of tables without a key %s, %d kills after one%n",
        mode,
        seed,
        millis,
        killed.size() - 1,
        duringSnapshot,
        killed.get(0).snapshotInProgress(),
        initialRows,
        workload.writes.get(),
        lines.size(),
        readLines,
        distinctRead,
        reReads,
        changeLines,
        runs,
        acknowledgedAtKills,
        acknowledgedAgain.size(),
        staleReads.size(),
        finalRows,
        resets,
        killsInKeylessReads);
    assertTrue(killed.get(0).snapshotInProgress(), "the first kill fell in the snapshot");
    assertEquals(
        List.of(),
        acknowledgedAgain.subList(0, Math.min(20, acknowledgedAgain.size())),
        "acknowledged before a SIGKILL, printed again (seed " + seed + ")");
    assertEquals(
        List.of(),
        staleReads.subList(0, Math.min(20, staleReads.size())),
        "read lines after a newer change of their key (seed " + seed + ")");
    for (String table : KEYS.keySet()) {
      Map<List<String>, Map<String, String>> expected = content.get(table);
      Map<List<String>, Map<String, String>> got = replica.getOrDefault(table, Map.of());
      List<String> diff = new ArrayList<>();
      for (var e : expected.entrySet()) {
        if (!e.getValue().equals(got.get(e.getKey()))) {
          diff.add(e.getKey() + ": table " + e.getValue() + ", replayed " + got.get(e.getKey()));
        }
      }
      for (var e : got.entrySet()) {
        if (!expected.containsKey(e.getKey())) {
          diff.add(e.getKey() + ": not in the table, replayed " + e.getValue());
        }
      }
      assertEquals(
          List.of(),
          diff.subList(0, Math.min(20, diff.size())),
          table
              + ": replayed lines against the table, "
              + diff.size()
              + " rows differ (seed "
              + seed
              + ")");
      assertTrue(
          expected.containsKey(KEYS.get(table).size() == 1 ? List.of("-1") : List.of("-1", "-1")));
    }
    for (String table : KEYLESS) {
      Map<Map<String, String>, Integer> expected = keylessContent.get(table);
      Map<Map<String, String>, Integer> got = bags.getOrDefault(table, Map.of());
      List<String> diff = new ArrayList<>();
      for (var e : expected.entrySet()) {
        if (!e.getValue().equals(got.get(e.getKey()))) {
          diff.add(e.getKey() + ": table x" + e.getValue() + ", replayed x" + got.get(e.getKey()));
        }
      }
      for (var e : got.entrySet()) {
        if (!expected.containsKey(e.getKey())) {
          diff.add(e.getKey() + ": not in the table, replayed x" + e.getValue());
        }
      }
      assertEquals(
          List.of(),
          diff.subList(0, Math.min(20, diff.size())),
          table
              + " (no key, a multiset): replayed lines against the table, "
              + diff.size()
              + " rows differ; resets "
              + resets
              + " (seed "
              + seed
              + ")");
    }
    assertEquals(
        List.of(),
        missingOldRows.subList(0, Math.min(20, missingOldRows.size())),
        "updates and deletes after a reset whose old row was not replayed (seed " + seed + ")");
    assertTrue(end.snapshot().initialCompleted(), "initial snapshot completed: " + end.snapshot());
  }

  private static List<String> key(String table, JsonNode row) {
    List<String> key = new ArrayList<>();
    for (String column : KEYS.get(table)) {
      key.add(row.get(column).asText());
    }
    return key;
  }

  private static Map<String, String> values(JsonNode row) {
    Map<String, String> out = new LinkedHashMap<>();
    row.fields()
        .forEachRemaining(
            e -> out.put(e.getKey(), e.getValue().isNull() ? null : e.getValue().asText()));
    return out;
  }

  private static Map<List<String>, Map<String, String>> content(
      Connection c, String qualified, String table) throws SQLException {
    Map<List<String>, Map<String, String>> out = new HashMap<>();
    for (Map<String, String> row : rows(c, qualified)) {
      List<String> key = new ArrayList<>();
      for (String column : KEYS.get(table)) {
        key.add(row.get(column));
      }
      out.put(key, row);
    }
    return out;
  }

  /** A table's rows as a multiset (column to text value, to copies). */
  private static Map<Map<String, String>, Integer> multiset(Connection c, String qualified)
      throws SQLException {
    Map<Map<String, String>, Integer> out = new HashMap<>();
    for (Map<String, String> row : rows(c, qualified)) {
      out.merge(row, 1, Integer::sum);
    }
    return out;
  }

  /** Every row of a table, column to text value. */
  private static List<Map<String, String>> rows(Connection c, String qualified)
      throws SQLException {
    List<Map<String, String>> out = new ArrayList<>();
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT * FROM " + qualified)) {
      ResultSetMetaData md = rs.getMetaData();
      while (rs.next()) {
        Map<String, String> row = new LinkedHashMap<>();
        for (int i = 1; i <= md.getColumnCount(); i++) {
          row.put(md.getColumnName(i), rs.getString(i));
        }
        out.add(row);
      }
    }
    return out;
  }

  private static String stderrTail(Path ledger) throws IOException {
    List<String> err =
        Files.readAllLines(ledger.resolveSibling("consumer.err"), StandardCharsets.UTF_8);
    return String.join("\n", err.subList(Math.max(0, err.size() - 40), err.size()));
  }

  /** Counts the ledger's lines, and its read lines, incrementally. */
  private static final class LineCounter {
    private static final byte[] READ = "{\"op\":\"read\"".getBytes(StandardCharsets.UTF_8);
    private final byte[] reset;
    private final Path file;
    private long position;
    private long lines;
    private long reads;
    private long resets;
    private int matched; // bytes of READ matched at the start of the current line; -1: no match
    private int matchedReset; // the same for a reset's prefix
    private long lineStart; // where the line being counted (no '\n' seen yet) begins
    private boolean lineRead; // whether that line was counted as a read
    private boolean lineReset; // ... as a reset

    LineCounter(Path file, String slot) {
      this.file = file;
      // a snapshot's reset: a truncate line of xid 0 (a TRUNCATE the stream decoded has an xid)
      this.reset =
          ("{\"op\":\"truncate\",\"slot\":\"" + slot + "\",\"xid\":0,")
              .getBytes(StandardCharsets.UTF_8);
    }

    synchronized long resets() throws IOException {
      lines();
      return resets;
    }

    synchronized long lines() throws IOException {
      try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
        long length = f.length();
        while (length > position) {
          f.seek(position);
          byte[] buffer = new byte[(int) Math.min(length - position, 1 << 20)];
          int n = f.read(buffer);
          for (int i = 0; i < n; i++) {
            byte b = buffer[i];
            if (b == '\n') {
              lines++;
              matched = 0;
              matchedReset = 0;
              lineStart = position + i + 1;
              lineRead = false;
              lineReset = false;
              continue;
            }
            if (matched >= 0 && matched < READ.length) {
              matched = b == READ[matched] ? matched + 1 : -1;
              if (matched == READ.length) {
                reads++;
                lineRead = true;
              }
            }
            if (matchedReset >= 0 && matchedReset < reset.length) {
              matchedReset = b == reset[matchedReset] ? matchedReset + 1 : -1;
              if (matchedReset == reset.length) {
                resets++;
                lineReset = true;
              }
            }
          }
          position += n;
        }
      }
      return lines;
    }

    synchronized long reads() throws IOException {
      lines();
      return reads;
    }

    /**
     * After a kill in output mode: forgets the incomplete last line the killed consumer left, which
     * the next one cuts off before it appends (SyncedFileOutput), so that counting goes on from
     * where the next line will begin. Without this the counter's position stayed past the cut,
     * skipped as many bytes of the next run's lines, and every later kill's line count came out one
     * short (a line printed before a kill was then taken for one printed after it).
     */
    synchronized void forgetIncompleteLine() throws IOException {
      lines();
      if (lineStart < position) {
        position = lineStart;
        reads -= lineRead ? 1 : 0;
        resets -= lineReset ? 1 : 0;
        matched = 0;
        matchedReset = 0;
        lineRead = false;
        lineReset = false;
      }
    }
  }

  /**
   * What the store held right after a consumer was SIGKILLed, and how many ledger lines were
   * written by then.
   */
  private record Kill(int linesBefore, CdcCheckpoint stored) {

    static Kill after(long lines, Path store, String slot) throws Exception {
      try (FileCheckpointStore checkpoints = FileCheckpointStore.open(store)) {
        return new Kill((int) lines, checkpoints.load(slot).orElse(null));
      }
    }

    boolean snapshotInProgress() {
      return stored == null || !stored.snapshot().initialCompleted();
    }

    /**
     * Whether the store held the event's acknowledgement: a change by its position, a read row by
     * the snapshot's progress (its table done, or its key outside every range left, or listed as
     * acknowledged in its range).
     */
    boolean acknowledged(JsonNode event) {
      if (stored == null || !event.has("table")) {
        return false;
      }
      if (!event.get("op").asText().equals("read")) {
        return stored.isAcknowledged(
            PgLsn.parse(event.get("tx_end_lsn").asText()), event.get("event_index").asInt());
      }
      SnapshotProgress progress = stored.snapshot();
      if (progress.initialCompleted()) {
        return true;
      }
      if (progress.holdLsn() == null) {
        return false; // the initial snapshot had not started when the store was last written
      }
      String table = event.get("table").asText();
      SnapshotProgress.TableSnapshot t =
          progress.table(new TableId(event.get("schema").asText(), table));
      if (t == null) {
        return true;
      }
      if (KEYLESS.contains(table)) {
        return false; // all or nothing: acknowledged only once the table is done
      }
      List<String> key = key(table, event.get("after"));
      for (SnapshotProgress.KeyRange range : t.remaining()) {
        boolean above = range.after() == null || compare(key, range.after()) > 0;
        boolean below = range.through() == null || compare(key, range.through()) <= 0;
        if (above && below) {
          return range.acknowledged().contains(key);
        }
      }
      return true;
    }

    private static int compare(List<String> a, List<String> b) {
      for (int i = 0; i < a.size(); i++) {
        int c = Long.compare(Long.parseLong(a.get(i)), Long.parseLong(b.get(i)));
        if (c != 0) {
          return c;
        }
      }
      return 0;
    }
  }

  /** A running consumer, and in {@code acks} mode the thread that reads and acknowledges. */
  private record Consumer(Process process, Thread pump) {

    void kill() throws InterruptedException {
      process.toHandle().destroyForcibly();
      waitForEnd();
    }

    void waitForEnd() throws InterruptedException {
      process.waitFor();
      if (pump != null) {
        pump.join();
      }
    }
  }

  /** Starts consumers of one acknowledgement mode, as FaultInjectionTest does. */
  private final class Launcher {
    final String mode;
    final String slot;
    final Path ledger;
    final Path store;

    Launcher(String mode, String slot, Path ledger, Path store) {
      this.mode = mode;
      this.slot = slot;
      this.ledger = ledger;
      this.store = store;
    }

    Consumer start(boolean idleExit) throws Exception {
      List<String> command =
          new ArrayList<>(
              PgcdcProcess.command(
                  PgcdcProcess.streamArgs(
                      pg,
                      store,
                      slot,
                      slot,
                      "--create-slot",
                      "--snapshot",
                      "initial",
                      "--snapshot-chunk-rows",
                      "200",
                      "--snapshot-parallelism",
                      "2")));
      if (idleExit) {
        command.addAll(List.of("--idle-exit", "3"));
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
      Thread pump = new Thread(() -> pump(process), "snapshot-fault-acks");
      pump.start();
      return new Consumer(process, pump);
    }

    /** Appends each line to the ledger, then acknowledges it, until stdout ends. */
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
              acking = false;
            }
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /**
   * Inserts (fresh keys), updates (values, and keys to fresh ones, also across partitions) and
   * deletes rows of the three keyed tables; inserts into {@code s_log}; inserts duplicates into,
   * updates and deletes one copy of rows of {@code s_full}, and truncates it once (then fills it
   * again); one statement per transaction, until stopped.
   */
  private final class Writer implements Runnable {
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicLong writes = new AtomicLong();
    final String schema;

    /** The write count at which {@code s_full} is truncated (and filled again) once. */
    final long truncateAt = 500;

    volatile Exception failure;

    Writer(String schema) {
      this.schema = schema;
    }

    @Override
    public void run() {
      Random random = new Random();
      long fresh = FRESH;
      try (Connection c = pg.getConnection();
          Statement st = c.createStatement()) {
        st.execute("SET search_path TO " + schema);
        while (!stop.get()) {
          int op = random.nextInt(10);
          long id = 1 + random.nextInt(SIMPLE_ROWS);
          int a = 1 + random.nextInt(COMP_A);
          int b = 1 + random.nextInt(COMP_B);
          long p = 1 + random.nextInt(PART_ROWS);
          int g = random.nextInt(FULL_GROUPS);
          if (truncateAt > 0 && writes.get() == truncateAt) {
            st.execute("TRUNCATE s_full");
            st.execute(
                "INSERT INTO s_full SELECT g % "
                    + FULL_GROUPS
                    + ", 'again' FROM"
                    + " generate_series(1, "
                    + FULL_ROWS / 2
                    + ") g");
          }
          String sql =
              switch (random.nextInt(5) * 10 + op) {
                case 0, 1, 2 ->
                    "INSERT INTO s_simple VALUES (" + fresh++ + ", 1, 'new " + fresh + "')";
                case 3, 4, 5 -> "UPDATE s_simple SET v = v + 1, s = s || '+' WHERE id = " + id;
                case 6, 7 -> "UPDATE s_simple SET id = " + fresh++ + ", v = v + 1 WHERE id = " + id;
                case 8, 9 -> "DELETE FROM s_simple WHERE id = " + id;
                case 10, 11, 12 -> "INSERT INTO s_comp VALUES (" + fresh++ + ", 1, 1)";
                case 13, 14, 15 -> "UPDATE s_comp SET v = v + 1 WHERE a = " + a + " AND b = " + b;
                case 16, 17 ->
                    "UPDATE s_comp SET a = "
                        + fresh++
                        + ", v = v + 1 WHERE a = "
                        + a
                        + " AND b = "
                        + b;
                case 18, 19 -> "DELETE FROM s_comp WHERE a = " + a + " AND b = " + b;
                case 20, 21, 22 -> "INSERT INTO s_part VALUES (" + fresh++ + ", 1)";
                case 23, 24, 25 -> "UPDATE s_part SET v = v + 1 WHERE id = " + p;
                case 26, 27 -> "UPDATE s_part SET id = " + fresh++ + ", v = v + 1 WHERE id = " + p;
                case 28, 29 -> "DELETE FROM s_part WHERE id = " + p;
                case 30, 31, 32, 33, 34, 35, 36, 37, 38, 39 ->
                    "INSERT INTO s_log VALUES (" + fresh++ + ", 'w')";
                case 40, 41, 42 -> "UPDATE s_full SET b = b || '+' WHERE a = " + g;
                case 43, 44, 45 ->
                    "DELETE FROM s_full WHERE ctid IN (SELECT ctid FROM s_full WHERE a = "
                        + g
                        + " LIMIT 1)";
                default -> "INSERT INTO s_full VALUES (" + g + ", 'dup')";
              };
          st.execute(sql);
          writes.incrementAndGet();
        }
      } catch (Exception e) {
        failure = e;
      }
    }
  }
}

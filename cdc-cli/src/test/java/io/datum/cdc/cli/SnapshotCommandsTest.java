package io.datum.cdc.cli;

import static io.datum.cdc.cli.PgcdcProcess.command;
import static io.datum.cdc.cli.PgcdcProcess.pgcdc;
import static io.datum.cdc.cli.PgcdcProcess.pgcdcInProcess;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.datum.cdc.cli.PgcdcProcess.Run;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code pgcdc stream --snapshot ...} and {@code pgcdc snapshot} as child processes against an
 * embedded PostgreSQL: the read lines, the stored progress, the slot's position, the progress on
 * stderr, the reader's acknowledgements of read rows, and what a role may do.
 */
@EmbeddedPostgresTest
class SnapshotCommandsTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern PROGRESS =
      Pattern.compile(
          "pgcdc: snapshot: (\\d+)(?: of (?:at most )?about (\\d+))? rows read(?: since the"
              + " restart)?(?: \\((\\d+)%\\))?, (\\d+) acknowledged, \\d+ rows/s, ETA [^,]*,"
              + " tables: (\\d+) done, (\\d+) left .*");
  private final EmbeddedPostgresServer pg;

  SnapshotCommandsTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  private String[] stream(Path store, String slot, String... extra) {
    return PgcdcProcess.streamArgs(pg, store, slot, slot, extra);
  }

  private static List<JsonNode> parse(List<String> lines) throws Exception {
    List<JsonNode> nodes = new ArrayList<>();
    for (String line : lines) {
      nodes.add(JSON.readTree(line)); // fails on anything but a JSON line
    }
    return nodes;
  }

  /** The {@code checkpoint show} document of one slot. */
  private JsonNode shown(Path dir, Path store, String slot) throws Exception {
    Run show = pgcdc(dir, "checkpoint", "show", "--store", "file:" + store, "--slot", slot);
    assertEquals(0, show.exitCode(), show.stderr());
    return JSON.readTree(String.join("\n", show.stdout())).get("checkpoints").get(0);
  }

  private String confirmedFlush(String slot) throws Exception {
    return pg.queryString(
        "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = '"
            + slot
            + "'");
  }

  /** Reads n lines, failing after 60 s instead of blocking for ever. */
  private static List<String> readLines(BufferedReader in, int n) {
    return Assertions.assertTimeoutPreemptively(
        Duration.ofSeconds(60),
        () -> {
          List<String> lines = new ArrayList<>();
          for (int i = 0; i < n; i++) {
            String line = in.readLine();
            assertNotNull(line, "stdout ended after " + lines.size() + " lines");
            lines.add(line);
          }
          return lines;
        });
  }

  @Test
  void initialOnlyPrintsEachExistingRowOnceAndLeavesTheSlotAtTheConsistentPoint(@TempDir Path dir)
      throws Exception {
    pg.execute(
        "CREATE TABLE snap_a (id int PRIMARY KEY, name text)",
        "CREATE TABLE snap_b (id bigint PRIMARY KEY, qty int)",
        "INSERT INTO snap_a VALUES (1, 'pen'), (2, 'ink'), (3, NULL)",
        "INSERT INTO snap_b SELECT g, g * 10 FROM generate_series(1, 4) g",
        "CREATE PUBLICATION snap FOR TABLE snap_a, snap_b");
    Path store = dir.resolve("store");

    Run run =
        pgcdc(
            dir, stream(store, "snap", "--create-slot", "--snapshot", "initial-only", "--verbose"));

    assertEquals(0, run.exitCode(), run.stderr());
    List<JsonNode> lines = parse(run.stdout());
    Map<String, JsonNode> afterByRow = new HashMap<>();
    Set<String> consistentWith = new HashSet<>();
    Map<String, Integer> lastOfTable = new HashMap<>();
    for (JsonNode line : lines) {
      assertEquals("read", line.get("op").asText(), line.toString());
      // chunks share tx_end_lsn and restart event_index: none of them was printed before
      assertNull(line.get("redelivered"), line.toString());
      assertEquals("snap", line.get("slot").asText());
      JsonNode snapshot = line.get("snapshot");
      assertEquals("initial", snapshot.get("id").asText(), line.toString());
      assertTrue(snapshot.get("chunk").isIntegralNumber(), line.toString());
      consistentWith.add(snapshot.get("consistent_with").asText());
      if (snapshot.path("last_of_table").asBoolean(false)) {
        lastOfTable.merge(line.get("table").asText(), 1, Integer::sum);
      }
      assertTrue(line.get("before").isNull(), line.toString());
      assertEquals(
          line.get("key").get("id"), line.get("after").get("id"), "key: " + line.toString());
      String row = line.get("table").asText() + "/" + line.get("after").get("id").asText();
      assertEquals(null, afterByRow.put(row, line.get("after")), "twice: " + row);
    }
    assertEquals(
        Map.of(
            "snap_a/1", JSON.readTree("{\"id\":1,\"name\":\"pen\"}"),
            "snap_a/2", JSON.readTree("{\"id\":2,\"name\":\"ink\"}"),
            "snap_a/3", JSON.readTree("{\"id\":3,\"name\":null}"),
            "snap_b/1", JSON.readTree("{\"id\":1,\"qty\":10}"),
            "snap_b/2", JSON.readTree("{\"id\":2,\"qty\":20}"),
            "snap_b/3", JSON.readTree("{\"id\":3,\"qty\":30}"),
            "snap_b/4", JSON.readTree("{\"id\":4,\"qty\":40}")),
        afterByRow,
        "one read line per existing row, nothing else: " + run.stdout());
    assertEquals(Map.of("snap_a", 1, "snap_b", 1), lastOfTable, "one last row per table");
    assertEquals(1, consistentWith.size(), "one consistent point: " + consistentWith);
    String consistent = consistentWith.iterator().next();

    assertEquals(consistent, confirmedFlush("snap"), "the slot stays at the consistent point");
    JsonNode stored = shown(dir, store, "snap");
    assertEquals(
        JSON.readTree("{\"initial_completed\":true,\"hold_lsn\":null,\"in_progress\":[]}"),
        stored.get("snapshot"),
        stored.toString());
    assertTrue(
        run.stderr()
            .contains("pgcdc: snapshot complete: 7 rows read, 7 acknowledged, 2 tables done, "),
        run.stderr());

    // a second run finds the initial snapshot completed: no read lines again
    Run again = pgcdc(dir, stream(store, "snap", "--snapshot", "initial", "--idle-exit", "1"));
    assertEquals(0, again.exitCode(), again.stderr());
    assertEquals(List.of(), again.stdout());
    assertFalse(again.stderr().contains("pgcdc: snapshot"), again.stderr());
  }

  /**
   * The reader holds the acknowledgements back: meanwhile stderr shows the snapshot in progress,
   * the store holds the slot at the consistent point; the reader then acknowledges half the read
   * lines by echoing them and half by the three words {@code TX_END_LSN EVENT_INDEX CHUNK}, and
   * {@code initial-only} exits.
   */
  @Test
  void readerAcknowledgesReadLinesWhileStderrShowsTheProgress(@TempDir Path dir) throws Exception {
    int rows = 600;
    pg.execute(
        "CREATE TABLE snap_acked (id int PRIMARY KEY, v text)",
        "INSERT INTO snap_acked SELECT g, 'v' || g FROM generate_series(1, " + rows + ") g",
        "ANALYZE snap_acked",
        "CREATE PUBLICATION snap_acked FOR TABLE snap_acked");
    Path store = dir.resolve("store");
    Path err = dir.resolve("err");
    Process p =
        new ProcessBuilder(
                command(
                    stream(
                        store,
                        "snap_acked",
                        "--create-slot",
                        "--snapshot",
                        "initial-only",
                        "--snapshot-chunk-rows",
                        "50",
                        "--snapshot-parallelism",
                        "2",
                        "--progress-interval",
                        "0.2",
                        "--acks-from",
                        "-")))
            .redirectError(err.toFile())
            .start();
    try (BufferedReader out =
            new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        OutputStream acks = p.getOutputStream()) {
      List<String> printed = readLines(out, rows);
      // every row printed, none acknowledged: the progress says so, repeatedly
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  progressLines(Files.readString(err)).stream()
                      .anyMatch(
                          m -> m.equals(List.of((long) rows, (long) rows, 100L, 0L, 0L, 1L))));
      JsonNode held = shown(dir, store, "snap_acked");
      String consistent =
          JSON.readTree(printed.get(0)).get("snapshot").get("consistent_with").asText();
      assertEquals(consistent, held.get("snapshot").get("hold_lsn").asText(), held.toString());
      assertFalse(held.get("snapshot").get("initial_completed").asBoolean(), held.toString());
      Set<Integer> ids = new HashSet<>();
      for (int i = 0; i < printed.size(); i++) {
        JsonNode line = JSON.readTree(printed.get(i));
        assertEquals("read", line.get("op").asText());
        ids.add(line.get("after").get("id").asInt());
        String ack =
            i % 2 == 0
                ? printed.get(i)
                : line.get("tx_end_lsn").asText()
                    + ' '
                    + line.get("event_index").asInt()
                    + ' '
                    + line.get("snapshot").get("chunk").asLong();
        acks.write((ack + '\n').getBytes(StandardCharsets.UTF_8));
      }
      acks.flush();
      assertEquals(rows, ids.size(), "each row once");
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "initial-only did not exit once acknowledged");
      assertEquals(null, out.readLine(), "nothing after the read lines");
      String stderr = Files.readString(err);
      assertEquals(0, p.exitValue(), stderr);
      assertTrue(
          stderr.contains(
              "pgcdc: snapshot complete: "
                  + rows
                  + " rows read, "
                  + rows
                  + " acknowledged, 1 table"
                  + " done, "),
          stderr);
      for (String line : stderr.split("\n")) {
        assertFalse(line.startsWith("{"), "a JSON line on stderr: " + line);
      }
      assertEquals(consistent, confirmedFlush("snap_acked"));
      assertTrue(
          shown(dir, store, "snap_acked").get("snapshot").get("initial_completed").asBoolean());
    } finally {
      p.destroyForcibly();
    }
  }

  /**
   * SIGTERM while a snapshot awaits acknowledgements: stderr says it stopped before it completed,
   * the store keeps its progress, and the next run reads only the rows not acknowledged (online),
   * then exits ({@code initial-only}).
   */
  @Test
  void aStoppedSnapshotResumesWithTheRowsNotAcknowledged(@TempDir Path dir) throws Exception {
    int rows = 200;
    pg.execute(
        "CREATE TABLE snap_resumed (id int PRIMARY KEY)",
        "INSERT INTO snap_resumed SELECT generate_series(1, " + rows + ")",
        "CREATE PUBLICATION snap_resumed FOR TABLE snap_resumed");
    Path store = dir.resolve("store");
    String[] args =
        stream(
            store,
            "snap_resumed",
            "--create-slot",
            "--snapshot",
            "initial-only",
            "--snapshot-chunk-rows",
            "40",
            "--progress-interval",
            "0.2",
            "--acks-from",
            "-");
    Process first =
        new ProcessBuilder(command(args)).redirectError(dir.resolve("err1").toFile()).start();
    Set<Integer> acknowledged = new HashSet<>();
    try (BufferedReader out =
            new BufferedReader(
                new InputStreamReader(first.getInputStream(), StandardCharsets.UTF_8));
        OutputStream acks = first.getOutputStream()) {
      for (String line : readLines(out, rows)) {
        int id = JSON.readTree(line).get("after").get("id").asInt();
        if (id % 3 == 0 || id <= 50) { // a prefix, and keys out of order beyond it
          acks.write((line + "\n").getBytes(StandardCharsets.UTF_8));
          acknowledged.add(id);
        }
      }
      acks.flush();
      // the reader's acknowledgements taken (the progress counts them): then stop
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  progressLines(Files.readString(dir.resolve("err1"))).stream()
                      .anyMatch(f -> f.get(0) == rows && f.get(3) == acknowledged.size()));
      first.destroy(); // SIGTERM: a graceful stop
      assertTrue(first.waitFor(60, TimeUnit.SECONDS));
    } finally {
      first.destroyForcibly();
    }
    String err1 = Files.readString(dir.resolve("err1"));
    assertTrue(
        err1.contains(
            "pgcdc: snapshot stopped before it completed: "
                + rows
                + " rows read, "
                + acknowledged.size()
                + " acknowledged"),
        err1);
    JsonNode held = shown(dir, store, "snap_resumed").get("snapshot");
    assertFalse(held.get("initial_completed").asBoolean(), held.toString());
    assertEquals(1, held.get("in_progress").size(), held.toString());

    Run second =
        pgcdc(
            dir,
            stream(
                store, "snap_resumed", "--snapshot", "initial-only", "--progress-interval", "0"));
    assertEquals(0, second.exitCode(), second.stderr());
    Set<Integer> again = new HashSet<>();
    for (JsonNode line : parse(second.stdout())) {
      assertEquals("read", line.get("op").asText(), line.toString());
      assertEquals("initial", line.get("snapshot").get("id").asText(), line.toString());
      assertTrue(again.add(line.get("after").get("id").asInt()), "twice: " + line);
    }
    Set<Integer> expected = new HashSet<>();
    for (int id = 1; id <= rows; id++) {
      if (!acknowledged.contains(id)) {
        expected.add(id);
      }
    }
    assertEquals(expected, again, "exactly the rows not acknowledged");
    assertFalse(
        second.stderr().contains("pgcdc: snapshot"), "--progress-interval 0: " + second.stderr());
    assertTrue(
        shown(dir, store, "snap_resumed").get("snapshot").get("initial_completed").asBoolean());

    // nothing left: said, not a silent exit
    Run third = pgcdc(dir, stream(store, "snap_resumed", "--snapshot", "initial-only"));
    assertEquals(0, third.exitCode(), third.stderr());
    assertEquals(List.of(), third.stdout());
    assertTrue(
        third
            .stderr()
            .contains("pgcdc: the initial snapshot of slot snap_resumed is complete already ("),
        third.stderr());
  }

  /**
   * With stderr a terminal (a pseudo-terminal from util-linux {@code script}), the progress is one
   * line redrawn with a bar, and stdout (a file) still holds only JSON lines. The reader's
   * acknowledgements come from a FIFO that is closed unwritten, which stops pgcdc: the bar's line
   * is then ended and the stopped line follows.
   */
  @Test
  void onATerminalTheProgressIsABarRedrawnInPlace(@TempDir Path dir) throws Exception {
    Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/script")), "needs script(1)");
    int rows = 500;
    pg.execute(
        "CREATE TABLE snap_tty (id int PRIMARY KEY)",
        "INSERT INTO snap_tty SELECT generate_series(1, " + rows + ")",
        "ANALYZE snap_tty",
        "CREATE PUBLICATION snap_tty FOR TABLE snap_tty");
    Path acks = dir.resolve("acks");
    assertEquals(0, new ProcessBuilder("mkfifo", acks.toString()).start().waitFor());
    Path out = dir.resolve("out");
    Path typescript = dir.resolve("typescript");
    StringBuilder shell = new StringBuilder();
    for (String arg :
        command(
            stream(
                dir.resolve("store"),
                "snap_tty",
                "--create-slot",
                "--snapshot",
                "initial-only",
                "--acks-from",
                acks.toString()))) {
      shell.append('\'').append(arg.replace("'", "'\\''")).append("' ");
    }
    shell.append("> '").append(out).append('\'');
    Process p =
        new ProcessBuilder(
                "/usr/bin/script", "-q", "-e", "-c", shell.toString(), typescript.toString())
            .redirectOutput(dir.resolve("script-out").toFile())
            .redirectErrorStream(true)
            .start();
    try {
      String bar =
          "\rsnapshot [##############################] 100% " + rows + "/" + rows + " rows, ";
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> Files.exists(typescript) && Files.readString(typescript).contains(bar));
      try (OutputStream closed = Files.newOutputStream(acks)) {
        // opened and closed: the acknowledgements end, pgcdc stops
      }
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "pgcdc did not stop at the end of its acks");
      String terminal = Files.readString(typescript);
      assertTrue(
          terminal.contains(
              "tables 0 done/1 left\r\npgcdc: snapshot stopped before it completed: "
                  + rows
                  + " of about "
                  + rows
                  + " rows read (100%), 0 acknowledged"),
          terminal);
      assertFalse(terminal.contains("pgcdc: snapshot: "), "no plain lines on a terminal");
      List<JsonNode> lines = parse(Files.readAllLines(out, StandardCharsets.UTF_8));
      assertEquals(rows, lines.size());
    } finally {
      p.destroyForcibly();
    }
  }

  /**
   * Each progress line's rows read, rows estimated, percent, acknowledged, tables done, left (-1
   * for the estimate and percent of a line without an estimate).
   */
  private static List<List<Long>> progressLines(String stderr) {
    List<List<Long>> found = new ArrayList<>();
    for (String line : stderr.split("\n")) {
      Matcher m = PROGRESS.matcher(line);
      if (m.matches()) {
        List<Long> figures = new ArrayList<>();
        for (int g = 1; g <= 6; g++) {
          figures.add(m.group(g) == null ? -1 : Long.parseLong(m.group(g)));
        }
        found.add(figures);
      }
    }
    return found;
  }

  @Test
  void snapshotRequestedFromAnotherProcessIsReadWhileTheStreamGoesOn(@TempDir Path dir)
      throws Exception {
    pg.execute(
        "CREATE TABLE req_x (id int PRIMARY KEY, v text)",
        "CREATE TABLE req_y (id int PRIMARY KEY)",
        "INSERT INTO req_x SELECT g, 'x' || g FROM generate_series(1, 5) g",
        "INSERT INTO req_y VALUES (1), (2)",
        "CREATE PUBLICATION req FOR TABLE req_x, req_y");
    Path store = dir.resolve("store");
    Process p =
        new ProcessBuilder(
                command(
                    stream(
                        store,
                        "req",
                        "--create-slot",
                        "--snapshot",
                        "initial,on-request",
                        "--acks-from",
                        "-")))
            .redirectError(dir.resolve("err").toFile())
            .start();
    try (BufferedReader out =
            new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        OutputStream acks = p.getOutputStream()) {
      List<JsonNode> initial = parse(readLines(out, 7));
      for (JsonNode line : initial) {
        assertEquals("initial", line.get("snapshot").get("id").asText(), line.toString());
        acks.write((line + "\n").getBytes(StandardCharsets.UTF_8));
      }
      acks.flush();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> shown(dir, store, "req").get("snapshot").get("initial_completed").asBoolean());

      Run requested =
          pgcdc(dir, "snapshot", "--url", pg.jdbcUrl(), "--slot", "req", "--table", "public.req_x");
      assertEquals(0, requested.exitCode(), requested.stderr());
      // a table that does not exist is refused where it is named, and nothing is written
      Run missing =
          pgcdc(dir, "snapshot", "--url", pg.jdbcUrl(), "--slot", "req", "--table", "public.nope");
      assertEquals(2, missing.exitCode(), missing.stderr());
      assertTrue(
          missing.stderr().contains("no table public.nope in this database"), missing.stderr());
      // a slot that does not exist, and a table no publication publishes, the same
      pg.execute("CREATE TABLE req_unpublished (id int PRIMARY KEY)");
      Run noSlot =
          pgcdc(
              dir,
              "snapshot",
              "--url",
              pg.jdbcUrl(),
              "--slot",
              "req_typo",
              "--table",
              "public.req_x");
      assertEquals(2, noSlot.exitCode(), noSlot.stderr());
      assertTrue(
          noSlot.stderr().contains("no replication slot \"req_typo\" on this server"),
          noSlot.stderr());
      Run unpublished =
          pgcdc(
              dir,
              "snapshot",
              "--url",
              pg.jdbcUrl(),
              "--slot",
              "req",
              "--table",
              "public.req_unpublished");
      assertEquals(2, unpublished.exitCode(), unpublished.stderr());
      assertTrue(
          unpublished.stderr().contains("no publication publishes public.req_unpublished"),
          unpublished.stderr());
      assertTrue(
          String.join("\n", requested.stdout())
              .startsWith("requested a snapshot of [public.req_x] from the stream of slot req"),
          requested.stdout().toString());
      List<JsonNode> again = parse(readLines(out, 5));
      Map<Integer, String> values = new HashMap<>();
      String id = again.get(0).get("snapshot").get("id").asText();
      assertTrue(id.startsWith("request-"), id);
      assertTrue(
          String.join("\n", requested.stdout()).contains(": snapshot id " + id + " ("),
          "the id printed is the rows' id, " + id + ": " + requested.stdout());
      for (JsonNode line : again) {
        assertEquals("read", line.get("op").asText(), line.toString());
        assertEquals("req_x", line.get("table").asText(), line.toString());
        assertEquals(id, line.get("snapshot").get("id").asText(), line.toString());
        values.put(line.get("after").get("id").asInt(), line.get("after").get("v").asText());
      }
      assertEquals(Map.of(1, "x1", 2, "x2", 3, "x3", 4, "x4", 5, "x5"), values);

      // unacknowledged, the table's snapshot is in progress: a second request is refused
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> shown(dir, store, "req").get("snapshot").get("in_progress").size() == 1);
      Run refused =
          pgcdc(
              dir,
              "snapshot",
              "--url",
              pg.jdbcUrl(),
              "--slot",
              "req",
              "--table",
              "public.req_x",
              "--store",
              "file:" + store);
      assertEquals(1, refused.exitCode(), refused.stderr());
      assertTrue(
          refused
              .stderr()
              .contains(
                  "pgcdc: error: a snapshot of [public.req_x] is in progress already for slot req"),
          refused.stderr());

      // the stream goes on meanwhile
      pg.execute("INSERT INTO req_y VALUES (3)");
      JsonNode insert = JSON.readTree(readLines(out, 1).get(0));
      assertEquals("insert", insert.get("op").asText(), insert.toString());
      assertEquals(3, insert.get("after").get("id").asInt());

      for (JsonNode line : again) {
        acks.write((line + "\n").getBytes(StandardCharsets.UTF_8));
      }
      acks.write((insert + "\n").getBytes(StandardCharsets.UTF_8));
      acks.flush();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> shown(dir, store, "req").get("snapshot").get("in_progress").isEmpty());
      // published, but not by the stream's own publication (the checkpoint names it): refused
      pg.execute(
          "CREATE TABLE req_elsewhere (id int PRIMARY KEY)",
          "CREATE PUBLICATION req_other FOR TABLE req_elsewhere");
      Run elsewhere =
          pgcdc(
              dir,
              "snapshot",
              "--url",
              pg.jdbcUrl(),
              "--slot",
              "req",
              "--table",
              "public.req_elsewhere",
              "--store",
              "file:" + store);
      assertEquals(2, elsewhere.exitCode(), elsewhere.stderr());
      assertTrue(
          elsewhere
              .stderr()
              .contains(
                  "publication \"req\", which the stream of slot req reads (its stored checkpoint"
                      + " says so), does not publish [public.req_elsewhere]"),
          elsewhere.stderr());
      Run accepted =
          pgcdc(
              dir,
              "snapshot",
              "--url",
              pg.jdbcUrl(),
              "--slot",
              "req",
              "--table",
              "public.req_y",
              "--store",
              "file:" + store);
      assertEquals(0, accepted.exitCode(), accepted.stderr());
      List<JsonNode> third = parse(readLines(out, 3));
      List<Integer> yIds = new ArrayList<>();
      for (JsonNode line : third) {
        assertEquals("req_y", line.get("table").asText(), line.toString());
        assertTrue(line.get("snapshot").get("id").asText().startsWith("request-"));
        yIds.add(line.get("after").get("id").asInt());
      }
      yIds.sort(null);
      assertEquals(List.of(1, 2, 3), yIds);
      acks.close(); // the reader is gone: pgcdc stops
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "pgcdc did not stop at the end of its acks");
      assertEquals(0, p.exitValue(), Files.readString(dir.resolve("err")));
    } finally {
      p.destroyForcibly();
    }
  }

  @Test
  void badSnapshotModesAreUsageErrorsNamingTheModes(@TempDir Path dir) throws Exception {
    Path store = dir.resolve("store");
    Run typo = pgcdcInProcess(stream(store, "nosnap", "--snapshot", "initial,sometimes"));
    assertEquals(2, typo.exitCode(), typo.stderr());
    assertTrue(
        typo.stderr()
            .contains(
                "pgcdc: error: --snapshot must be one or more of never, initial, initial-only,"
                    + " on-request (comma-separated), was \"sometimes\""),
        typo.stderr());
    Run mixed = pgcdcInProcess(stream(store, "nosnap", "--snapshot", "never,initial"));
    assertEquals(2, mixed.exitCode(), mixed.stderr());
    assertTrue(
        mixed.stderr().contains("snapshot mode never cannot be combined with another"),
        mixed.stderr());
    Run only = pgcdcInProcess(stream(store, "nosnap", "--snapshot", "initial-only,on-request"));
    assertEquals(2, only.exitCode(), only.stderr());
    assertTrue(
        only.stderr().contains("initial-only and on-request exclude each other"), only.stderr());
    Run interval = pgcdcInProcess(stream(store, "nosnap", "--progress-interval", "-1"));
    assertEquals(2, interval.exitCode(), interval.stderr());
    assertTrue(
        interval
            .stderr()
            .contains("--progress-interval must be 0 (none) or a positive number of seconds"),
        interval.stderr());
    Run ignored = pgcdcInProcess(stream(store, "nosnap", "--snapshot-parallelism", "4"));
    assertEquals(2, ignored.exitCode(), ignored.stderr());
    assertTrue(
        ignored
            .stderr()
            .contains(
                "pgcdc: error: --snapshot-parallelism applies only with --snapshot MODE (it would"
                    + " be ignored)"),
        ignored.stderr());
    Run zero =
        pgcdcInProcess(
            stream(store, "nosnap", "--snapshot", "initial", "--snapshot-chunk-rows", "0"));
    assertEquals(2, zero.exitCode(), zero.stderr());
    assertTrue(
        zero.stderr().contains("pgcdc: error: --snapshot-chunk-rows must be 1 to 1000000, was 0"),
        zero.stderr());
    assertFalse(Files.exists(store), "a refused start leaves no store behind");
    assertEquals(List.of(), typo.stdout());
  }

  /**
   * What {@code pgcdc snapshot} needs: it writes its request with {@code pg_logical_emit_message},
   * which PostgreSQL lets every role EXECUTE by default and runs without checking for REPLICATION:
   * a role with LOGIN REPLICATION can, and so can a role with LOGIN alone. Once EXECUTE is revoked
   * from PUBLIC, the role is refused (42501) with the remedy naming the function's signature.
   */
  @Test
  void snapshotRequestNeedsOnlyExecuteOnEmitMessageWhichEveryRoleHasByDefault(@TempDir Path dir)
      throws Exception {
    pg.execute(
        "CREATE ROLE snap_repl LOGIN REPLICATION",
        "CREATE ROLE snap_plain LOGIN",
        "CREATE TABLE priv_t (id int PRIMARY KEY)",
        // a request names an existing logical slot and a published table (else it is refused)
        "CREATE PUBLICATION priv_pub FOR TABLE priv_t",
        "SELECT pg_create_logical_replication_slot('nobody', 'pgoutput')");
    String signature =
        pg.queryString(
            "SELECT string_agg(oid::regprocedure::text, ';') FROM pg_proc"
                + " WHERE proname = 'pg_logical_emit_message' AND proargtypes[2] = 'text'::regtype");
    assertEquals(
        pg.majorVersion() >= 17
            ? "pg_logical_emit_message(boolean,text,text,boolean)"
            : "pg_logical_emit_message(boolean,text,text)",
        signature);
    assertEquals(
        "t",
        pg.queryString(
            "SELECT has_function_privilege('snap_plain', '" + signature + "', 'EXECUTE')"));
    for (String role : List.of("snap_repl", "snap_plain")) {
      Run run = requestAs(dir, role);
      assertEquals(0, run.exitCode(), role + ": " + run.stderr());
      assertTrue(
          String.join("\n", run.stdout()).startsWith("requested a snapshot of [public.priv_t]"),
          role + ": " + run.stdout());
    }
    pg.execute("REVOKE EXECUTE ON FUNCTION " + signature + " FROM PUBLIC");
    try {
      Run refused = requestAs(dir, "snap_repl");
      // retrying cannot fix a missing privilege: exit 2, naming the GRANT
      assertEquals(2, refused.exitCode(), refused.stderr());
      assertTrue(
          refused
              .stderr()
              .contains(
                  "pgcdc: error: cannot write the snapshot request into the WAL at "
                      + urlWithoutUser()
                      + ": ERROR: permission denied for function pg_logical_emit_message"),
          refused.stderr());
      assertTrue(
          refused
              .stderr()
              .contains(
                  "[SQLSTATE 42501]: the role lacks a privilege, which retrying cannot fix;"
                      + " GRANT EXECUTE ON FUNCTION pg_logical_emit_message(boolean, text, text,"
                      + " boolean) TO the role on PostgreSQL 17+, pg_logical_emit_message(boolean,"
                      + " text, text) on 14-16"),
          refused.stderr());
      assertEquals(List.of(), refused.stdout());
      pg.execute("GRANT EXECUTE ON FUNCTION " + signature + " TO snap_repl");
      Run granted = requestAs(dir, "snap_repl");
      assertEquals(0, granted.exitCode(), granted.stderr());
      // a URL naming another user would have pgjdbc connect as that one: refused
      Run conflicting =
          pgcdcInProcess(
              "snapshot",
              "--url",
              pg.jdbcUrl(),
              "--user",
              "snap_plain",
              "--slot",
              "nobody",
              "--table",
              "public.priv_t");
      assertEquals(2, conflicting.exitCode(), conflicting.stderr());
      assertTrue(
          conflicting
              .stderr()
              .contains(
                  "pgcdc: error: the --url's user parameter differs from --user; give it once"),
          conflicting.stderr());
    } finally {
      pg.execute(
          "GRANT EXECUTE ON FUNCTION " + signature + " TO PUBLIC",
          "SELECT pg_drop_replication_slot('nobody')");
    }
  }

  /** The server's URL without its {@code user} parameter, so that {@code --user} counts. */
  private String urlWithoutUser() {
    return pg.jdbcUrl().replace("?user=" + pg.user(), "");
  }

  private Run requestAs(Path dir, String role) throws Exception {
    return pgcdc(
        dir,
        "snapshot",
        "--url",
        urlWithoutUser(),
        "--user",
        role,
        "--slot",
        "nobody",
        "--table",
        "public.priv_t");
  }
}

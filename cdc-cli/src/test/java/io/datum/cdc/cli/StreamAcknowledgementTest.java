package io.datum.cdc.cli;

import static io.datum.cdc.cli.PgcdcProcess.command;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.PgLsn;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.spi.CheckpointCodec;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code pgcdc stream --acks-from} and {@code --output} as child processes against an embedded
 * PostgreSQL: what is stored is exactly what the reader acknowledged, or what was synced to the
 * file, also across a SIGKILL.
 */
@EmbeddedPostgresTest
class StreamAcknowledgementTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private final EmbeddedPostgresServer pg;

  StreamAcknowledgementTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  private List<String> stream(Path store, String slot, String... extra) {
    return command(PgcdcProcess.streamArgs(pg, store, slot, slot, extra));
  }

  private void insertOneRowPerTransaction(String table, int from, int to) throws Exception {
    for (int id = from; id <= to; id++) {
      pg.execute("INSERT INTO " + table + " VALUES (" + id + ")");
    }
  }

  /** What the file store holds for a slot, read from its file while a consumer may hold it. */
  private static CdcCheckpoint stored(Path store, String slot) throws Exception {
    Path file = store.resolve(slot + ".checkpoint");
    if (!Files.exists(file)) {
      return null;
    }
    return CheckpointCodec.decode(Files.readAllBytes(file), slot, file.toString());
  }

  /**
   * The watermark, then each partly acknowledged transaction (end LSN, event count, ranges), then
   * the runs of fully acknowledged ones if any.
   */
  private static String describe(CdcCheckpoint checkpoint) {
    if (checkpoint == null) {
      return "none";
    }
    List<String> beyond = new ArrayList<>();
    for (CdcCheckpoint.PartialTransaction tx : checkpoint.acknowledgedBeyond()) {
      beyond.add(
          tx.txEndLsn() + " " + tx.eventCount() + " " + Arrays.toString(tx.acknowledgedRanges()));
    }
    return checkpoint.watermark()
        + " "
        + beyond
        + (checkpoint.acknowledgedRuns().isEmpty() ? "" : " runs " + checkpoint.acknowledgedRuns());
  }

  private static List<Integer> ids(List<String> lines) throws Exception {
    List<Integer> ids = new ArrayList<>();
    for (String line : lines) {
      ids.add(JSON.readTree(line).get("after").get("id").asInt());
    }
    return ids;
  }

  /** Reads n lines, failing after 60 s instead of blocking for ever. */
  private static List<String> readLines(java.io.BufferedReader in, int n) {
    return org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
        Duration.ofSeconds(60),
        () -> {
          List<String> lines = new ArrayList<>();
          for (int i = 0; i < n; i++) {
            String line = in.readLine();
            assertNotNull(line, "stdout ended after " + lines);
            lines.add(line);
          }
          return lines;
        });
  }

  @Test
  void headOfAPipeAcknowledgesOnlyTheLinesItRead(@TempDir Path dir) throws Exception {
    pg.execute(
        "CREATE TABLE headed (id int PRIMARY KEY)",
        "CREATE PUBLICATION headed FOR TABLE headed",
        "SELECT pg_create_logical_replication_slot('headed', 'pgoutput')");
    insertOneRowPerTransaction("headed", 1, 9);
    Path store = dir.resolve("store");
    Path acks = dir.resolve("acks");
    assertEquals(0, new ProcessBuilder("mkfifo", acks.toString()).start().waitFor());

    // pgcdc stream --acks-from acks | head -n 3 | tee acks: head reads (and prints) 3 lines, tee
    // writes them back as acknowledgements; then both exit, the FIFO ends and pgcdc stops
    List<String> command =
        new ArrayList<>(
            List.of("bash", "-c", "set -o pipefail; \"$@\" | head -n 3 | tee \"$ACKS\"", "bash"));
    command.addAll(stream(store, "headed", "--acks-from", acks.toString()));
    ProcessBuilder shell = new ProcessBuilder(command);
    shell.environment().put("ACKS", acks.toString());
    Path out = dir.resolve("out");
    Process p =
        shell.redirectOutput(out.toFile()).redirectError(dir.resolve("err").toFile()).start();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the pipeline did not end");
    String err = Files.readString(dir.resolve("err"));
    assertEquals(0, p.exitValue(), err);
    List<String> read = Files.readAllLines(out, StandardCharsets.UTF_8);
    assertEquals(List.of(1, 2, 3), ids(read));
    String third = JSON.readTree(read.get(2)).get("tx_end_lsn").asText();
    assertEquals(
        third + " []",
        describe(stored(store, "headed")),
        "stored: the 3 events head read, not the 6 others pgcdc printed into the pipe");
    assertEquals(
        third,
        pg.queryString(
            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = 'headed'"));

    // the next consumer gets 4-9; its reader acknowledges with the two-word form, out of order
    Process next =
        new ProcessBuilder(stream(store, "headed", "--acks-from", "-", "--max-events", "6"))
            .redirectError(dir.resolve("err2").toFile())
            .start();
    List<String> rest;
    try (BufferedReader lines =
            new BufferedReader(
                new InputStreamReader(next.getInputStream(), StandardCharsets.UTF_8));
        OutputStream acknowledgements = next.getOutputStream()) {
      rest = readLines(lines, 6);
      for (int i : new int[] {5, 0, 1, 2, 4, 3}) {
        JsonNode event = JSON.readTree(rest.get(i));
        acknowledgements.write(
            (event.get("tx_end_lsn").asText() + ' ' + event.get("event_index").asInt() + '\n')
                .getBytes(StandardCharsets.UTF_8));
        acknowledgements.flush();
      }
      assertTrue(next.waitFor(60, TimeUnit.SECONDS), "--max-events 6 did not exit once acked");
    }
    assertEquals(0, next.exitValue(), Files.readString(dir.resolve("err2")));
    assertEquals(List.of(4, 5, 6, 7, 8, 9), ids(rest));
    assertEquals(
        JSON.readTree(rest.get(5)).get("tx_end_lsn").asText() + " []",
        describe(stored(store, "headed")));
  }

  @Test
  void afterASigkillExactlyTheEventsTheReaderDidNotAcknowledgeComeAgain(@TempDir Path dir)
      throws Exception {
    pg.execute(
        "CREATE TABLE killed (id int PRIMARY KEY)",
        "CREATE PUBLICATION killed FOR TABLE killed",
        "SELECT pg_create_logical_replication_slot('killed', 'pgoutput')");
    insertOneRowPerTransaction("killed", 1, 6);
    Path store = dir.resolve("store");
    Process first =
        new ProcessBuilder(stream(store, "killed", "--acks-from", "-"))
            .redirectError(dir.resolve("err").toFile())
            .start();
    List<String> printed;
    try (BufferedReader lines =
        new BufferedReader(new InputStreamReader(first.getInputStream(), StandardCharsets.UTF_8))) {
      printed = readLines(lines, 6);
      OutputStream acknowledgements = first.getOutputStream();
      for (int i : new int[] {3, 0, 1}) { // ids 4, 1, 2: the event lines themselves
        acknowledgements.write((printed.get(i) + '\n').getBytes(StandardCharsets.UTF_8));
      }
      acknowledgements.flush();
      PgLsn second = PgLsn.parse(JSON.readTree(printed.get(1)).get("tx_end_lsn").asText());
      PgLsn fourth = PgLsn.parse(JSON.readTree(printed.get(3)).get("tx_end_lsn").asText());
      // the fourth transaction, fully acknowledged after the unacknowledged third: a run
      String expected = second + " [] runs [[" + fourth + ".." + fourth + "]]";
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> expected.equals(describe(stored(store, "killed"))));
      first.toHandle().destroyForcibly(); // SIGKILL
      first.waitFor();
    }
    assertEquals(List.of(1, 2, 3, 4, 5, 6), ids(printed));
    Process second =
        new ProcessBuilder(stream(store, "killed", "--acks-from", "-"))
            .redirectError(dir.resolve("err2").toFile())
            .start();
    try (BufferedReader lines =
        new BufferedReader(
            new InputStreamReader(second.getInputStream(), StandardCharsets.UTF_8))) {
      List<String> again = readLines(lines, 3);
      assertEquals(List.of(3, 5, 6), ids(again), "the unacknowledged ones, and only those");
      OutputStream acknowledgements = second.getOutputStream();
      acknowledgements.write("not an acknowledgement\n".getBytes(StandardCharsets.UTF_8));
      acknowledgements.flush();
      assertTrue(second.waitFor(60, TimeUnit.SECONDS));
    }
    assertEquals(1, second.exitValue());
    String err = Files.readString(dir.resolve("err2"));
    assertTrue(
        err.contains(
            "pgcdc: error: --acks-from -: line 1 is not an acknowledgement (not an LSN of the"
                + " form X/X (hexadecimal): \"not\"): \"not an acknowledgement\"; write back each"
                + " processed event's JSON line, or its tx_end_lsn and event_index (and a read"
                + " row's snapshot chunk) separated by spaces"),
        err);
  }

  @Test
  void outputFileIsSyncedBeforeAcknowledgingAndResumesAfterASigkill(@TempDir Path dir)
      throws Exception {
    pg.execute(
        "CREATE TABLE filed (id int PRIMARY KEY)",
        "CREATE PUBLICATION filed FOR TABLE filed",
        "SELECT pg_create_logical_replication_slot('filed', 'pgoutput')");
    insertOneRowPerTransaction("filed", 1, 5);
    Path store = dir.resolve("store");
    Path file = dir.resolve("changes.jsonl");
    Process first =
        new ProcessBuilder(stream(store, "filed", "--output", file.toString()))
            .redirectOutput(dir.resolve("out").toFile())
            .redirectError(dir.resolve("err").toFile())
            .start();
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> Files.exists(file) && Files.readAllLines(file).size() == 5);
    String fifth = JSON.readTree(Files.readAllLines(file).get(4)).get("tx_end_lsn").asText();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                stored(store, "filed") != null
                    && !stored(store, "filed").watermark().isBefore(PgLsn.parse(fifth)));

    List<String> locked = stream(dir.resolve("other-store"), "filed", "--output", file.toString());
    Process second = new ProcessBuilder(locked).redirectErrorStream(true).start();
    String secondOut = new String(second.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(second.waitFor(60, TimeUnit.SECONDS));
    assertEquals(2, second.exitValue(), secondOut);
    assertEquals(
        List.of(
            "pgcdc: error: --output "
                + file
                + " is locked by another process (another pgcdc stream --output on it?); stop it"
                + " or write to another file"),
        secondOut.lines().toList());

    first.toHandle().destroyForcibly(); // SIGKILL
    first.waitFor();
    assertEquals("", Files.readString(dir.resolve("out")), "nothing on stdout with --output");
    // a line cut short, as a process killed while writing (or an OS crash) may leave it
    Files.writeString(file, "{\"op\":\"insert\",\"slot\":\"fil", StandardOpenOption.APPEND);
    insertOneRowPerTransaction("filed", 6, 7);
    Process resumed =
        new ProcessBuilder(stream(store, "filed", "--output", file.toString(), "--idle-exit", "1"))
            .redirectError(dir.resolve("err2").toFile())
            .start();
    assertTrue(resumed.waitFor(60, TimeUnit.SECONDS));
    String err = Files.readString(dir.resolve("err2"));
    assertEquals(0, resumed.exitValue(), err);
    assertTrue(
        err.contains(
            "--output "
                + file
                + ": removed an incomplete last line (26 bytes, written by a process that died;"
                + " its event was not acknowledged and comes again)"),
        err);
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    assertEquals(List.of(1, 2, 3, 4, 5, 6, 7), ids(lines));
    String last = JSON.readTree(lines.get(6)).get("tx_end_lsn").asText();
    assertFalse(stored(store, "filed").watermark().isBefore(PgLsn.parse(last)));
  }

  @Test
  void anOutputFileThatIsNotPgcdcsOwnIsRefusedAndLeftAsItWas(@TempDir Path dir) throws Exception {
    pg.execute(
        "CREATE TABLE notmine (id int PRIMARY KEY)",
        "CREATE PUBLICATION notmine FOR TABLE notmine",
        "SELECT pg_create_logical_replication_slot('notmine', 'pgoutput')");
    for (String content :
        List.of("2026-12-03 a log line\nanother one without a newline", "key = value\n")) {
      Path file = dir.resolve("app.log");
      Files.writeString(file, content);
      Process p =
          new ProcessBuilder(stream(dir.resolve("store"), "notmine", "--output", file.toString()))
              .redirectErrorStream(true)
              .start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(p.waitFor(60, TimeUnit.SECONDS));
      assertEquals(2, p.exitValue(), out);
      assertTrue(
          out.contains("--output " + file + ": its ") && out.contains("is not a line pgcdc writes"),
          out);
      assertEquals(content, Files.readString(file), "the file is left as it was");
    }
  }

  @Test
  void aRegularFileOfAcknowledgementsIsFollowedFromItsEnd(@TempDir Path dir) throws Exception {
    pg.execute(
        "CREATE TABLE followed (id int PRIMARY KEY)",
        "CREATE PUBLICATION followed FOR TABLE followed",
        "SELECT pg_create_logical_replication_slot('followed', 'pgoutput')");
    insertOneRowPerTransaction("followed", 1, 3);
    Path store = dir.resolve("store");
    Path acks = dir.resolve("acks.txt");
    Files.writeString(acks, "garbage of an earlier run, never read\n");
    Process p =
        new ProcessBuilder(
                stream(store, "followed", "--acks-from", acks.toString(), "--max-events", "2"))
            .redirectError(dir.resolve("err").toFile())
            .start();
    List<String> printed;
    try (BufferedReader lines =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      printed = readLines(lines, 2);
      for (String line : printed) {
        Files.writeString(acks, line + "\n", StandardOpenOption.APPEND);
      }
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "--max-events 2 did not exit once acknowledged");
    }
    assertEquals(0, p.exitValue(), Files.readString(dir.resolve("err")));
    assertEquals(List.of(1, 2), ids(printed));
    assertEquals(
        JSON.readTree(printed.get(1)).get("tx_end_lsn").asText() + " []",
        describe(stored(store, "followed")));
  }

  @Test
  void acknowledgementsFromAnInheritedFileDescriptor(@TempDir Path dir) throws Exception {
    pg.execute(
        "CREATE TABLE fdacks (id int PRIMARY KEY)",
        "CREATE PUBLICATION fdacks FOR TABLE fdacks",
        "SELECT pg_create_logical_replication_slot('fdacks', 'pgoutput')");
    insertOneRowPerTransaction("fdacks", 1, 2);
    Path store = dir.resolve("store");
    // pgcdc inherits descriptor 3, a copy of the pipe the test writes to
    List<String> command =
        new ArrayList<>(List.of("bash", "-c", "exec \"$@\" 3<&0 0</dev/null", "bash"));
    command.addAll(stream(store, "fdacks", "--acks-from", "fd:3", "--max-events", "2"));
    Process p = new ProcessBuilder(command).redirectError(dir.resolve("err").toFile()).start();
    List<String> printed;
    try (BufferedReader lines =
            new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        OutputStream acknowledgements = p.getOutputStream()) {
      printed = readLines(lines, 2);
      for (String line : printed) {
        acknowledgements.write((line + '\n').getBytes(StandardCharsets.UTF_8));
      }
      acknowledgements.flush();
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "--max-events 2 did not exit once acknowledged");
    }
    assertEquals(0, p.exitValue(), Files.readString(dir.resolve("err")));
    assertEquals(List.of(1, 2), ids(printed));
    assertEquals(
        JSON.readTree(printed.get(1)).get("tx_end_lsn").asText() + " []",
        describe(stored(store, "fdacks")));
  }
}

package io.datum.cdc.cli;

import static io.datum.cdc.cli.PgcdcProcess.command;
import static io.datum.cdc.cli.PgcdcProcess.pgcdc;
import static io.datum.cdc.cli.PgcdcProcess.pgcdcInProcess;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.datum.cdc.cli.PgcdcProcess.Run;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code pgcdc checkpoint show} while a consumer runs, {@code checkpoint delete}, {@code slot
 * drop}, corrupt checkpoint files and {@code --version}, as child processes against an embedded
 * PostgreSQL.
 */
@EmbeddedPostgresTest
class OperatorCommandsTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private final EmbeddedPostgresServer pg;

  OperatorCommandsTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  private String[] stream(Path store, String slot, String... extra) {
    return PgcdcProcess.streamArgs(pg, store, slot, slot, extra);
  }

  @Test
  void checkpointShowAndDeleteWorkOnAJdbcStore(@TempDir Path dir) throws Exception {
    String uri = "jdbc:" + pg.jdbcUrl().substring("jdbc:".length()) + "#table=cli_checkpoint";
    try (io.datum.cdc.CdcCheckpointStore store = io.datum.cdc.CheckpointStores.open(uri)) {
      store.store(
          io.datum.cdc.CdcCheckpoint.atWatermark("jshow", io.datum.cdc.PgLsn.parse("0/1234")));
    }
    Run show = pgcdc(dir, "checkpoint", "show", "--store", uri, "--slot", "jshow");
    assertEquals(0, show.exitCode(), show.stderr());
    JsonNode c = JSON.readTree(String.join("\n", show.stdout())).get("checkpoints");
    assertEquals("jshow", c.get(0).get("slot").asText(), show.stdout().toString());
    assertEquals("0/1234", c.get(0).get("watermark").asText(), show.stdout().toString());
    Run deleted = pgcdc(dir, "checkpoint", "delete", "--store", uri, "--slot", "jshow", "--yes");
    assertEquals(0, deleted.exitCode(), deleted.stderr());
    Run after = pgcdc(dir, "checkpoint", "show", "--store", uri, "--slot", "jshow");
    assertEquals(0, after.exitCode(), after.stderr());
    JsonNode reset = JSON.readTree(String.join("\n", after.stdout())).get("checkpoints");
    assertTrue(
        reset.isEmpty() || reset.get(0).get("watermark").asText().equals("0/0"),
        after.stdout().toString());
    // a mistyped table: reported missing, never created by an inspection command
    String typo = "jdbc:" + pg.jdbcUrl().substring("jdbc:".length()) + "#table=cli_checkpiont";
    Run missing = pgcdc(dir, "checkpoint", "show", "--store", typo);
    assertEquals(1, missing.exitCode(), missing.stderr());
    assertTrue(
        missing.stderr().contains("the table cli_checkpiont does not exist"), missing.stderr());
    Run notDeleted = pgcdc(dir, "checkpoint", "delete", "--store", typo, "--slot", "x", "--yes");
    assertEquals(1, notDeleted.exitCode(), notDeleted.stderr());
    assertEquals(
        "f", pg.queryString("SELECT to_regclass('cli_checkpiont') IS NOT NULL"), "not created");
  }

  @Test
  void checkpointShowWhileAConsumerRunsThenDeleteAndDropTheSlot(@TempDir Path dir)
      throws Exception {
    pg.execute(
        "CREATE TABLE ops (id int PRIMARY KEY)",
        "CREATE PUBLICATION ops FOR TABLE ops",
        "SELECT pg_create_logical_replication_slot('ops', 'pgoutput')",
        "INSERT INTO ops VALUES (1)");
    Path store = dir.resolve("store");
    Path out = dir.resolve("out");
    Process consumer =
        new ProcessBuilder(command(stream(store, "ops")))
            .redirectOutput(out.toFile())
            .redirectError(dir.resolve("err").toFile())
            .start();
    try {
      await().atMost(Duration.ofSeconds(60)).until(() -> Files.readAllLines(out).size() == 1);
      String end = JSON.readTree(Files.readAllLines(out).get(0)).get("tx_end_lsn").asText();
      // the consumer holds the store's lock: show reads the files without it
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> {
                Run show = pgcdc(dir, "checkpoint", "show", "--store", "file:" + store);
                assertEquals(0, show.exitCode(), show.stderr());
                JsonNode c = JSON.readTree(String.join("\n", show.stdout())).get("checkpoints");
                return c.size() == 1
                    && c.get(0).get("slot").asText().equals("ops")
                    && !io.datum.cdc.PgLsn.parse(c.get(0).get("watermark").asText())
                        .isBefore(io.datum.cdc.PgLsn.parse(end));
              });
      Run locked =
          pgcdc(dir, "checkpoint", "delete", "--store", "file:" + store, "--slot", "ops", "--yes");
      assertEquals(1, locked.exitCode(), locked.stderr());
      assertTrue(locked.stderr().startsWith("pgcdc: error: "), locked.stderr());
      assertTrue(Files.exists(store.resolve("ops.checkpoint")), "a running consumer keeps it");

      Run active = pgcdc(dir, "slot", "drop", "--url", pg.jdbcUrl(), "--slot", "ops", "--yes");
      assertEquals(1, active.exitCode(), active.stderr());
      assertTrue(
          active
              .stderr()
              .matches(
                  "pgcdc: error: replication slot \"ops\" is active for PID \\d+; stop that"
                      + " consumer first, or pass --force to terminate it\\R"),
          active.stderr());
    } finally {
      consumer.destroy();
      consumer.waitFor();
    }

    // no write permission (root ignores modes: immutable files stand in for them)
    if (new ProcessBuilder("chattr", "-R", "+i", store.toString()).start().waitFor() == 0) {
      try {
        Run writing =
            pgcdc(
                dir, "checkpoint", "delete", "--store", "file:" + store, "--slot", "ops", "--yes");
        assertEquals(1, writing.exitCode(), "the store really is read-only: " + writing.stderr());
        Run readOnly = pgcdc(dir, "checkpoint", "show", "--store", "file:" + store);
        assertEquals(0, readOnly.exitCode(), readOnly.stderr());
        assertEquals(
            "ops",
            JSON.readTree(String.join("\n", readOnly.stdout()))
                .get("checkpoints")
                .get(0)
                .get("slot")
                .asText());
      } finally {
        assertEquals(
            0, new ProcessBuilder("chattr", "-R", "-i", store.toString()).start().waitFor());
      }
    }

    Run unconfirmed =
        pgcdcInProcess("checkpoint", "delete", "--store", "file:" + store, "--slot", "ops");
    assertEquals(2, unconfirmed.exitCode(), unconfirmed.stderr());
    assertEquals(
        List.of(
            "pgcdc: error: checkpoint delete needs --yes: the next consumer of slot \"ops\" then"
                + " resumes from the slot's confirmed_flush_lsn, and events acknowledged after it"
                + " come again"),
        unconfirmed.stderr().lines().toList());

    // a damaged checkpoint file: the errors say what to do
    byte[] good = Files.readAllBytes(store.resolve("ops.checkpoint"));
    byte[] bad = good.clone();
    bad[bad.length - 1] ^= 0x55;
    Files.write(store.resolve("ops.checkpoint"), bad);
    String remedy =
        ". Restore it from a backup, or delete it (pgcdc checkpoint delete --store file:"
            + store
            + " --slot ops --yes): the slot then resumes from its own confirmed position and no"
            + " change is lost, but events acknowledged after that position come again";
    Run showCorrupt = pgcdc(dir, "checkpoint", "show", "--store", "file:" + store);
    assertEquals(1, showCorrupt.exitCode(), showCorrupt.stderr());
    assertTrue(showCorrupt.stderr().startsWith("pgcdc: error: corrupt checkpoint of slot \"ops\""));
    assertTrue(showCorrupt.stderr().strip().endsWith(remedy), showCorrupt.stderr());
    Run streamCorrupt = pgcdc(dir, stream(store, "ops", "--idle-exit", "1"));
    assertEquals(1, streamCorrupt.exitCode(), streamCorrupt.stderr());
    assertTrue(streamCorrupt.stderr().strip().endsWith(remedy), streamCorrupt.stderr());

    Run deleted =
        pgcdc(dir, "checkpoint", "delete", "--store", "file:" + store, "--slot", "ops", "--yes");
    assertEquals(0, deleted.exitCode(), deleted.stderr());
    assertEquals(
        List.of("deleted the checkpoint of slot ops from " + store.toUri()), deleted.stdout());
    assertFalse(Files.exists(store.resolve("ops.checkpoint")));
    Run gone =
        pgcdc(dir, "checkpoint", "delete", "--store", "file:" + store, "--slot", "ops", "--yes");
    assertEquals(1, gone.exitCode());
    assertEquals(
        List.of(
            "pgcdc: error: the store " + store.toUri() + " holds no checkpoint for slot \"ops\""),
        gone.stderr().lines().toList());

    // without its checkpoint the slot resumes from its own position: nothing comes again
    pg.execute("INSERT INTO ops VALUES (2)");
    Run resumed = pgcdc(dir, stream(store, "ops", "--stop-at-lsn", "current"));
    assertEquals(0, resumed.exitCode(), resumed.stderr());
    assertEquals(1, resumed.stdout().size(), resumed.stdout().toString());
    assertEquals(2, JSON.readTree(resumed.stdout().get(0)).get("after").get("id").asInt());

    Run drop = pgcdc(dir, "slot", "drop", "--url", pg.jdbcUrl(), "--slot", "ops", "--yes");
    assertEquals(0, drop.exitCode(), drop.stderr());
    assertEquals(
        "0",
        pg.queryString("SELECT count(*)::text FROM pg_replication_slots WHERE slot_name = 'ops'"));
    Run dropAgain = pgcdc(dir, "slot", "drop", "--url", pg.jdbcUrl(), "--slot", "ops", "--yes");
    assertEquals(2, dropAgain.exitCode(), "a slot the command names that does not exist");
    assertEquals(
        List.of("pgcdc: error: replication slot \"ops\" does not exist at " + pg.jdbcUrl()),
        dropAgain.stderr().lines().toList());
  }

  @Test
  void versionIsTheProjectVersion(@TempDir Path dir) throws Exception {
    Run version = pgcdc(dir, "--version");
    assertEquals(0, version.exitCode(), version.stderr());
    String expected = Pgcdc.Version.version();
    assertTrue(expected.matches("\\d+\\.\\d+\\.\\d+.*"), expected);
    assertEquals(List.of("pgcdc " + expected), version.stdout());
  }

  @Test
  void checkpointDeleteOnAStoreWithoutFilesLeavesAnEmptyCheckpoint(@TempDir Path dir)
      throws Exception {
    pg.execute(
        "CREATE TABLE opsdb (id int PRIMARY KEY)",
        "CREATE PUBLICATION opsdb FOR TABLE opsdb",
        "SELECT pg_create_logical_replication_slot('opsdb', 'pgoutput')",
        "INSERT INTO opsdb VALUES (1)");
    String store = "rocksdb:" + dir.resolve("rocks");
    List<String> args = new ArrayList<>(List.of(stream(dir, "opsdb", "--stop-at-lsn", "current")));
    args.set(args.indexOf("file:" + dir), store);
    Run first = pgcdc(dir, args.toArray(new String[0]));
    assertEquals(0, first.exitCode(), first.stderr());
    assertEquals(1, first.stdout().size());
    Run deleted = pgcdc(dir, "checkpoint", "delete", "--store", store, "--slot", "opsdb", "--yes");
    assertEquals(0, deleted.exitCode(), deleted.stderr());
    assertEquals(1, deleted.stdout().size(), deleted.stdout().toString());
    assertTrue(
        deleted.stdout().get(0).startsWith("deleted the checkpoint of slot opsdb from ")
            && deleted.stdout().get(0).endsWith(" (replaced by an empty one at 0/0)"),
        deleted.stdout().get(0));
    Run show = pgcdc(dir, "checkpoint", "show", "--store", store, "--slot", "opsdb");
    assertEquals(0, show.exitCode(), show.stderr());
    assertEquals(
        "0/0",
        JSON.readTree(String.join("\n", show.stdout()))
            .get("checkpoints")
            .get(0)
            .get("watermark")
            .asText());
    // the slot's own position counts: nothing comes again, the next change does
    pg.execute("INSERT INTO opsdb VALUES (2)");
    Run resumed = pgcdc(dir, args.toArray(new String[0]));
    assertEquals(0, resumed.exitCode(), resumed.stderr());
    assertEquals(1, resumed.stdout().size(), resumed.stdout().toString());
    assertEquals(2, JSON.readTree(resumed.stdout().get(0)).get("after").get("id").asInt());
  }

  @Test
  void readOnlyCommandsWriteNothingIntoAPathThatHoldsNoStore(@TempDir Path dir) throws Exception {
    Path own = Files.createDirectory(dir.resolve("own"));
    Files.writeString(own.resolve("notes.txt"), "mine\n");
    for (String store : List.of("rocksdb:" + own, "mapdb:" + own.resolve("notes.txt"))) {
      for (String[] command :
          List.of(
              new String[] {"checkpoint", "show", "--store", store},
              new String[] {"checkpoint", "delete", "--store", store, "--slot", "s", "--yes"},
              new String[] {
                "snapshot", "--url", pg.jdbcUrl(), "--slot", "s", "--table", "t", "--store", store
              })) {
        Run run = pgcdcInProcess(command);
        assertEquals(1, run.exitCode(), String.join(" ", command) + ": " + run.stderr());
        assertTrue(run.stderr().contains("no store there"), run.stderr());
        try (var listed = Files.list(own)) {
          assertEquals(
              List.of("notes.txt"),
              listed.map(p -> p.getFileName().toString()).sorted().toList(),
              String.join(" ", command));
        }
      }
    }
    // a store of each kind, never written to, is still shown
    Path mapdb = dir.resolve("cdc.mapdb");
    Path rocks = dir.resolve("rocks");
    for (String store : List.of("mapdb:" + mapdb, "rocksdb:" + rocks)) {
      io.datum.cdc.CheckpointStores.open(store).close();
      Run shown = pgcdcInProcess("checkpoint", "show", "--store", store);
      assertEquals(0, shown.exitCode(), store + ": " + shown.stderr());
    }
  }
}

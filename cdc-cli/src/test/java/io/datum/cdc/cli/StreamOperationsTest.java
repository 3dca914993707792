package io.datum.cdc.cli;

import static io.datum.cdc.cli.PgcdcProcess.command;
import static io.datum.cdc.cli.PgcdcProcess.pgcdc;
import static io.datum.cdc.cli.PgcdcProcess.pgcdcInProcess;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.datum.cdc.PgLsn;
import io.datum.cdc.cli.PgcdcProcess.Run;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code pgcdc stream} as an operator meets it, as child processes against an embedded PostgreSQL:
 * creating publications, stop conditions on positions, start-up retries, errors naming the right
 * cause.
 */
@EmbeddedPostgresTest(settings = "max_prepared_transactions=4")
class StreamOperationsTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private final EmbeddedPostgresServer pg;

  StreamOperationsTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  private String[] stream(Path store, String slot, String publication, String... extra) {
    return PgcdcProcess.streamArgs(pg, store, slot, publication, extra);
  }

  private boolean publicationExists(String name) throws Exception {
    return pg.queryString(
            "SELECT count(*)::text FROM pg_publication WHERE pubname = '" + name + "'")
        .equals("1");
  }

  @Test
  void createPublicationNeedsItsTablesAndNeverStreamsLessThanAsked(@TempDir Path dir)
      throws Exception {
    pg.execute(
        "CREATE TABLE pub_a (id int PRIMARY KEY)",
        "CREATE TABLE pub_b (id int PRIMARY KEY)",
        "CREATE TABLE pub_nokey (x int)",
        "CREATE PUBLICATION pub_only_a FOR TABLE pub_a");

    Run noTables =
        pgcdcInProcess(stream(dir.resolve("s1"), "pub1", "pub1", "--create-publication"));
    assertEquals(2, noTables.exitCode(), noTables.stderr());
    assertEquals(
        List.of(
            "pgcdc: error: --create-publication needs --tables schema.table,... or --all-tables"
                + " (FOR ALL TABLES: PostgreSQL then refuses UPDATE and DELETE on every table"
                + " without a primary key or replica identity)"),
        noTables.stderr().lines().toList());
    assertFalse(publicationExists("pub1"));

    Run lacking =
        pgcdcInProcess(
            stream(
                dir.resolve("s2"),
                "pub2",
                "pub_only_a",
                "--create-slot",
                "--create-publication",
                "--tables",
                "public.pub_a,public.pub_b,pub_none"));
    assertEquals(2, lacking.exitCode(), lacking.stderr());
    assertEquals(
        List.of(
            "pgcdc: error: publication \"pub_only_a\" exists but does not publish public.pub_b,"
                + " pub_none (no such table) (--tables, createPublication); existing publications"
                + " are not changed: add them (ALTER PUBLICATION \"pub_only_a\" ADD TABLE ...), or"
                + " stream another publication"),
        lacking.stderr().lines().toList());

    // the start fails after creating the publication (no slot, no --create-slot): it goes again
    Run failed =
        pgcdc(
            dir,
            stream(
                dir.resolve("s3"),
                "pub3",
                "pub3",
                "--create-publication",
                "--tables",
                "public.pub_a"));
    assertEquals(2, failed.exitCode(), failed.stderr());
    assertTrue(
        failed.stderr().startsWith("pgcdc: error: replication slot \"pub3\" does not exist"),
        failed.stderr());
    assertFalse(publicationExists("pub3"), "a failed start leaves no publication behind");

    try {
      Run all =
          pgcdc(
              dir,
              stream(
                  dir.resolve("s4"),
                  "pub4",
                  "pub4",
                  "--create-slot",
                  "--create-publication",
                  "--all-tables",
                  "--stop-at-lsn",
                  "current"));
      assertEquals(0, all.exitCode(), all.stderr());
      assertTrue(
          all.stderr()
              .matches(
                  "(?s).*WARN .*publication pub4 publishes \\d+ table\\(s\\) without a primary key"
                      + " or replica identity: [^;]*public\\.pub_nokey[,;].*PostgreSQL now refuses"
                      + " UPDATE and DELETE on them.*"),
          all.stderr());
      assertTrue(publicationExists("pub4"));
    } finally {
      // FOR ALL TABLES would break UPDATE and DELETE on the tables of the other tests
      pg.execute(
          "DROP PUBLICATION IF EXISTS pub4",
          "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
              + " WHERE slot_name = 'pub4'");
    }

    Run same =
        pgcdc(
            dir,
            stream(
                dir.resolve("s5"),
                "pub5",
                "pub_only_a",
                "--create-slot",
                "--create-publication",
                "--tables",
                "pub_a",
                "--stop-at-lsn",
                "current"));
    assertEquals(0, same.exitCode(), same.stderr());
  }

  @Test
  void idleExitWaitsForAWalsenderDecodingALargeTransactionAndStopAtLsnForTheServersPosition(
      @TempDir Path dir) throws Exception {
    pg.execute(
        "CREATE TABLE big (id int PRIMARY KEY)",
        "CREATE PUBLICATION big FOR TABLE big",
        "SELECT pg_create_logical_replication_slot('big', 'pgoutput')",
        "INSERT INTO big SELECT generate_series(1, 100000)");
    // the walsender decodes the 100,000 rows for a while before it sends the first: that is not
    // idleness
    Run idle = pgcdc(dir, stream(dir.resolve("store"), "big", "big", "--idle-exit", "0.1"));
    assertEquals(0, idle.exitCode(), idle.stderr());
    assertEquals(100000, idle.stdout().size());
    assertEquals(100000, JSON.readTree(idle.stdout().get(99999)).get("after").get("id").asInt());

    pg.execute("INSERT INTO big VALUES (100001)", "INSERT INTO big VALUES (100002)");
    PgLsn before = PgLsn.parse(pg.queryString("SELECT pg_current_wal_flush_lsn()::text"));
    Run caughtUp =
        pgcdc(dir, stream(dir.resolve("store"), "big", "big", "--stop-at-lsn", "current"));
    assertEquals(0, caughtUp.exitCode(), caughtUp.stderr());
    assertEquals(2, caughtUp.stdout().size(), caughtUp.stdout().toString());
    assertEquals(100002, JSON.readTree(caughtUp.stdout().get(1)).get("after").get("id").asInt());
    PgLsn confirmed =
        PgLsn.parse(
            pg.queryString(
                "SELECT confirmed_flush_lsn::text FROM pg_replication_slots"
                    + " WHERE slot_name = 'big'"));
    assertFalse(confirmed.isBefore(before), confirmed + " before " + before);

    Run badLsn =
        pgcdcInProcess(stream(dir.resolve("store"), "big", "big", "--stop-at-lsn", "soon"));
    assertEquals(2, badLsn.exitCode(), badLsn.stderr());
    assertEquals(
        List.of(
            "pgcdc: error: --stop-at-lsn must be an LSN such as 0/16B37A0, or current, was"
                + " \"soon\""),
        badLsn.stderr().lines().toList());
  }

  @Test
  void retryStartWaitsForTheServer(@TempDir Path dir) throws Exception {
    pg.execute(
        "CREATE TABLE retried (id int PRIMARY KEY)",
        "CREATE PUBLICATION retried FOR TABLE retried",
        "SELECT pg_create_logical_replication_slot('retried', 'pgoutput')",
        "INSERT INTO retried VALUES (1)");
    pg.stop();
    Path err = dir.resolve("err");
    Path out = dir.resolve("out");
    Process p;
    try {
      Run down = pgcdc(dir, stream(dir.resolve("store"), "retried", "retried"));
      assertTrue(
          down.stderr()
              .strip()
              .endsWith(
                  " (the server could not be reached: check that it runs and the URL;"
                      + " --retry-start waits for it)"),
          down.stderr());
      assertEquals(1, down.exitCode(), down.stderr());
      assertTrue(
          down.stderr()
              .startsWith("pgcdc: error: cannot connect for replication of slot \"retried\""),
          down.stderr());
      p =
          new ProcessBuilder(
                  command(
                      stream(
                          dir.resolve("store"),
                          "retried",
                          "retried",
                          "--retry-start",
                          "--max-events",
                          "1",
                          "--metrics-port",
                          "0",
                          "--metrics-address",
                          "127.0.0.1")))
              .redirectOutput(out.toFile())
              .redirectError(err.toFile())
              .start();
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> Files.readString(err).contains("(--retry-start)"));
      // waiting to retry is not failing: /health says starting, and the state gauge is not failed
      java.util.regex.Matcher announced =
          java.util.regex.Pattern.compile("metrics at http://127\\.0\\.0\\.1:(\\d+)/metrics")
              .matcher(Files.readString(err));
      assertTrue(announced.find(), Files.readString(err));
      Response waiting =
          get(
              new Http(),
              java.net.URI.create("http://127.0.0.1:" + announced.group(1) + "/health"));
      assertEquals(200, waiting.statusCode(), waiting.body());
      assertEquals("UNKNOWN", JSON.readTree(waiting.body()).get("status").asText(), waiting.body());
      // between two attempts the source is new; a probe that lands on an attempt sees it starting
      // (a race the test cannot avoid: the attempts go on until the server is back)
      assertTrue(
          Set.of("new", "starting").contains(JSON.readTree(waiting.body()).get("state").asText()),
          waiting.body());
    } finally {
      pg.start();
    }
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "pgcdc --retry-start did not stream");
    assertEquals(0, p.exitValue(), Files.readString(err));
    List<String> lines = Files.readAllLines(out);
    assertEquals(1, lines.size(), lines.toString());
    assertEquals(1, JSON.readTree(lines.get(0)).get("after").get("id").asInt());
  }

  /** --retry-start makes the first attempt, then as many more as --reconnect says. */
  @Test
  void retryStartMakesTheFirstAttemptAndThenReconnectMore(@TempDir Path dir) throws Exception {
    int closed;
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
      closed = socket.getLocalPort(); // nothing listens there once it is closed
    }
    Run run =
        pgcdc(
            dir,
            PgcdcProcess.streamArgs(
                "jdbc:postgresql://127.0.0.1:" + closed + "/postgres",
                "postgres",
                dir.resolve("store"),
                "retry_count",
                "retry_count",
                "--retry-start",
                "--reconnect",
                "2"));
    assertEquals(1, run.exitCode(), run.stderr());
    long retries = run.stderr().lines().filter(l -> l.contains("cannot start (attempt")).count();
    assertEquals(2, retries, "attempts 1 and 2 failed and were retried, the third ended it");
  }

  @Test
  void errorsNameTheCauseAndARemedyThatLosesNothing(@TempDir Path dir) throws Exception {
    pg.execute(
        "CREATE TABLE errs (id int PRIMARY KEY)",
        "CREATE PUBLICATION errs FOR TABLE errs",
        "SELECT pg_create_logical_replication_slot('errs', 'pgoutput')",
        "INSERT INTO errs VALUES (1)");
    // a slot dropped while pgcdc reconnects: never advise --create-slot to the process that had it
    Path out = dir.resolve("out");
    Path err = dir.resolve("err");
    Process p =
        new ProcessBuilder(command(stream(dir.resolve("store"), "errs", "errs")))
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .start();
    await().atMost(Duration.ofSeconds(60)).until(() -> Files.readAllLines(out).size() == 1);
    await()
        .atMost(Duration.ofSeconds(60))
        .ignoreExceptions()
        .until(
            () -> {
              try (Connection c = pg.getConnection();
                  Statement st = c.createStatement()) {
                st.execute(
                    "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
                        + " WHERE slot_name = 'errs' AND active_pid IS NOT NULL");
                st.execute("SELECT pg_drop_replication_slot('errs')");
              }
              return true;
            });
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "pgcdc did not stop without its slot");
    String stderr = Files.readString(err);
    // a slot that is gone needs an operator, as a missing one at the start: exit 2, not retried
    assertEquals(2, p.exitValue(), stderr);
    String line =
        stderr.lines().filter(l -> l.startsWith("pgcdc: error:")).findFirst().orElseThrow();
    assertTrue(
        line.startsWith(
            "pgcdc: error: replication slot \"errs\" was dropped while the source was reconnecting"
                + " to it; the changes after the stored watermark "),
        line);
    assertTrue(
        line.contains(
            "are gone with it, and a new slot would start after them. Find out what dropped it;"
                + " only if that loss is acceptable, start again with a new slot (createSlot(true)"
                + " and trustSlotPosition(true), pgcdc --create-slot --trust-slot-position)"),
        line);
    assertFalse(line.contains("pg_create_logical_replication_slot"), line);

    // all replication slots in use: a server limit, not a lost connection
    int free =
        Integer.parseInt(
            pg.queryString(
                "SELECT (current_setting('max_replication_slots')::int - count(*))::text"
                    + " FROM pg_replication_slots"));
    assertTrue(free <= 40, "max_replication_slots leaves " + free + " free");
    List<String> fillers = new ArrayList<>();
    try {
      for (int i = 0; i < free; i++) {
        fillers.add("filler_" + i);
        pg.execute("SELECT pg_create_logical_replication_slot('filler_" + i + "', 'pgoutput')");
      }
      Run full = pgcdc(dir, stream(dir.resolve("full"), "full", "errs", "--create-slot"));
      assertEquals(2, full.exitCode(), full.stderr()); // retrying cannot fix it
      assertEquals(
          List.of(
              "pgcdc: error: cannot create replication slot \"full\": ERROR: all replication"
                  + " slots are in use; Hint: Free one or increase \"max_replication_slots\"."
                  + " [SQLSTATE 53400]: a server limit is reached (this is not a lost"
                  + " connection); for \"all replication slots are in use\", drop slots no longer"
                  + " used (SELECT slot_name FROM pg_replication_slots WHERE NOT active) or raise"
                  + " max_replication_slots (a server restart)"),
          full.stderr().lines().toList());
    } finally {
      for (String filler : fillers) {
        pg.execute(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
                + " WHERE slot_name = '"
                + filler
                + "'");
      }
    }
  }

  @Test
  void metricsPortServesPrometheusTextAndHealthAndEveryLogLineNamesTheSlot(@TempDir Path dir)
      throws Exception {
    pg.execute(
        "CREATE TABLE watched (id int PRIMARY KEY)",
        "CREATE PUBLICATION watched FOR TABLE watched");
    Path out = dir.resolve("out");
    Path err = dir.resolve("err");
    Process p =
        new ProcessBuilder(
                command(
                    stream(
                        dir.resolve("store"),
                        "watched_slot",
                        "watched",
                        "--create-slot",
                        "--metrics-port",
                        "0",
                        "--metrics-address",
                        "127.0.0.1",
                        "--verbose")))
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .start();
    try {
      java.util.regex.Pattern announced =
          java.util.regex.Pattern.compile(
              "pgcdc: metrics at http://127\\.0\\.0\\.1:(\\d+)/metrics, health at /health"
                  + " \\(slot watched_slot\\)");
      int port = announcedPort(err, announced);
      Http http = new Http();
      java.net.URI metrics = java.net.URI.create("http://127.0.0.1:" + port + "/metrics");
      java.net.URI health = java.net.URI.create("http://127.0.0.1:" + port + "/health");
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> JSON.readTree(get(http, health).body()).get("status").asText().equals("UP"));
      pg.execute("INSERT INTO watched SELECT generate_series(1, 25)");
      String delivered =
          "datum_cdc_events_delivered_events_total{publication=\"watched\",slot=\"watched_slot\"} ";
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> get(http, metrics).body().contains(delivered + "25.0"));
      Response text = get(http, metrics);
      assertEquals("text/plain; version=0.0.4; charset=utf-8", text.contentType());
      assertTrue(
          text.body()
              .contains(
                  "datum_cdc_state{publication=\"watched\",slot=\"watched_slot\",state=\"streaming\"} 1.0"),
          text.body());
      // NaN (unknown) until read once the slot exists, then bytes
      String lagLine =
          "datum_cdc_replication_lag_bytes{publication=\"watched\",slot=\"watched_slot\"} ";
      double lag =
          await()
              .atMost(Duration.ofSeconds(60))
              .until(
                  () ->
                      Double.parseDouble(
                          get(http, metrics)
                              .body()
                              .lines()
                              .filter(l -> l.startsWith(lagLine))
                              .findFirst()
                              .orElseThrow()
                              .substring(lagLine.length())),
                  bytes -> !bytes.isNaN());
      assertTrue(lag >= 0, "lag " + lag);
      assertTrue(text.body().contains("jvm_memory_used_bytes{"), "JVM meters too");
      Response open = get(http, metrics, "application/openmetrics-text; version=1.0.0");
      assertEquals(
          "application/openmetrics-text; version=1.0.0; charset=utf-8", open.contentType());
      assertTrue(open.body().strip().endsWith("# EOF"), "OpenMetrics ends with # EOF");

      // the slot status is read at most once per lag interval and shared by /metrics and /health:
      // a read taken between the slot's creation and START_REPLICATION says inactive until the next
      Response up =
          await()
              .atMost(Duration.ofSeconds(60))
              .until(() -> get(http, health), r -> r.body().contains("\"slotActive\":true"));
      assertEquals(200, up.statusCode());
      var upJson = JSON.readTree(up.body());
      assertEquals("UP", upJson.get("status").asText(), up.body());
      assertEquals("streaming", upJson.get("state").asText());
      assertEquals("watched_slot", upJson.get("slot").asText());
      assertEquals("watched", upJson.get("publication").asText());
      assertTrue(upJson.get("slotActive").asBoolean(), up.body());
      assertEquals("reserved", upJson.get("walStatus").asText(), up.body());
      for (String path : List.of("/", "/healthz", "/health/", "/metrics/x")) {
        assertEquals(
            404,
            get(http, java.net.URI.create("http://127.0.0.1:" + port + path)).statusCode(),
            path);
      }

      // a lost connection: reconnected, counted, and streaming again
      pg.execute(
          "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
              + " WHERE slot_name = 'watched_slot'");
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  get(http, metrics)
                      .body()
                      .contains(
                          "datum_cdc_reconnects_total{publication=\"watched\",slot=\"watched_slot\"} 1.0"));
      await().atMost(Duration.ofSeconds(60)).until(() -> get(http, health).statusCode() == 200);
      assertEquals(25, Files.readAllLines(out).size());
    } finally {
      p.destroy(); // SIGTERM: a graceful stop
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "pgcdc did not stop on SIGTERM");
    }
    String stderr = Files.readString(err);
    assertTrue(
        stderr.contains(
            "pgcdc: stopping on a signal (SIGTERM or SIGINT): storing the acknowledgements made so"
                + " far\n"),
        stderr);
    assertTrue(
        stderr.contains("pgcdc: stopped; 25 events printed, the slot confirmed up to "), stderr);
    List<String> logLines = Files.readString(err).lines().filter(l -> l.startsWith("[")).toList();
    assertTrue(logLines.size() >= 3, "--verbose logs at INFO: " + logLines);
    for (String line : logLines) {
      assertTrue(
          line.startsWith("[") && line.substring(0, line.indexOf(']')).contains("watched_slot"),
          line);
    }
  }

  @Test
  void duringANewSlotsInitialSnapshotTheStateIsSnapshottingAndReadRowsAreNoDeliveredChanges(
      @TempDir Path dir) throws Exception {
    pg.execute(
        "CREATE TABLE phased (id int PRIMARY KEY, pad text)",
        "INSERT INTO phased SELECT g, repeat('x', 200) FROM generate_series(1, 5000) g",
        "CREATE PUBLICATION phased FOR TABLE phased");
    Path err = dir.resolve("err");
    // stdout is a pipe nobody reads until the checks are done: the handler blocks on a full pipe
    // in the middle of the snapshot
    Process p =
        new ProcessBuilder(
                command(
                    stream(
                        dir.resolve("store"),
                        "phased_slot",
                        "phased",
                        "--create-slot",
                        "--snapshot",
                        "initial",
                        "--metrics-port",
                        "0",
                        "--metrics-address",
                        "127.0.0.1")))
            .redirectError(err.toFile())
            .start();
    java.util.concurrent.CompletableFuture<List<String>> lines = null;
    try {
      java.util.regex.Pattern announced =
          java.util.regex.Pattern.compile(
              "pgcdc: metrics at http://127\\.0\\.0\\.1:(\\d+)/metrics.*");
      int port = announcedPort(err, announced);
      Http http = new Http();
      java.net.URI metrics = java.net.URI.create("http://127.0.0.1:" + port + "/metrics");
      java.net.URI health = java.net.URI.create("http://127.0.0.1:" + port + "/health");
      String labels = "{publication=\"phased\",slot=\"phased_slot\"";
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () -> get(http, metrics).body(),
              b ->
                  b.contains("datum_cdc_snapshot_rows_read_rows_total" + labels + "} ")
                      && !b.contains("datum_cdc_snapshot_rows_read_rows_total" + labels + "} 0.0"));
      Response h = get(http, health);
      var json = JSON.readTree(h.body());
      assertEquals(200, h.statusCode(), h.body());
      assertEquals("snapshotting", json.get("state").asText(), h.body());
      assertEquals("UP", json.get("status").asText(), h.body());
      assertTrue(json.get("snapshotInProgress").asBoolean(), h.body());
      String text = get(http, metrics).body();
      assertTrue(text.contains("datum_cdc_state" + labels + ",state=\"snapshotting\"} 1.0"));
      assertTrue(text.contains("datum_cdc_state" + labels + ",state=\"streaming\"} 0.0"));
      assertTrue(text.contains("datum_cdc_events_delivered_events_total" + labels + "} 0.0"));
      // every series the shipped alert rules name is served (the rules' own test is AlertRulesTest)
      String rules = Files.readString(Path.of("..", "docs", "prometheus", "datum-cdc-alerts.yml"));
      java.util.regex.Matcher named =
          java.util.regex.Pattern.compile("datum_cdc_[a-z_]+").matcher(rules);
      java.util.Set<String> missing = new java.util.TreeSet<>();
      while (named.find()) {
        String series = named.group();
        if (!text.contains(series + "{")) {
          missing.add(series);
        }
      }
      assertEquals(java.util.Set.of(), missing, "series the alert rules name but /metrics lacks");

      pg.execute("INSERT INTO phased VALUES (0, 'after')");
      java.io.BufferedReader out =
          new java.io.BufferedReader(
              new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      lines =
          java.util.concurrent.CompletableFuture.supplyAsync(
              () -> {
                List<String> read = new java.util.ArrayList<>();
                try {
                  for (String line = out.readLine(); line != null; line = out.readLine()) {
                    read.add(line);
                  }
                } catch (java.io.IOException e) {
                  throw new java.io.UncheckedIOException(e);
                }
                return read;
              });
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () -> get(http, metrics).body(),
              b -> b.contains("datum_cdc_events_delivered_events_total" + labels + "} 1.0"));
      var streaming = JSON.readTree(get(http, health).body());
      assertEquals("streaming", streaming.get("state").asText());
      assertTrue(
          get(http, metrics)
              .body()
              .contains("datum_cdc_snapshot_rows_read_rows_total" + labels + "} 5000.0"));
    } finally {
      p.destroy();
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "pgcdc did not stop on SIGTERM");
    }
    List<String> printed = lines.get(60, TimeUnit.SECONDS);
    assertEquals(5001, printed.size(), "5000 read rows and the insert");
    assertTrue(printed.get(5000).startsWith("{\"op\":\"insert\""), printed.get(5000));
  }

  @Test
  void aClosedStdoutEndsWithOneLineAndStatus141AndTheNextRunGoesOn(@TempDir Path dir)
      throws Exception {
    pg.execute(
        "CREATE TABLE piped (id int PRIMARY KEY)", "CREATE PUBLICATION piped FOR TABLE piped");
    Path err = dir.resolve("err");
    Process p =
        new ProcessBuilder(
                command(stream(dir.resolve("store"), "piped_slot", "piped", "--create-slot")))
            .redirectError(err.toFile())
            .start();
    try {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  pg.queryString(
                      "SELECT count(*)::text FROM pg_replication_slots WHERE slot_name = 'piped_slot'"
                          + " AND active"),
              "1"::equals);
      pg.execute("INSERT INTO piped VALUES (1)");
      java.io.BufferedReader out =
          new java.io.BufferedReader(
              new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      assertTrue(out.readLine().contains("\"after\":{\"id\":1}"));
      out.close(); // the reader goes away, as head does
      // a change to print after the close: its write finds the pipe closed
      pg.execute("INSERT INTO piped VALUES (2)");
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "pgcdc did not stop on a closed stdout");
    } finally {
      p.destroyForcibly();
    }
    assertEquals(141, p.exitValue());
    String stderr = Files.readString(err);
    assertTrue(
        stderr.contains(
            "pgcdc: stdout was closed (its reader stopped reading); stopped; 1 events printed, the"
                + " slot confirmed up to "),
        stderr);
    assertFalse(stderr.contains("Exception"), stderr);
    // the change that could not be printed comes in the next run
    PgcdcProcess.Run next =
        PgcdcProcess.pgcdc(
            dir, stream(dir.resolve("store"), "piped_slot", "piped", "--max-events", "1"));
    assertEquals(0, next.exitCode(), next.stderr());
    assertEquals(1, next.stdout().size(), next.stdout().toString());
    assertTrue(next.stdout().get(0).contains("\"after\":{\"id\":2}"), next.stdout().get(0));
  }

  /** The port of the first stderr line {@code announced} matches (group 1), once there is one. */
  private static int announcedPort(Path err, java.util.regex.Pattern announced) {
    return await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                Files.readString(err)
                    .lines()
                    .map(announced::matcher)
                    .filter(java.util.regex.Matcher::matches)
                    .map(m -> Integer.parseInt(m.group(1)))
                    .findFirst()
                    .orElse(-1),
            found -> found > 0);
  }

  /** A response: status, Content-Type, body. */
  private record Response(int statusCode, String contentType, String body) {}

  /** Marks the calls of {@link #get}; java.net.http is not a module this one reads. */
  private static final class Http {}

  private static Response get(Http http, java.net.URI uri) throws Exception {
    return get(http, uri, null);
  }

  private static Response get(Http http, java.net.URI uri, String accept) throws Exception {
    java.net.HttpURLConnection c = (java.net.HttpURLConnection) uri.toURL().openConnection();
    try {
      c.setConnectTimeout(10_000);
      c.setReadTimeout(30_000);
      if (accept != null) {
        c.setRequestProperty("Accept", accept);
      }
      int code = c.getResponseCode();
      java.io.InputStream in = code < 400 ? c.getInputStream() : c.getErrorStream();
      String body = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
      return new Response(code, c.getContentType(), body);
    } finally {
      c.disconnect();
    }
  }

  @Test
  void aMetricsPortInUseIsAUsageErrorNamingIt(@TempDir Path dir) throws Exception {
    try (java.net.ServerSocket taken =
        new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      Run refused =
          pgcdcInProcess(
              stream(
                  dir.resolve("store"),
                  "unused",
                  "unused",
                  "--metrics-address",
                  "127.0.0.1",
                  "--metrics-port",
                  Integer.toString(taken.getLocalPort())));
      assertEquals(2, refused.exitCode(), refused.stderr());
      assertTrue(
          refused
              .stderr()
              .startsWith(
                  "pgcdc: error: --metrics-port "
                      + taken.getLocalPort()
                      + " on --metrics-address 127.0.0.1: cannot listen there (in use"),
          refused.stderr());
      assertFalse(Files.exists(dir.resolve("store")), "nothing created");
      Run ignored =
          pgcdcInProcess(
              stream(dir.resolve("store"), "unused", "unused", "--metrics-address", "127.0.0.1"));
      assertEquals(2, ignored.exitCode(), ignored.stderr());
      assertEquals(
          List.of(
              "pgcdc: error: --metrics-address applies only with --metrics-port PORT (it would be"
                  + " ignored)"),
          ignored.stderr().lines().toList());
    }
  }

  /** Reads n lines, failing after 60 s instead of blocking for ever. */
  private static List<String> read(java.io.BufferedReader in, int n) {
    return org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
        Duration.ofSeconds(60),
        () -> {
          List<String> lines = new ArrayList<>();
          for (int i = 0; i < n; i++) {
            String line = in.readLine();
            assertTrue(line != null, "stdout ended after " + lines);
            lines.add(line);
          }
          return lines;
        });
  }

  /** id, event_index, and whether the line says redelivered, for each line. */
  private static List<String> shape(List<String> lines) throws Exception {
    List<String> shapes = new ArrayList<>();
    for (String line : lines) {
      var e = JSON.readTree(line);
      shapes.add(
          e.get("after").get("id").asInt()
              + "#"
              + e.get("event_index").asInt()
              + (e.has("redelivered") ? " redelivered" : ""));
    }
    return shapes;
  }

  @Test
  void redeliveredMarksExactlyTheEventsThisProcessPrintedBefore(@TempDir Path dir)
      throws Exception {
    pg.execute(
        "CREATE TABLE red (id int PRIMARY KEY)",
        "CREATE PUBLICATION red FOR TABLE red",
        "SELECT pg_create_logical_replication_slot('red', 'pgoutput')",
        "INSERT INTO red VALUES (1), (2), (3)",
        "INSERT INTO red VALUES (4)");
    Path store = dir.resolve("store");
    Process first =
        new ProcessBuilder(command(stream(store, "red", "red", "--acks-from", "-")))
            .redirectError(dir.resolve("err").toFile())
            .start();
    List<String> printed;
    try (var lines =
            new java.io.BufferedReader(
                new java.io.InputStreamReader(first.getInputStream(), StandardCharsets.UTF_8));
        var acks = first.getOutputStream()) {
      printed = read(lines, 4);
      assertEquals(List.of("1#0", "2#1", "3#2", "4#0"), shape(printed));
      // a lost connection: the server sends both transactions again; this process printed them
      pg.execute(
          "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
              + " WHERE slot_name = 'red' AND active_pid IS NOT NULL");
      assertEquals(
          List.of("1#0 redelivered", "2#1 redelivered", "3#2 redelivered", "4#0 redelivered"),
          shape(read(lines, 4)));
      acks.write((printed.get(0) + '\n').getBytes(StandardCharsets.UTF_8));
      acks.flush();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> {
                Run show = pgcdc(dir, "checkpoint", "show", "--store", "file:" + store);
                return show.stdout().toString().contains("\"acknowledged\" : [ [ 0, 0 ] ]");
              });
      // a server crash: the acknowledged event is skipped, the others come again
      pg.restart(EmbeddedPostgresServer.ShutdownMode.IMMEDIATE);
      assertEquals(
          List.of("2#1 redelivered", "3#2 redelivered", "4#0 redelivered"), shape(read(lines, 3)));
      pg.execute("INSERT INTO red VALUES (5)");
      assertEquals(List.of("5#0"), shape(read(lines, 1)));
      first.toHandle().destroyForcibly(); // SIGKILL
      first.waitFor();
    }
    // a new process printed nothing before: no line says redelivered, also in the transaction of
    // which the store holds an acknowledged event
    Process second =
        new ProcessBuilder(command(stream(store, "red", "red", "--acks-from", "-")))
            .redirectError(dir.resolve("err2").toFile())
            .start();
    try (var lines =
            new java.io.BufferedReader(
                new java.io.InputStreamReader(second.getInputStream(), StandardCharsets.UTF_8));
        var acks = second.getOutputStream()) {
      assertEquals(List.of("2#1", "3#2", "4#0", "5#0"), shape(read(lines, 4)));
    }
    assertTrue(second.waitFor(60, TimeUnit.SECONDS), "the end of the acknowledgements stops it");
    assertEquals(0, second.exitValue(), Files.readString(dir.resolve("err2")));
  }

  @Test
  void slotCreationTimeoutNamesTheTransactionsItWaitsFor(@TempDir Path dir) throws Exception {
    pg.execute(
        "CREATE TABLE waits (id int PRIMARY KEY)", "CREATE PUBLICATION waits FOR TABLE waits");
    try (Connection open = pg.getConnection();
        Connection prepared = pg.getConnection()) {
      open.setAutoCommit(false);
      try (Statement st = open.createStatement()) {
        st.execute("INSERT INTO waits VALUES (1)"); // an xid, not committed
      }
      String pid =
          pg.queryString(
              "SELECT pid::text FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND query LIKE 'INSERT INTO waits%'");
      try (Statement st = prepared.createStatement()) {
        st.execute("BEGIN");
        st.execute("INSERT INTO waits VALUES (2)");
        st.execute("PREPARE TRANSACTION 'held_for_test'");
      }
      try {
        Run run =
            pgcdc(
                dir,
                stream(
                    dir.resolve("store"),
                    "waits",
                    "waits",
                    "--create-slot",
                    "--slot-create-timeout",
                    "0.5"));
        assertEquals(1, run.exitCode(), run.stderr());
        List<String> lines = run.stderr().lines().toList();
        assertEquals(1, lines.size(), run.stderr());
        String line = lines.get(0);
        assertTrue(
            line.startsWith(
                "pgcdc: error: creating replication slot \"waits\" waited 0.5 s for transactions open"
                    + " when it began, which PostgreSQL waits for before the slot can start: pid "
                    + pid
                    + " (xid "),
            line);
        assertTrue(
            line.contains(", idle in transaction, query 'INSERT INTO waits VALUES (1)')"), line);
        assertTrue(line.contains("prepared transaction 'held_for_test' (xid "), line);
        assertTrue(
            line.endsWith(
                ". End them (COMMIT or ROLLBACK, ROLLBACK PREPARED 'gid', or"
                    + " pg_terminate_backend(pid)), or allow a longer wait (slotCreationTimeout,"
                    + " pgcdc --slot-create-timeout)"),
            line);
        assertEquals(
            "0",
            pg.queryString(
                "SELECT count(*)::text FROM pg_replication_slots WHERE slot_name = 'waits'"));
      } finally {
        open.rollback();
        pg.execute("ROLLBACK PREPARED 'held_for_test'");
      }
    }
  }

  @Test
  void anAcknowledgementOfALinePrintedBeforeAReconnectCounts(@TempDir Path dir) throws Exception {
    pg.execute(
        "CREATE TABLE reack (id int PRIMARY KEY)",
        "CREATE PUBLICATION reack FOR TABLE reack",
        "SELECT pg_create_logical_replication_slot('reack', 'pgoutput')",
        "INSERT INTO reack VALUES (1)",
        "INSERT INTO reack VALUES (2)");
    Path store = dir.resolve("store");
    Path err = dir.resolve("err");
    Process p =
        new ProcessBuilder(command(stream(store, "reack", "reack", "--acks-from", "-")))
            .redirectError(err.toFile())
            .start();
    try (var lines =
            new java.io.BufferedReader(
                new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        var acks = p.getOutputStream()) {
      List<String> printed = read(lines, 2);
      assertEquals(List.of("1#0", "2#0"), shape(printed));
      pg.stop();
      try {
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> Files.readString(err).contains("reconnecting"));
        // the server is down: the source no longer knows the transaction of id 2
        acks.write((printed.get(1) + '\n').getBytes(StandardCharsets.UTF_8));
        acks.flush();
      } finally {
        pg.start();
      }
      // the acknowledgement settled id 2: the server sends it again, the source skips it
      assertEquals(List.of("1#0 redelivered"), shape(read(lines, 1)));
      String second = JSON.readTree(printed.get(1)).get("tx_end_lsn").asText();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> {
                Run show = pgcdc(dir, "checkpoint", "show", "--store", "file:" + store);
                return String.join("", show.stdout()).contains(second);
              });
      p.destroy(); // SIGTERM
      assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    }
    Process next =
        new ProcessBuilder(command(stream(store, "reack", "reack", "--acks-from", "-")))
            .redirectError(dir.resolve("err2").toFile())
            .start();
    try (var lines =
            new java.io.BufferedReader(
                new java.io.InputStreamReader(next.getInputStream(), StandardCharsets.UTF_8));
        var acks = next.getOutputStream()) {
      assertEquals(List.of("1#0"), shape(read(lines, 1)));
      pg.execute("INSERT INTO reack VALUES (3)");
      assertEquals(List.of("3#0"), shape(read(lines, 1)), "id 2 was settled, it does not come");
    }
    assertTrue(next.waitFor(60, TimeUnit.SECONDS));
  }
}

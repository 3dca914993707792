package io.datum.cdc.core.large;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.embedded.ChildJvm;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The initial snapshot ({@code INITIAL_ONLY}, at a new slot, two readers) of a table of wide rows
 * (about 600 bytes of text each; {@code -Ddatum.cdc.snapshot.large.md5s=N} makes column {@code a} N
 * times 32 characters, default 6) through a source in a JVM limited to {@code -Xmx256m} with a 64
 * MiB memory budget: it completes without OutOfMemoryError, every row arrives exactly once, and
 * nothing else arrives; the peak heap measured is printed (not asserted). Rows: {@code
 * -Ddatum.cdc.snapshot.large.rows=N} (default 400,000, a CI run; the benchmark runs 10,000,000).
 */
@EmbeddedPostgresTest
class LargeSnapshotTest {

  private static final int ROWS = Integer.getInteger("datum.cdc.snapshot.large.rows", 400_000);

  /** Copies of a 32-character md5 in column {@code a}: {@code -Ddatum.cdc.snapshot.large.md5s}. */
  private static final int MD5S = Integer.getInteger("datum.cdc.snapshot.large.md5s", 6);

  private final EmbeddedPostgresServer pg;

  LargeSnapshotTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Test
  void aTableOfWideRowsThroughA256MegabyteHeap(@TempDir Path dir) throws Exception {
    long loading = System.nanoTime();
    pg.execute(
        "CREATE TABLE wide (id int PRIMARY KEY, a text, b text, c text, n bigint,"
            + " at timestamptz, j jsonb)",
        "INSERT INTO wide SELECT g, repeat(md5(g::text), "
            + MD5S
            + "), repeat(md5((g + 1)::text), 4),"
            + " repeat('c', 100), g * 31, now(), jsonb_build_object('g', g, 'h', md5(g::text))"
            + " FROM generate_series(1, "
            + ROWS
            + ") g",
        "ANALYZE wide",
        "CREATE PUBLICATION wide FOR TABLE wide");
    long loaded = (System.nanoTime() - loading) / 1_000_000;
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-XX:+ExitOnOutOfMemoryError",
                "-Xlog:gc:file=" + dir.resolve("gc.log"),
                "-cp",
                ChildJvm.classPath(),
                LargeSnapshotConsumer.class.getName(),
                pg.jdbcUrl(),
                "wide",
                Integer.toString(ROWS),
                Long.toString(64L << 20),
                "2"));
    Path out = dir.resolve("consumer.out");
    Path err = dir.resolve("consumer.err");
    Process consumer =
        new ProcessBuilder(command)
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .start();
    assertTrue(consumer.waitFor(20, TimeUnit.MINUTES), "consumer did not finish");
    String report = Files.readString(out, StandardCharsets.UTF_8).trim();
    String errors = Files.readString(err, StandardCharsets.UTF_8);
    assertEquals(
        0,
        consumer.exitValue(),
        report + "\n" + errors.substring(Math.max(0, errors.length() - 4000)));
    assertTrue(!errors.contains("OutOfMemoryError"), errors);
    Map<String, Long> figures = new HashMap<>();
    for (String pair : report.substring(report.lastIndexOf('\n') + 1).split(" ")) {
      String[] kv = pair.split("=");
      figures.put(kv[0], Long.parseLong(kv[1]));
    }
    // the GC log: "GC(7) Pause Young (Normal) (G1 Evacuation Pause) 120M->31M(256M) 3.1ms"
    long before = 0;
    long after = 0;
    int collections = 0;
    Matcher m =
        Pattern.compile("(\\d+)M->(\\d+)M\\(")
            .matcher(Files.readString(dir.resolve("gc.log"), StandardCharsets.UTF_8));
    while (m.find()) {
      collections++;
      before = Math.max(before, Long.parseLong(m.group(1)));
      after = Math.max(after, Long.parseLong(m.group(2)));
    }
    System.out.printf(
        "snapshot of %d wide rows under -Xmx256m (table loaded in %d ms): %s; %d collections,"
            + " peak heap before a collection %d MiB, most live after one %d MiB%n",
        ROWS, loaded, report, collections, before, after);
    assertEquals(ROWS, figures.get("distinct"));
    assertEquals(0, figures.get("duplicates"));
    assertEquals(0, figures.get("other"));
    assertEquals(ROWS, figures.get("rowsRead"));
  }
}

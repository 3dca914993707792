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
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One transaction of many inserted rows through a source in a JVM whose heap is smaller than the
 * transaction, with a memory budget smaller still: every row arrives exactly once, in one
 * transaction of the right event count, the transaction spilled to disk, and the spill file is gone
 * afterwards. Rows: {@code -Ddatum.cdc.large.transaction.rows=N}; the heap ({@code -Xmx}) and the
 * budget scale with it, 256 MB and 64 MiB per 2,000,000 rows. The default, 500,000 rows through 64
 * MB and 16 MiB, is a CI run; {@code -Pfull-size} runs the full 2,000,000 through 256 MB and 64 MiB
 * (docs/testing.md).
 */
@EmbeddedPostgresTest
class LargeTransactionTest {

  private static final int ROWS = Integer.getInteger("datum.cdc.large.transaction.rows", 500_000);

  /** The child JVM's heap: 256 MB per 2,000,000 rows, at least 64 MB. */
  private static final long HEAP_MB = Math.max(64, 256L * ROWS / 2_000_000);

  /** The source's memory budget: 64 MiB per 2,000,000 rows. */
  private static final long BUDGET = (64L << 20) * ROWS / 2_000_000;

  private final EmbeddedPostgresServer pg;

  LargeTransactionTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Test
  void aTransactionLargerThanTheHeapSpillsAndArrivesExactlyOnce(@TempDir Path spill)
      throws Exception {
    pg.execute(
        "CREATE TABLE big (id int PRIMARY KEY, note text)",
        "CREATE PUBLICATION big FOR TABLE big",
        "SELECT pg_create_logical_replication_slot('big', 'pgoutput')",
        "INSERT INTO big SELECT g, 'row ' || g FROM generate_series(1, " + ROWS + ") g");
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx" + HEAP_MB + "m",
                "-cp",
                ChildJvm.classPath(),
                LargeTransactionConsumer.class.getName(),
                pg.jdbcUrl(),
                "big",
                Integer.toString(ROWS),
                Long.toString(BUDGET),
                spill.toString()));
    Path out = spill.resolveSibling(spill.getFileName() + ".out");
    Process consumer =
        new ProcessBuilder(command)
            .redirectOutput(out.toFile())
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    assertTrue(consumer.waitFor(20, TimeUnit.MINUTES), "consumer did not finish");
    String report = Files.readString(out, StandardCharsets.UTF_8).trim();
    assertEquals(0, consumer.exitValue(), report);
    Map<String, Long> figures = new HashMap<>();
    for (String pair : report.substring(report.lastIndexOf('\n') + 1).split(" ")) {
      String[] kv = pair.split("=");
      figures.put(kv[0], Long.parseLong(kv[1]));
    }
    System.out.println(
        ROWS + "-row transaction under -Xmx" + HEAP_MB + "m, budget " + BUDGET + ": " + report);
    assertEquals(ROWS, figures.get("distinct"));
    assertEquals(0, figures.get("duplicates"));
    assertEquals(ROWS, figures.get("eventCount"));
    assertEquals(
        1, figures.get("spilled"), "the transaction exceeds the budget of " + BUDGET + " bytes");
    try (Stream<Path> files = Files.list(spill)) {
      assertEquals(List.of(), files.toList(), "spill file deleted");
    }
  }
}

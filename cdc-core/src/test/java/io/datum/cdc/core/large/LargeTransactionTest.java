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
 * One transaction of 2,000,000 inserted rows through a source in a JVM limited to {@code -Xmx256m}:
 * every row arrives exactly once, in one transaction of the right event count, the transaction
 * spilled to disk, and the spill file is gone afterwards.
 */
@EmbeddedPostgresTest
class LargeTransactionTest {

  private static final int ROWS = 2_000_000;
  private final EmbeddedPostgresServer pg;

  LargeTransactionTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Test
  void twoMillionRowsInOneTransactionThroughA256MegabyteHeap(@TempDir Path spill) throws Exception {
    pg.execute(
        "CREATE TABLE big (id int PRIMARY KEY, note text)",
        "CREATE PUBLICATION big FOR TABLE big",
        "SELECT pg_create_logical_replication_slot('big', 'pgoutput')",
        "INSERT INTO big SELECT g, 'row ' || g FROM generate_series(1, " + ROWS + ") g");
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-cp",
                ChildJvm.classPath(),
                LargeTransactionConsumer.class.getName(),
                pg.jdbcUrl(),
                "big",
                Integer.toString(ROWS),
                Long.toString(64L << 20),
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
    System.out.println("2M-row transaction under -Xmx256m: " + report);
    assertEquals(ROWS, figures.get("distinct"));
    assertEquals(0, figures.get("duplicates"));
    assertEquals(ROWS, figures.get("eventCount"));
    assertEquals(1, figures.get("spilled"), "the transaction exceeds the 64 MiB budget");
    try (Stream<Path> files = Files.list(spill)) {
      assertEquals(List.of(), files.toList(), "spill file deleted");
    }
  }
}

package io.datum.cdc.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.datum.cdc.PgLsn;
import io.datum.cdc.embedded.ChildJvm;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code pgcdc demo} as a child process: exit 0, JSON lines on stdout, a true summary. */
@Tag("postgres")
class DemoCommandTest {

  @Test
  void demoStreamsKillsResumesAndSummarises(@TempDir Path dir) throws Exception {
    Path out = dir.resolve("out");
    Path err = dir.resolve("err");
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                ChildJvm.classPath(),
                Pgcdc.class.getName(),
                "demo",
                "--idle-exit",
                "1")
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .start();
    assertTrue(p.waitFor(180, TimeUnit.SECONDS), "demo did not finish within 180 s");
    String stderr = Files.readString(err, StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), stderr);

    ObjectMapper json = new ObjectMapper();
    List<JsonNode> events = new ArrayList<>();
    for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
      events.add(json.readTree(line));
    }
    Matcher killed =
        Pattern.compile("kill -9 of the consumer .*; stored watermark (\\S+)").matcher(stderr);
    assertTrue(killed.find(), stderr);
    PgLsn storedAtKill = killed.group(1).equals("none") ? PgLsn.ZERO : PgLsn.parse(killed.group(1));
    Set<String> transactions = new HashSet<>();
    Set<String> seen = new HashSet<>();
    int again = 0;
    for (JsonNode e : events) {
      transactions.add(e.get("tx_end_lsn").asText());
      if (!seen.add(e.get("tx_end_lsn").asText() + "#" + e.get("event_index").asInt())) {
        again++;
        assertTrue(
            PgLsn.parse(e.get("tx_end_lsn").asText()).isAfter(storedAtKill),
            "nothing at or before the watermark stored at the kill comes again: " + e);
      }
    }
    // 3 + 3 + 1 + 1 + 1 + 200 before the kill, 1 + 1 while down, 1 + 2 + 1 after the restart
    assertEquals(215, seen.size());
    Matcher atKill =
        Pattern.compile(
                "after it printed (\\d+) events, .* held the acknowledgements of (\\d+) of them,"
                    + " (\\d+) were printed but not yet stored")
            .matcher(stderr);
    assertTrue(atKill.find(), stderr);
    int stored = Integer.parseInt(atKill.group(2));
    int notStored = Integer.parseInt(atKill.group(3));
    assertEquals(Integer.parseInt(atKill.group(1)), stored + notStored);
    assertEquals(
        "after the resume "
            + notStored
            + " of the "
            + notStored
            + " events printed but not stored at the kill came again, and 0 of the "
            + stored
            + " stored ones",
        stderr
            .lines()
            .filter(l -> l.contains("after the resume"))
            .findFirst()
            .orElseThrow()
            .replaceFirst("^pgcdc demo: ", ""));
    assertEquals(notStored, again, "what came again is exactly what was not stored");
    Matcher summary =
        Pattern.compile(
                "pgcdc demo: (\\d+) events \\((\\d+) distinct\\) in (\\d+) transactions; (\\d+) delivered again"
                    + ".*final watermark (\\S+), slot confirmed_flush_lsn (\\S+)")
            .matcher(stderr);
    assertTrue(summary.find(), stderr);
    assertEquals(events.size(), Integer.parseInt(summary.group(1)));
    assertEquals(seen.size(), Integer.parseInt(summary.group(2)));
    assertEquals(transactions.size(), Integer.parseInt(summary.group(3)));
    assertEquals(again, Integer.parseInt(summary.group(4)));
    JsonNode last = events.get(events.size() - 1);
    assertEquals(last.get("tx_end_lsn").asText(), summary.group(5));
    assertEquals(summary.group(5), summary.group(6));
    assertEquals("Edsger", last.get("after").get("name").asText());
    assertEquals(1, events.stream().filter(e -> e.get("op").asText().equals("truncate")).count());
  }
}

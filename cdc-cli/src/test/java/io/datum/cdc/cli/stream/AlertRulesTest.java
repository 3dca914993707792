package io.datum.cdc.cli.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The shipped alert rules ({@code docs/prometheus/datum-cdc-alerts.yml}) on Prometheus' own rule
 * engine: {@code promtool check rules} accepts them and {@code promtool test rules} runs their unit
 * tests (each alert fires when it should and not before; none but the lag alert during a long
 * initial snapshot). Needs {@code promtool} on the PATH (Debian: {@code apt-get install
 * prometheus}); skipped, saying so, without it. {@code docs/prometheus/run-demo} loads the same
 * rules into a running Prometheus scraping pgcdc.
 */
class AlertRulesTest {

  private static final Path RULES = Path.of("..", "docs", "prometheus");

  private static Path promtool() {
    String configured = System.getenv("PROMTOOL");
    if (configured != null && !configured.isBlank()) {
      return Path.of(configured);
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path p = Path.of(dir, "promtool");
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }

  private static String run(Path promtool, String... args) throws Exception {
    List<String> command = new java.util.ArrayList<>();
    command.add(promtool.toString());
    command.addAll(List.of(args));
    Process p =
        new ProcessBuilder(command).directory(RULES.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("promtool " + String.join(" ", args) + " did not finish");
    }
    assertEquals(0, p.exitValue(), "promtool " + String.join(" ", args) + ":\n" + out);
    return out;
  }

  @Test
  void promtoolAcceptsTheRulesAndTheirUnitTestsPass() throws Exception {
    Path promtool = promtool();
    assumeTrue(
        promtool != null,
        "promtool is not on the PATH (Debian: apt-get install prometheus; or PROMTOOL=...)");
    run(promtool, "check", "rules", "datum-cdc-alerts.yml");
    run(promtool, "test", "rules", "datum-cdc-alerts.test.yml");
  }
}

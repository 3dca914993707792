package io.datum.cdc.cli.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.SourceOption;
import io.datum.cdc.core.config.SourceOptions;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The table of source options in docs/configuration.md is generated from {@link SourceOptions} (and
 * the flags of {@link StreamFlags}); this test fails when the file differs and says how to
 * regenerate it. It lives with the CLI because the table names each option's {@code pgcdc stream}
 * flag.
 */
class ConfigurationTableTest {

  static final Path DOC = Path.of("..", "docs", "configuration.md");
  static final String BEGIN =
      "<!-- source-options:begin (generated from SourceOptions by ConfigurationTableTest;"
          + " do not edit) -->";
  static final String END = "<!-- source-options:end -->";
  static final String REGENERATE =
      "./mvnw -q test -pl cdc-cli -am -Dtest=ConfigurationTableTest"
          + " -Dsurefire.failIfNoSpecifiedTests=false -Ddatum.cdc.regenerate=true";

  /** The builder's setter of the options that have no setter of their own camel-case name. */
  private static final Map<String, String> SETTERS =
      Map.of(
          "publication-tables", "createPublication(true, tables...)",
          "reconnect-attempts", "reconnect(attempts, initial, max)",
          "reconnect-initial-backoff", "reconnect(attempts, initial, max)",
          "reconnect-max-backoff", "reconnect(attempts, initial, max)",
          "snapshot-modes", "snapshot(modes...)",
          "handler-threads", "handlerThreads(threads[, ordering])",
          "handler-ordering", "handlerThreads(threads, ordering)");

  static String table() {
    CommandSpec spec = StreamFlags.derive(new CommandLine(new StreamCommand()).getCommandSpec());
    StringBuilder b = new StringBuilder();
    b.append(
        "| option | builder | `pgcdc stream` | type | default | PostgreSQL | what it does |\n");
    b.append("|---|---|---|---|---|---|---|\n");
    for (SourceOption<?> o : SourceOptions.all()) {
      b.append("| `").append(o.name()).append("` | `").append(setter(o)).append("` | ");
      b.append(flag(spec, o)).append(" | ");
      b.append(type(o)).append(" | ").append(defaultText(o)).append(" | ");
      b.append(o.minimumPostgres() == 0 ? "" : o.minimumPostgres() + "+").append(" | ");
      b.append(o.description().replace("|", "\\|")).append(" |\n");
    }
    return b.toString();
  }

  private static String flag(CommandSpec spec, SourceOption<?> o) {
    String flag = StreamFlags.all().get(o);
    if (flag == null) {
      return "none";
    }
    OptionSpec option = spec.findOption(flag);
    return "`"
        + (option.arity().max() == 0 ? flag : flag + " " + option.paramLabel()).replace("|", "\\|")
        + "`"
        + (StreamFlags.SECONDS.contains(flag) ? " (seconds)" : "");
  }

  private static String setter(SourceOption<?> o) {
    String special = SETTERS.get(o.name());
    if (special != null) {
      return special;
    }
    String camel = SourceOption.camelCase(o.name());
    // the overload with the fewest parameters: getMethods() has no order
    Method setter = null;
    for (Method m : PgCdcSource.Builder.class.getMethods()) {
      if (m.getName().equals(camel)
          && (setter == null || m.getParameterCount() < setter.getParameterCount())) {
        setter = m;
      }
    }
    if (setter != null) {
      return camel + "(" + (setter.getParameterCount() == 1 ? "…" : "…, …") + ")";
    }
    return "option(\"" + o.name() + "\", …)"; // no typed setter (yet): by name
  }

  private static String type(SourceOption<?> o) {
    String t =
        switch (o.kind()) {
          case ENUM, ENUM_SET ->
              String.join(" \\| ", o.constantNames())
                  + (o.kind() == SourceOption.Kind.ENUM_SET ? " (comma-separated)" : "");
          case SECRET -> "string (secret)";
          default -> o.kind().name().toLowerCase(java.util.Locale.ROOT);
        };
    return o.unit().isEmpty() ? t : t + ", " + o.unit();
  }

  private static String defaultText(SourceOption<?> o) {
    if (o.isRequired()) {
      return "required";
    }
    if (o == SourceOptions.SPILL_DIRECTORY) {
      return "`java.io.tmpdir`"; // the machine's, not this build's
    }
    if (o == SourceOptions.RECONNECT_ATTEMPTS) {
      return "unlimited";
    }
    String d = o.format(o.defaultValue());
    return d.isEmpty() ? "not set" : "`" + d + "`";
  }

  @Test
  void theDocumentedTableIsTheDeclarations() throws IOException {
    String doc = Files.readString(DOC, StandardCharsets.UTF_8);
    int begin = doc.indexOf(BEGIN);
    int end = doc.indexOf(END);
    if (begin < 0 || end < begin) {
      throw new AssertionError(DOC + " lacks the markers " + BEGIN + " ... " + END);
    }
    String expected =
        doc.substring(0, begin + BEGIN.length()) + "\n" + table() + doc.substring(end);
    if (Boolean.getBoolean("datum.cdc.regenerate")) {
      Files.writeString(DOC, expected, StandardCharsets.UTF_8);
      doc = expected;
    }
    assertEquals(
        expected,
        doc,
        "docs/configuration.md's table of source options differs from SourceOptions;"
            + " regenerate it: "
            + REGENERATE);
  }
}

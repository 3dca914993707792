package io.datum.cdc.cli.stream;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.SourceOption;
import io.datum.cdc.core.config.SourceOptions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParseResult;

/**
 * The library's source options as {@code pgcdc stream} offers them: the flag of each {@link
 * SourceOption}, and the options it does not offer with the reason. The values of the flags given
 * (or defaulted by picocli) are parsed and checked by the options' declarations, before anything is
 * opened, and handed to the builder by name: the command has no setter call per option.
 */
final class StreamFlags {

  private StreamFlags() {}

  /** Every source option {@code pgcdc stream} offers, and its flag. */
  static final Map<SourceOption<?>, String> FLAGS = flags();

  /** Flags whose value is a decimal number of seconds (the option is a duration). */
  static final Set<String> SECONDS = Set.of("--wait-for-slot", "--slot-create-timeout");

  /** The source options {@code pgcdc stream} does not offer, and why. */
  static final Map<SourceOption<?>, String> NOT_OFFERED =
      Map.ofEntries(
          Map.entry(
              SourceOptions.HANDLER_THREADS,
              "pgcdc writes one line per event in stream order; one thread does that at the"
                  + " hand-off's pace"),
          Map.entry(
              SourceOptions.HANDLER_ORDERING,
              "pgcdc writes one line per event in stream order; one thread does that at the"
                  + " hand-off's pace"),
          Map.entry(
              SourceOptions.PASSWORD,
              "--password-env names the environment variable holding it: a password among the"
                  + " arguments would show in ps"),
          Map.entry(
              SourceOptions.HANDOFF_CAPACITY,
              "the library's default suits a handler that writes one line per event"),
          Map.entry(
              SourceOptions.STATUS_INTERVAL,
              "the library's default (1 s) is what a walsender's timeout needs"),
          Map.entry(
              SourceOptions.STOP_TIMEOUT,
              "pgcdc stops on a signal and waits for the line being written"),
          Map.entry(
              SourceOptions.RECONNECT_INITIAL_BACKOFF,
              "--reconnect sets the attempts; the backoff is the library's (0.2 s doubling to 30 s)"),
          Map.entry(
              SourceOptions.RECONNECT_MAX_BACKOFF,
              "--reconnect sets the attempts; the backoff is the library's (0.2 s doubling to 30 s)"));

  private static Map<SourceOption<?>, String> flags() {
    Map<SourceOption<?>, String> m = new LinkedHashMap<>();
    m.put(SourceOptions.JDBC_URL, "--url");
    m.put(SourceOptions.USER, "--user");
    m.put(SourceOptions.PRIMARY_JDBC_URL, "--primary-url");
    m.put(SourceOptions.SLOT, "--slot");
    m.put(SourceOptions.PUBLICATION, "--publication");
    m.put(SourceOptions.CREATE_SLOT, "--create-slot");
    m.put(SourceOptions.CREATE_PUBLICATION, "--create-publication");
    m.put(SourceOptions.PUBLICATION_TABLES, "--tables");
    m.put(SourceOptions.TRUST_SLOT_POSITION, "--trust-slot-position");
    m.put(SourceOptions.ALLOW_CLUSTER_CHANGE, "--allow-cluster-change");
    m.put(SourceOptions.ALLOW_PUBLICATION_CHANGE, "--allow-publication-change");
    m.put(SourceOptions.FAILOVER_SLOT, "--failover-slot");
    m.put(SourceOptions.RECONNECT_ATTEMPTS, "--reconnect");
    m.put(SourceOptions.ACKNOWLEDGEMENT_DURABILITY, "--durable-acks");
    m.put(SourceOptions.ON_DECODE_ERROR, "--on-decode-error");
    m.put(SourceOptions.SNAPSHOT_MODES, "--snapshot");
    m.put(SourceOptions.SNAPSHOT_PARALLELISM, "--snapshot-parallelism");
    m.put(SourceOptions.SNAPSHOT_CHUNK_ROWS, "--snapshot-chunk-rows");
    m.put(SourceOptions.MESSAGES, "--messages");
    m.put(SourceOptions.PROTOCOL_VERSION, "--proto-version");
    m.put(SourceOptions.STREAMING, "--streaming");
    m.put(SourceOptions.TWO_PHASE, "--two-phase");
    m.put(SourceOptions.BINARY, "--binary");
    m.put(SourceOptions.ORIGIN, "--origin");
    m.put(SourceOptions.MEMORY_BUDGET, "--memory-budget");
    m.put(SourceOptions.SPILL_DIRECTORY, "--spill-dir");
    m.put(SourceOptions.WAIT_FOR_SLOT, "--wait-for-slot");
    m.put(SourceOptions.SLOT_CREATION_TIMEOUT, "--slot-create-timeout");
    return m;
  }

  /**
   * Adds to the {@code stream} command a flag for every option neither in {@link #FLAGS} nor in
   * {@link #NOT_OFFERED}: {@code --<name> VALUE}, the text {@link SourceOption#parse} reads, its
   * help the option's description and default. A new option reaches pgcdc without an edit here.
   *
   * @param spec the {@code stream} command's spec, before parsing
   * @return the spec
   */
  static CommandSpec derive(CommandSpec spec) {
    for (SourceOption<?> o : SourceOptions.all()) {
      if (!FLAGS.containsKey(o) && !NOT_OFFERED.containsKey(o)) {
        String def = o.format(o.defaultValue());
        spec.addOption(
            OptionSpec.builder("--" + o.name())
                .type(String.class)
                .paramLabel(o.unit().isEmpty() ? "VALUE" : o.unit().toUpperCase(Locale.ROOT))
                .description(o.description() + (def.isEmpty() ? "" : " Default " + def + "."))
                .build());
      }
    }
    return spec;
  }

  /** Returns the flag of every option {@code pgcdc stream} offers, listed or derived. */
  static Map<SourceOption<?>, String> all() {
    Map<SourceOption<?>, String> all = new LinkedHashMap<>(FLAGS);
    for (SourceOption<?> o : SourceOptions.all()) {
      if (!FLAGS.containsKey(o) && !NOT_OFFERED.containsKey(o)) {
        all.put(o, "--" + o.name());
      }
    }
    return all;
  }

  /**
   * Returns the source options given on the command line (or defaulted by picocli), parsed and
   * checked by their declarations.
   *
   * @param spec the parsed {@code stream} command
   * @return each option given and its value; the options not given keep the library's defaults
   * @throws CdcConfigurationException naming the flag if a value does not parse or is out of range
   */
  static Map<SourceOption<?>, Object> values(CommandSpec spec) {
    ParseResult given = spec.commandLine().getParseResult();
    Map<SourceOption<?>, Object> values = new LinkedHashMap<>();
    for (Map.Entry<SourceOption<?>, String> e : all().entrySet()) {
      String flag = e.getValue();
      OptionSpec option = spec.findOption(flag);
      if (option == null) {
        throw new IllegalStateException(
            "pgcdc stream has no flag " + flag + ": call StreamCommand.deriveFlags before parsing");
      }
      if (given.hasMatchedOption(flag) || option.defaultValue() != null) {
        Object value = option.getValue();
        if (value != null) {
          values.put(e.getKey(), parse(flag, e.getKey(), text(flag, value)));
        }
      }
    }
    return values;
  }

  /** Returns the text the option's declaration parses of a flag's value. */
  static String text(String flag, Object value) {
    if (SECONDS.contains(flag)) {
      return secondsText(flag, String.valueOf(value).strip());
    }
    if (flag.equals("--reconnect") && "unlimited".equals(value)) {
      return Integer.toString(Integer.MAX_VALUE);
    }
    return value instanceof List<?> list
        ? String.join(",", list.stream().map(String::valueOf).toList())
        : String.valueOf(value);
  }

  /**
   * Parses a flag's value with its option's declaration.
   *
   * @return the value
   * @throws CdcConfigurationException saying what is wrong, the flag in place of the option's name
   */
  static <T> T parse(String flag, SourceOption<T> option, String text) {
    try {
      return option.parse(text);
    } catch (CdcConfigurationException e) {
      String prefix = "option " + option.name();
      String m = e.getMessage();
      String rest = m.startsWith(prefix + ": ") ? m.substring(prefix.length() + 2) : null;
      if (rest == null && m.startsWith(prefix)) {
        rest = m.substring(prefix.length() + 1);
      }
      throw new CdcConfigurationException(rest == null ? flag + ": " + m : flag + " " + rest, e);
    }
  }

  /** Hands the options to the builder. */
  static void apply(Map<SourceOption<?>, Object> values, PgCdcSource.Builder builder) {
    values.forEach((option, value) -> set(builder, option, value));
  }

  @SuppressWarnings("unchecked")
  private static <T> void set(PgCdcSource.Builder builder, SourceOption<T> option, Object value) {
    builder.option(option, (T) value);
  }

  /** The value a flag gives when absent: its picocli default, parsed; null if it has none. */
  static Object defaultOf(CommandSpec spec, SourceOption<?> option) {
    String flag = all().get(option);
    String text = spec.findOption(flag).defaultValue();
    return text == null ? null : parse(flag, option, text(flag, seconds(flag, text)));
  }

  private static Object seconds(String flag, String text) {
    return text;
  }

  /**
   * A seconds flag's value as the duration text its declaration parses: a plain number is seconds
   * ({@code 5}, {@code 0.5}), anything else a duration as the declarations read it ({@code 500ms},
   * {@code 30s}, {@code 5m}, {@code 1h}, {@code PT30S}).
   */
  private static String secondsText(String flag, String text) {
    String lower = text.toLowerCase(java.util.Locale.ROOT);
    if (lower.matches("[+-]?(\\d+\\.?\\d*|\\.\\d+)(e[+-]?\\d+)?|[+-]?(nan|infinity)")) {
      double seconds;
      try {
        seconds = Double.parseDouble(text);
      } catch (NumberFormatException e) {
        throw new CdcConfigurationException(
            flag
                + " must be a number of seconds (5, 0.5) or a duration (500ms, 30s, 5m, 1h), was "
                + text);
      }
      if (!(seconds >= 0) || Double.isInfinite(seconds)) {
        throw new CdcConfigurationException(
            flag + " must be a finite number of seconds, 0 or more, was " + text);
      }
      if (seconds > SourceOption.MAX_DURATION_SECONDS) {
        throw new CdcConfigurationException(
            flag
                + " must be at most "
                + SourceOption.MAX_DURATION_SECONDS
                + " seconds, was "
                + text);
      }
      return Math.round(seconds * 1000) + "ms";
    }
    return text;
  }
}

package io.datum.cdc.core.config;

import io.datum.cdc.CdcConfigurationException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * One option of a {@link io.datum.cdc.core.PgCdcSource}, declared once in {@link SourceOptions}:
 * its name, type, default, unit, description, validation and the PostgreSQL version it needs. The
 * builder validates with it, the source reads its value from a {@link SourceConfiguration}, and
 * every other face of the option (the Kafka Connect definition, the Spring Boot properties and
 * their metadata, the {@code pgcdc stream} flags, the table in docs/configuration.md) is derived
 * from it or checked against it by a test.
 *
 * <p>Values given as text (a property, a flag, a connector setting) are parsed by {@link
 * #parse(String)}: booleans {@code true}/{@code false}; decimal integers; durations such as {@code
 * 500ms}, {@code 30s}, {@code 5m}, {@code 1h} or ISO-8601 {@code PT30S}; sizes in bytes, or a
 * number followed by {@code k}, {@code m} or {@code g} (powers of 1024); enum constants by their
 * lower-case names ({@code initial-only} or {@code initial_only}); lists and enum sets
 * comma-separated; paths as the platform reads them.
 *
 * @param <T> the Java type of the option's value
 */
public final class SourceOption<T> {

  /** How an option's value is typed, parsed and shown. */
  public enum Kind {
    /** A {@link String}. */
    STRING,
    /** A {@link String} never shown: a password. */
    SECRET,
    /** A {@link Boolean}. */
    BOOLEAN,
    /** An {@link Integer}. */
    INT,
    /** A {@link Long}. */
    LONG,
    /** A {@link Long} number of bytes, given as bytes or with {@code k}, {@code m}, {@code g}. */
    SIZE,
    /** A {@link Duration}. */
    DURATION,
    /** A {@link Path}. */
    PATH,
    /** A constant of an enum. */
    ENUM,
    /** A non-empty {@link Set} of constants of an enum. */
    ENUM_SET,
    /** A {@link List} of strings. */
    LIST
  }

  private final String name;
  private final Kind kind;
  private final Class<? extends Enum<?>> enumType;
  private final T defaultValue;
  private final boolean required;
  private final String unit;
  private final String description;
  private final Function<T, String> check;
  private final int minimumPostgres;

  private SourceOption(
      String name,
      Kind kind,
      Class<? extends Enum<?>> enumType,
      T defaultValue,
      boolean required,
      String unit,
      String description,
      Function<T, String> check,
      int minimumPostgres) {
    this.name = name;
    this.kind = kind;
    this.enumType = enumType;
    this.defaultValue = defaultValue;
    this.required = required;
    this.unit = unit;
    this.description = description;
    this.check = check;
    this.minimumPostgres = minimumPostgres;
  }

  /**
   * Starts the declaration of an option.
   *
   * @param name the option's name in kebab-case ({@code wait-for-slot}), not null
   * @param kind how its value is typed, not {@link Kind#ENUM} or {@link Kind#ENUM_SET}
   * @param description what it does, in plain text (every face of the option shows it), not null
   * @param <T> the value's type, matching {@code kind}
   * @return an option without default, unit, check or version requirement
   */
  static <T> SourceOption<T> of(String name, Kind kind, String description) {
    return new SourceOption<>(name, kind, null, null, false, "", description, v -> null, 0);
  }

  /**
   * Starts the declaration of an enum option ({@link Kind#ENUM}) or, with {@code set}, of an option
   * holding a set of the enum's constants ({@link Kind#ENUM_SET}).
   */
  static <T> SourceOption<T> ofEnum(
      String name, Class<? extends Enum<?>> type, boolean set, String description) {
    return new SourceOption<>(
        name, set ? Kind.ENUM_SET : Kind.ENUM, type, null, false, "", description, v -> null, 0);
  }

  /** Returns a copy with this default value (null: none). */
  SourceOption<T> defaultValue(T value) {
    return new SourceOption<>(
        name, kind, enumType, value, required, unit, description, check, minimumPostgres);
  }

  /** Returns a copy that {@link io.datum.cdc.core.PgCdcSource.Builder#build()} requires. */
  SourceOption<T> required() {
    return new SourceOption<>(
        name, kind, enumType, defaultValue, true, unit, description, check, minimumPostgres);
  }

  /** Returns a copy measured in this unit ({@code bytes}, {@code events}, ...). */
  SourceOption<T> unit(String value) {
    return new SourceOption<>(
        name, kind, enumType, defaultValue, required, value, description, check, minimumPostgres);
  }

  /**
   * Returns a copy with one more check.
   *
   * @param problem returns null for a good value, else what is wrong with it and the remedy
   */
  SourceOption<T> check(Function<T, String> problem) {
    Function<T, String> first = check;
    Function<T, String> both =
        v -> {
          String p = first.apply(v);
          return p != null ? p : problem.apply(v);
        };
    return new SourceOption<>(
        name, kind, enumType, defaultValue, required, unit, description, both, minimumPostgres);
  }

  /** Returns a copy needing this PostgreSQL major version (14 ...) for a value but the default. */
  SourceOption<T> since(int postgresMajor) {
    return new SourceOption<>(
        name, kind, enumType, defaultValue, required, unit, description, check, postgresMajor);
  }

  /** Returns a copy of a numeric option whose value must be in [min, max]. */
  SourceOption<T> range(long min, long max) {
    return check(
        v ->
            ((Number) v).longValue() < min || ((Number) v).longValue() > max
                ? "must be "
                    + (max == Integer.MAX_VALUE || max == Long.MAX_VALUE
                        ? "at least " + min
                        : min + " to " + max)
                    + ", was "
                    + v
                : null);
  }

  /** Returns the name, in kebab-case ({@code wait-for-slot}); never null. */
  public String name() {
    return name;
  }

  /** Returns how the value is typed; never null. */
  public Kind kind() {
    return kind;
  }

  /**
   * Returns the enum whose constants an {@link Kind#ENUM} or {@link Kind#ENUM_SET} option takes.
   *
   * @return the enum class, or null for other kinds
   */
  public Class<? extends Enum<?>> enumType() {
    return enumType;
  }

  /**
   * Returns the value a source uses when the option is not given.
   *
   * @return the default, or null when there is none (a {@link #required()} option, or one whose
   *     absence means "not sent", such as {@code origin})
   */
  public T defaultValue() {
    return defaultValue;
  }

  /** Returns whether a source cannot be built without the option. */
  public boolean isRequired() {
    return required;
  }

  /** Returns the unit of a number ({@code bytes}, {@code events}, ...), or "" if none. */
  public String unit() {
    return unit;
  }

  /** Returns what the option does, in plain text; never null. */
  public String description() {
    return description;
  }

  /**
   * Returns the oldest PostgreSQL major version on which a value other than the default works
   * ({@link io.datum.cdc.core.PgCdcSource#start} fails on an older server naming the option).
   *
   * @return the major version (14, 15, 16, 17), or 0 when every supported version takes it
   */
  public int minimumPostgres() {
    return minimumPostgres;
  }

  /** The longest duration an option takes: what {@link Duration#toNanos()} can hold. */
  public static final long MAX_DURATION_SECONDS = Long.MAX_VALUE / 1_000_000_000L;

  /**
   * Checks a value.
   *
   * @param value the value, null only for an option without default that is not required
   * @return the value
   * @throws CdcConfigurationException naming the option, what is wrong and the remedy
   */
  public T validate(T value) {
    if (value == null) {
      if (defaultValue != null || required) {
        throw new CdcConfigurationException("option " + name + " must not be null");
      }
      return null;
    }
    if (value instanceof Duration d && (d.getSeconds() > MAX_DURATION_SECONDS)) {
      // the source waits with System.nanoTime arithmetic: Duration.toNanos must not overflow
      throw new CdcConfigurationException(
          "option "
              + name
              + ": at most "
              + MAX_DURATION_SECONDS
              + " s (about 292 years), was "
              + d);
    }
    String problem = check.apply(value);
    if (problem != null) {
      throw new CdcConfigurationException("option " + name + ": " + problem);
    }
    return value;
  }

  /**
   * Parses a value given as text (see the class comment for the formats) and checks it.
   *
   * @param text the text, not null
   * @return the value
   * @throws CdcConfigurationException naming the option and the expected form
   */
  @SuppressWarnings("unchecked")
  public T parse(String text) {
    Objects.requireNonNull(text, "text");
    String t = text.strip();
    Object value =
        switch (kind) {
          case STRING, SECRET -> text;
          case BOOLEAN -> parseBoolean(t);
          case INT -> parseLong(t, Integer.MIN_VALUE, Integer.MAX_VALUE, "an integer").intValue();
          case LONG -> parseLong(t, Long.MIN_VALUE, Long.MAX_VALUE, "an integer");
          case SIZE -> parseSize(t);
          case DURATION -> parseDuration(t);
          case PATH -> parsePath(t);
          case ENUM -> parseEnum(t);
          case ENUM_SET -> parseEnumSet(t);
          case LIST -> parseList(t);
        };
    return validate((T) value);
  }

  /**
   * Shows a value as {@link #parse(String)} reads it: {@code 64m}, {@code 30s}, {@code
   * initial-only}, {@code a,b}.
   *
   * @param value the value, or null
   * @return the text; "" for null
   */
  public String format(Object value) {
    if (value == null) {
      return "";
    }
    return switch (kind) {
      case SECRET -> "***";
      case SIZE -> formatSize((Long) value);
      case DURATION -> formatDuration((Duration) value);
      case ENUM -> constantName((Enum<?>) value);
      case ENUM_SET, LIST -> {
        List<String> names = new ArrayList<>();
        for (Object o : (Collection<?>) value) {
          names.add(o instanceof Enum<?> e ? constantName(e) : o.toString());
        }
        yield String.join(",", names);
      }
      default -> value.toString();
    };
  }

  /**
   * Returns a dashed name in camel case, as a Java setter or bean property names it: {@code
   * wait-for-slot} is {@code waitForSlot}, {@code reconnect.max-backoff} is {@code
   * reconnect.maxBackoff} (other characters are kept).
   *
   * @param dashed the name, not null
   * @return the camel-case name
   */
  public static String camelCase(String dashed) {
    StringBuilder b = new StringBuilder(dashed.length());
    boolean up = false;
    for (char c : dashed.toCharArray()) {
      if (c == '-') {
        up = true;
      } else {
        b.append(up ? Character.toUpperCase(c) : c);
        up = false;
      }
    }
    return b.toString();
  }

  /** Returns an enum constant's lower-case name with dashes: {@code initial-only}. */
  public static String constantName(Enum<?> constant) {
    return constant.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** Returns the names {@link #parse} takes for an enum option's constants; empty for others. */
  public List<String> constantNames() {
    List<String> names = new ArrayList<>();
    if (enumType != null) {
      for (Enum<?> e : enumType.getEnumConstants()) {
        names.add(constantName(e));
      }
    }
    return names;
  }

  private CdcConfigurationException bad(String text, String expected) {
    return new CdcConfigurationException(
        "option " + name + " must be " + expected + ", was \"" + text + '"');
  }

  private Boolean parseBoolean(String t) {
    if (t.equalsIgnoreCase("true") || t.equalsIgnoreCase("false")) {
      return Boolean.valueOf(t);
    }
    throw bad(t, "true or false");
  }

  private Long parseLong(String t, long min, long max, String expected) {
    try {
      long v = Long.parseLong(t);
      if (v >= min && v <= max) {
        return v;
      }
    } catch (NumberFormatException e) {
      // reported below, naming the option
    }
    throw bad(t, expected);
  }

  private Long parseSize(String text) {
    String t = text.toLowerCase(Locale.ROOT);
    int shift =
        t.isEmpty()
            ? 0
            : switch (t.charAt(t.length() - 1)) {
              case 'k' -> 10;
              case 'm' -> 20;
              case 'g' -> 30;
              default -> 0;
            };
    String digits = shift == 0 ? t : t.substring(0, t.length() - 1);
    String expected = "a positive number of bytes, optionally with k, m or g (1024-based)";
    try {
      long v = Long.parseLong(digits);
      if (v >= 1 && v <= (Long.MAX_VALUE >> shift)) {
        return v << shift;
      }
    } catch (NumberFormatException e) {
      // reported below, naming the option
    }
    throw bad(text, expected);
  }

  private Duration parseDuration(String text) {
    String t = text.toLowerCase(Locale.ROOT);
    String expected = "a duration such as 500ms, 30s, 5m, 1h or PT30S";
    try {
      if (t.startsWith("pt") || t.startsWith("p")) {
        return Duration.parse(text);
      }
      int i = 0;
      while (i < t.length() && Character.isDigit(t.charAt(i))) {
        i++;
      }
      long n = Long.parseLong(t.substring(0, i));
      return switch (t.substring(i)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        case "d" -> Duration.ofDays(n);
        case "" -> {
          if (n != 0) {
            throw bad(text, expected + " (a number needs a unit)");
          }
          yield Duration.ZERO;
        }
        default -> throw bad(text, expected);
      };
    } catch (NumberFormatException | DateTimeParseException | ArithmeticException e) {
      throw bad(text, expected);
    }
  }

  private Path parsePath(String t) {
    try {
      return Path.of(t);
    } catch (InvalidPathException e) {
      throw bad(t, "a path (" + e.getMessage() + ")");
    }
  }

  private Enum<?> parseEnum(String t) {
    String wanted = t.toLowerCase(Locale.ROOT).replace('_', '-');
    for (Enum<?> e : enumType.getEnumConstants()) {
      if (constantName(e).equals(wanted)) {
        return e;
      }
    }
    throw bad(t, "one of " + String.join(", ", constantNames()));
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private Set<?> parseEnumSet(String t) {
    EnumSet set = EnumSet.noneOf((Class) enumType);
    for (String part : parseList(t)) {
      try {
        set.add(parseEnum(part));
      } catch (CdcConfigurationException e) {
        throw new CdcConfigurationException(
            "option "
                + name
                + " must be one or more of "
                + String.join(", ", constantNames())
                + " (comma-separated), was \""
                + part
                + '"',
            e);
      }
    }
    if (set.isEmpty()) {
      throw bad(t, "one or more of " + String.join(", ", constantNames()) + ", comma-separated");
    }
    return set;
  }

  /**
   * Splits at commas outside double quotes (a quoted SQL identifier may hold a comma; a doubled
   * quote inside one toggles twice and so stays inside), dropping blank parts.
   */
  private static List<String> parseList(String t) {
    List<String> out = new ArrayList<>();
    boolean quoted = false;
    int start = 0;
    for (int i = 0; i <= t.length(); i++) {
      if (i == t.length() || (t.charAt(i) == ',' && !quoted)) {
        String part = t.substring(start, i);
        if (!part.isBlank()) {
          out.add(part.strip());
        }
        start = i + 1;
      } else if (t.charAt(i) == '"') {
        quoted = !quoted;
      }
    }
    return List.copyOf(out);
  }

  private static String formatSize(long bytes) {
    for (String[] u : new String[][] {{"30", "g"}, {"20", "m"}, {"10", "k"}}) {
      int shift = Integer.parseInt(u[0]);
      if (bytes % (1L << shift) == 0) {
        return (bytes >> shift) + u[1];
      }
    }
    return Long.toString(bytes);
  }

  private static String formatDuration(Duration d) {
    long ms = d.toMillis();
    if (!d.equals(Duration.ofMillis(ms))) {
      return d.toString();
    }
    if (ms == 0) {
      return "0s";
    }
    if (ms % 3_600_000 == 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms % 60_000 == 0) {
      return ms / 60_000 + "m";
    }
    return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
  }

  /** Returns the option's name. */
  @Override
  public String toString() {
    return name;
  }
}

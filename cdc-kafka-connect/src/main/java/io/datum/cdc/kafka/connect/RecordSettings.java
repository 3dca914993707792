package io.datum.cdc.kafka.connect;

import java.util.Locale;
import java.util.Objects;

/**
 * How library events become Connect records: names, and the value representations that Debezium's
 * PostgreSQL connector makes configurable (its options of the same names: {@code
 * decimal.handling.mode}, {@code interval.handling.mode}, {@code time.precision.mode}, {@code
 * unavailable.value.placeholder}, {@code tombstones.on.delete}; Debezium 3.6.1 {@code
 * PostgresConnectorConfig}). docs/kafka-connect-types.md describes every mapping.
 *
 * @param topicPrefix the first part of every topic name and schema name ({@code
 *     <topicPrefix>.<schema>.<table>}); also {@code source.name}; not null, not empty
 * @param databaseName the database's name, for {@code source.db}; not null
 * @param tombstonesOnDelete whether a delete is followed by a tombstone (same topic and key, null
 *     value) so that log compaction can drop the key
 * @param messagesTopic the topic of logical decoding messages ({@code pg_logical_emit_message}), or
 *     null to emit none; {@link #defaultMessagesTopic} gives Debezium's name
 * @param decimalMode how {@code numeric} values are represented
 * @param intervalMode how {@code interval} values are represented
 * @param timePrecisionMode how {@code date}, {@code time} and {@code timestamp} values are
 *     represented
 * @param unavailablePlaceholder the value given to an unchanged TOASTed column of a text-like type
 *     (its UTF-8 bytes for {@code bytea}); Debezium's default is {@value
 *     #DEFAULT_UNAVAILABLE_PLACEHOLDER}; not null
 * @param connectorVersion the version written to {@code source.version}, not null
 */
record RecordSettings(
    String topicPrefix,
    String databaseName,
    boolean tombstonesOnDelete,
    String messagesTopic,
    DecimalMode decimalMode,
    IntervalMode intervalMode,
    TimePrecisionMode timePrecisionMode,
    String unavailablePlaceholder,
    String connectorVersion) {

  /** Debezium's {@code unavailable.value.placeholder} default. */
  static final String DEFAULT_UNAVAILABLE_PLACEHOLDER = "__debezium_unavailable_value";

  /** How {@code numeric} is represented (Debezium's {@code decimal.handling.mode}). */
  enum DecimalMode {
    /**
     * Connect {@code Decimal} with the column's scale; an unconstrained {@code numeric} as
     * Debezium's {@code VariableScaleDecimal} struct. The default.
     */
    PRECISE,
    /** FLOAT64; may lose precision. */
    DOUBLE,
    /** The exact decimal text, STRING. */
    STRING;

    /**
     * Parses a configuration value, case-insensitively: {@code precise}, {@code double} or {@code
     * string}.
     *
     * @param value the value, not null
     * @return the mode
     * @throws IllegalArgumentException if the value names no mode
     */
    static DecimalMode parse(String value) {
      return parseEnum(DecimalMode.class, value);
    }
  }

  /** How {@code interval} is represented (Debezium's {@code interval.handling.mode}). */
  enum IntervalMode {
    /** {@code io.debezium.time.MicroDuration}, INT64 microseconds, months as 30.4375 days. */
    NUMERIC,
    /** {@code io.debezium.time.Interval}, an ISO-8601 STRING {@code P1Y2M3DT4H5M6.78S}. */
    STRING;

    /**
     * Parses {@code numeric} or {@code string}, case-insensitively.
     *
     * @param value the value, not null
     * @return the mode
     * @throws IllegalArgumentException if the value names no mode
     */
    static IntervalMode parse(String value) {
      return parseEnum(IntervalMode.class, value);
    }
  }

  /** How temporal types are represented (Debezium's {@code time.precision.mode}). */
  enum TimePrecisionMode {
    /**
     * By the column's precision: {@code io.debezium.time.Date}; {@code Time} (INT32 ms) for
     * precision 0-3, {@code MicroTime} (INT64 µs) for 4-6; likewise {@code Timestamp} and {@code
     * MicroTimestamp}. The default.
     */
    ADAPTIVE,
    /** As {@link #ADAPTIVE}, but {@code time} is always {@code MicroTime}. */
    ADAPTIVE_TIME_MICROSECONDS,
    /**
     * Connect's own {@code Date}, {@code Time}, {@code Timestamp} logical types (milliseconds;
     * sub-millisecond digits are dropped, as in Debezium).
     */
    CONNECT;

    /**
     * Parses {@code adaptive}, {@code adaptive_time_microseconds} or {@code connect},
     * case-insensitively.
     *
     * @param value the value, not null
     * @return the mode
     * @throws IllegalArgumentException if the value names no mode
     */
    static TimePrecisionMode parse(String value) {
      return parseEnum(TimePrecisionMode.class, value);
    }
  }

  /**
   * Checks the fields.
   *
   * @throws NullPointerException if a field other than {@code messagesTopic} is null
   * @throws IllegalArgumentException if {@code topicPrefix} or {@code messagesTopic} is empty
   */
  RecordSettings {
    Objects.requireNonNull(topicPrefix, "topicPrefix");
    Objects.requireNonNull(databaseName, "databaseName");
    Objects.requireNonNull(decimalMode, "decimalMode");
    Objects.requireNonNull(intervalMode, "intervalMode");
    Objects.requireNonNull(timePrecisionMode, "timePrecisionMode");
    Objects.requireNonNull(unavailablePlaceholder, "unavailablePlaceholder");
    Objects.requireNonNull(connectorVersion, "connectorVersion");
    if (topicPrefix.isEmpty()) {
      throw new IllegalArgumentException("topicPrefix must not be empty");
    }
    if (messagesTopic != null && messagesTopic.isEmpty()) {
      throw new IllegalArgumentException("messagesTopic must be null or not empty");
    }
  }

  /**
   * The settings Debezium's defaults give: tombstones on, messages to {@link
   * #defaultMessagesTopic}, precise decimals, numeric intervals, adaptive time precision, the
   * default placeholder.
   *
   * @param topicPrefix the topic prefix
   * @param databaseName the database name
   * @param connectorVersion the connector version
   * @return the settings
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code topicPrefix} is empty
   */
  static RecordSettings defaults(String topicPrefix, String databaseName, String connectorVersion) {
    return new RecordSettings(
        topicPrefix,
        databaseName,
        true,
        defaultMessagesTopic(topicPrefix),
        DecimalMode.PRECISE,
        IntervalMode.NUMERIC,
        TimePrecisionMode.ADAPTIVE,
        DEFAULT_UNAVAILABLE_PLACEHOLDER,
        connectorVersion);
  }

  /**
   * Returns Debezium's topic of logical decoding messages, {@code <topicPrefix>.message}
   * (Debezium's {@code LogicalDecodingMessageMonitor.LOGICAL_DECODING_MESSAGE_TOPIC_SUFFIX}).
   *
   * @param topicPrefix the topic prefix, not null
   * @return the topic name
   */
  static String defaultMessagesTopic(String topicPrefix) {
    return topicPrefix + ".message";
  }

  /** Returns {@code source.name}: the topic prefix, as Debezium's logical server name is. */
  String serverName() {
    return topicPrefix;
  }

  /**
   * Parses an enum constant by its lower- or upper-case name.
   *
   * @throws IllegalArgumentException naming the allowed values
   */
  private static <E extends Enum<E>> E parseEnum(Class<E> type, String value) {
    try {
      return Enum.valueOf(type, value.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      StringBuilder allowed = new StringBuilder();
      for (E constant : type.getEnumConstants()) {
        allowed
            .append(allowed.length() == 0 ? "" : ", ")
            .append(constant.name().toLowerCase(Locale.ROOT));
      }
      throw new IllegalArgumentException("\"" + value + "\" is not one of " + allowed, e);
    }
  }
}

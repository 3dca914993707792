package io.datum.cdc.kafka.connect;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.SourceOption;
import io.datum.cdc.core.config.SourceOptions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigDef.Width;
import org.apache.kafka.common.config.ConfigException;

/**
 * The library's source options as the connector offers them: each {@link SourceOption} under its
 * connector key (Debezium's name where Debezium has the setting), with the connector's default
 * where it differs from the library's. Type, doc and validation of each key are derived from the
 * option's declaration ({@link #define}); {@link DatumConnectorConfig#sourceBuilder} hands the
 * values to the builder by the same table. Options the connector offers otherwise or not at all are
 * in {@link #NOT_OFFERED}, with the reason.
 */
final class ConnectorSourceOptions {

  private ConnectorSourceOptions() {}

  /** How a connector value becomes the option's value. */
  enum Unit {
    /** The same value (enums and paths as their text). */
    SAME,
    /** A duration given in milliseconds, as a long. */
    MILLIS,
    /** An int where -1 means no limit ({@link Integer#MAX_VALUE} for the library). */
    MINUS_ONE_UNLIMITED,
    /** Snapshot modes under Debezium's names ({@link DatumConnectorConfig#snapshotModes}). */
    SNAPSHOT_MODES
  }

  /**
   * One connector key of a source option.
   *
   * @param option the library's option
   * @param key the connector's key
   * @param connectorDefault the connector's default in the connector's form, or null for the
   *     library's default
   * @param unit how the connector's value maps to the option's
   * @param group the ConfigDef group
   * @param importance the ConfigDef importance
   * @param display the ConfigDef display name
   */
  record Key(
      SourceOption<?> option,
      String key,
      Object connectorDefault,
      Unit unit,
      String group,
      Importance importance,
      String display) {}

  static final String REPLICATION = "Replication";
  static final String SNAPSHOTS = "Snapshots";

  private static Key key(SourceOption<?> o, String key, Object def, Unit unit, String display) {
    return new Key(o, key, def, unit, REPLICATION, Importance.LOW, display);
  }

  private static Key key(SourceOption<?> o, String key, String display) {
    return key(o, key, null, Unit.SAME, display);
  }

  /** Every source option the connector offers, in the order of its documentation. */
  static final List<Key> KEYS =
      List.of(
          new Key(
              SourceOptions.SLOT,
              DatumConnectorConfig.SLOT_NAME,
              "datum_cdc",
              Unit.SAME,
              REPLICATION,
              Importance.HIGH,
              "Slot"),
          new Key(
              SourceOptions.CREATE_SLOT,
              DatumConnectorConfig.SLOT_CREATE,
              true,
              Unit.SAME,
              REPLICATION,
              Importance.MEDIUM,
              "Create slot"),
          key(SourceOptions.FAILOVER_SLOT, DatumConnectorConfig.SLOT_FAILOVER, "Failover slot"),
          // a task on another worker may still be stopping when this one starts
          key(
              SourceOptions.WAIT_FOR_SLOT,
              DatumConnectorConfig.SLOT_WAIT_MS,
              60_000L,
              Unit.MILLIS,
              "Slot wait"),
          key(
              SourceOptions.SLOT_CREATION_TIMEOUT,
              DatumConnectorConfig.SLOT_CREATION_TIMEOUT_MS,
              null,
              Unit.MILLIS,
              "Slot creation timeout"),
          key(
              SourceOptions.TRUST_SLOT_POSITION,
              DatumConnectorConfig.SLOT_TRUST_POSITION,
              "Trust slot position"),
          key(
              SourceOptions.ALLOW_CLUSTER_CHANGE,
              DatumConnectorConfig.ALLOW_CLUSTER_CHANGE,
              "Allow cluster change"),
          key(
              SourceOptions.ALLOW_PUBLICATION_CHANGE,
              DatumConnectorConfig.ALLOW_PUBLICATION_CHANGE,
              "Allow publication change"),
          new Key(
              SourceOptions.PUBLICATION,
              DatumConnectorConfig.PUBLICATION_NAME,
              "datum_cdc",
              Unit.SAME,
              REPLICATION,
              Importance.HIGH,
              "Publication"),
          key(
              SourceOptions.PROTOCOL_VERSION,
              DatumConnectorConfig.PROTOCOL_VERSION,
              "Protocol version"),
          key(SourceOptions.STREAMING, DatumConnectorConfig.STREAMING, "Streaming"),
          key(SourceOptions.TWO_PHASE, DatumConnectorConfig.TWO_PHASE, "Two-phase"),
          key(SourceOptions.BINARY, DatumConnectorConfig.BINARY, "Binary"),
          // Debezium sends no origin either; "any" is the server's own default
          key(SourceOptions.ORIGIN, DatumConnectorConfig.ORIGIN, "any", Unit.SAME, "Origin"),
          key(SourceOptions.MESSAGES, DatumConnectorConfig.MESSAGES, "Messages"),
          new Key(
              SourceOptions.MEMORY_BUDGET,
              DatumConnectorConfig.MEMORY_BUDGET,
              null,
              Unit.SAME,
              REPLICATION,
              Importance.MEDIUM,
              "Memory budget"),
          key(
              SourceOptions.SPILL_DIRECTORY,
              DatumConnectorConfig.SPILL_DIRECTORY,
              "Spill directory"),
          new Key(
              SourceOptions.ON_DECODE_ERROR,
              DatumConnectorConfig.DECODE_ERROR_POLICY,
              null,
              Unit.SAME,
              REPLICATION,
              Importance.MEDIUM,
              "Decode errors"),
          key(
              SourceOptions.STATUS_INTERVAL,
              DatumConnectorConfig.STATUS_INTERVAL_MS,
              null,
              Unit.MILLIS,
              "Status interval"),
          key(
              SourceOptions.RECONNECT_ATTEMPTS,
              DatumConnectorConfig.RECONNECT_ATTEMPTS,
              -1,
              Unit.MINUS_ONE_UNLIMITED,
              "Reconnects"),
          key(
              SourceOptions.RECONNECT_INITIAL_BACKOFF,
              DatumConnectorConfig.RECONNECT_BACKOFF_MS,
              null,
              Unit.MILLIS,
              "Backoff"),
          key(
              SourceOptions.RECONNECT_MAX_BACKOFF,
              DatumConnectorConfig.RECONNECT_BACKOFF_MAX_MS,
              null,
              Unit.MILLIS,
              "Max backoff"),
          // as Debezium's default: a new connector reads the existing rows first
          new Key(
              SourceOptions.SNAPSHOT_MODES,
              DatumConnectorConfig.SNAPSHOT_MODE,
              "initial",
              Unit.SNAPSHOT_MODES,
              SNAPSHOTS,
              Importance.HIGH,
              "Snapshot mode"),
          new Key(
              SourceOptions.SNAPSHOT_PARALLELISM,
              DatumConnectorConfig.SNAPSHOT_MAX_THREADS,
              null,
              Unit.SAME,
              SNAPSHOTS,
              Importance.MEDIUM,
              "Snapshot threads"),
          new Key(
              SourceOptions.SNAPSHOT_CHUNK_ROWS,
              DatumConnectorConfig.SNAPSHOT_CHUNK_ROWS,
              null,
              Unit.SAME,
              SNAPSHOTS,
              Importance.LOW,
              "Chunk rows"));

  /** The source options the connector does not offer under their own key, and why. */
  static final Map<SourceOption<?>, String> NOT_OFFERED =
      Map.of(
          SourceOptions.JDBC_URL,
          "built from database.hostname, database.port and database.dbname (Debezium's keys)",
          SourceOptions.USER,
          "database.user (Debezium's connection keys, declared with the connection group)",
          SourceOptions.PASSWORD,
          "database.password, a Connect PASSWORD (masked in logs and the REST API)",
          SourceOptions.CREATE_PUBLICATION,
          "publication.autocreate.mode, Debezium's (all_tables, filtered, disabled)",
          SourceOptions.PUBLICATION_TABLES,
          "table.include.list, used by publication.autocreate.mode=filtered as in Debezium",
          SourceOptions.HANDOFF_CAPACITY,
          "the task's own queue bounds what waits for a poll (max.queue.size)",
          SourceOptions.STOP_TIMEOUT,
          "Connect bounds a task's stop (task.shutdown.graceful.timeout.ms)",
          SourceOptions.ACKNOWLEDGEMENT_DURABILITY,
          "the task's checkpoints are Connect's offsets, stored when the worker commits them");

  /**
   * Defines each key in a ConfigDef: type, default, validator and doc from the option's
   * declaration, the connector's default where the table gives one.
   *
   * @param d the definition to add to
   */
  static void define(ConfigDef d) {
    int order = 100;
    for (Key k : KEYS) {
      SourceOption<?> o = k.option();
      Object def = k.connectorDefault() != null ? k.connectorDefault() : toConnector(k, o);
      d.define(
          k.key(),
          type(k),
          def,
          validator(k),
          k.importance(),
          doc(k),
          k.group(),
          ++order,
          Width.SHORT,
          k.display());
    }
  }

  /** Hands every key's value to the builder, as the option's value. */
  static void apply(AbstractConfig c, PgCdcSource.Builder b) {
    for (Key k : KEYS) {
      set(b, k.option(), toSource(k, c.values().get(k.key())));
    }
  }

  @SuppressWarnings("unchecked")
  private static <T> void set(PgCdcSource.Builder b, SourceOption<T> o, Object value) {
    b.option(o, (T) value);
  }

  static Type type(Key k) {
    return switch (k.unit()) {
      case MILLIS -> Type.LONG;
      case MINUS_ONE_UNLIMITED -> Type.INT;
      case SNAPSHOT_MODES -> Type.LIST;
      case SAME ->
          switch (k.option().kind()) {
            case BOOLEAN -> Type.BOOLEAN;
            case INT -> Type.INT;
            case LONG, SIZE -> Type.LONG;
            case LIST, ENUM_SET -> Type.LIST;
            case SECRET -> Type.PASSWORD;
            default -> Type.STRING;
          };
    };
  }

  private static String doc(Key k) {
    String doc = k.option().description();
    return switch (k.unit()) {
      case MILLIS -> doc + " In milliseconds.";
      case MINUS_ONE_UNLIMITED -> doc + " -1: no limit.";
      case SNAPSHOT_MODES ->
          doc
              + " Debezium's names: never (or no_data), initial, initial_only, on_request,"
              + " comma-separated.";
      case SAME ->
          k.option().enumType() != null
              ? doc + " One of " + String.join(", ", k.option().constantNames()) + "."
              : doc;
    };
  }

  /** The connector's form of the option's default. */
  private static Object toConnector(Key k, SourceOption<?> o) {
    Object v = o.defaultValue();
    if (v == null) {
      return null;
    }
    return switch (k.unit()) {
      case MILLIS -> ((Duration) v).toMillis();
      case MINUS_ONE_UNLIMITED -> (Integer) v == Integer.MAX_VALUE ? -1 : v;
      case SNAPSHOT_MODES, SAME ->
          o.kind() == SourceOption.Kind.INT
                  || o.kind() == SourceOption.Kind.LONG
                  || o.kind() == SourceOption.Kind.SIZE
                  || o.kind() == SourceOption.Kind.BOOLEAN
              ? v
              : o.format(v);
    };
  }

  /** The option's value of a parsed connector value. */
  static Object toSource(Key k, Object value) {
    if (value == null) {
      return null;
    }
    return switch (k.unit()) {
      case MILLIS -> Duration.ofMillis((Long) value);
      case MINUS_ONE_UNLIMITED -> (Integer) value < 0 ? Integer.MAX_VALUE : value;
      case SNAPSHOT_MODES -> {
        @SuppressWarnings("unchecked")
        List<String> names = (List<String>) value;
        yield DatumConnectorConfig.snapshotModes(names);
      }
      case SAME ->
          switch (k.option().kind()) {
            case ENUM, PATH -> k.option().parse((String) value);
            default -> value;
          };
    };
  }

  private static ConfigDef.Validator validator(Key k) {
    return new ConfigDef.Validator() {
      @Override
      public void ensureValid(String name, Object value) {
        if (k.unit() == Unit.MINUS_ONE_UNLIMITED && value instanceof Integer i && i < -1) {
          throw new ConfigException(name, value, "must be -1 (no limit) or at least 0");
        }
        try {
          check(k.option(), toSource(k, value));
        } catch (CdcConfigurationException | IllegalArgumentException e) {
          throw new ConfigException(name, value, e.getMessage());
        }
      }

      @Override
      public String toString() {
        List<String> names = k.option().constantNames();
        return k.unit() == Unit.SNAPSHOT_MODES
            ? "never | no_data | initial | initial_only | on_request, or initial[_only],on_request"
            : names.isEmpty() ? "see the description" : String.join(", ", names);
      }
    };
  }

  @SuppressWarnings("unchecked")
  private static <T> void check(SourceOption<T> o, Object value) {
    o.validate((T) value);
  }
}

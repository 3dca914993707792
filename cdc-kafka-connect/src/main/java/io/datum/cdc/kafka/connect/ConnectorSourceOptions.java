package io.datum.cdc.kafka.connect;

import static io.datum.cdc.kafka.connect.DatumConnectorConfig.ALLOW_CLUSTER_CHANGE;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.ALLOW_PUBLICATION_CHANGE;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.BINARY;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.DECODE_ERROR_POLICY;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.MEMORY_BUDGET;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.MESSAGES;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.ORIGIN;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.PROTOCOL_VERSION;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.PUBLICATION_NAME;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.RECONNECT_ATTEMPTS;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.RECONNECT_BACKOFF_MAX_MS;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.RECONNECT_BACKOFF_MS;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.SLOT_CREATE;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.SLOT_CREATION_TIMEOUT_MS;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.SLOT_FAILOVER;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.SLOT_NAME;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.SLOT_TRUST_POSITION;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.SLOT_WAIT_MS;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.SNAPSHOT_CHUNK_ROWS;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.SNAPSHOT_MAX_THREADS;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.SNAPSHOT_MODE;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.SPILL_DIRECTORY;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.STATUS_INTERVAL_MS;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.STREAMING;
import static io.datum.cdc.kafka.connect.DatumConnectorConfig.TWO_PHASE;

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

  private static final Unit MS = Unit.MILLIS;
  private static final Importance LOW = Importance.LOW;
  private static final Importance MEDIUM = Importance.MEDIUM;
  private static final Importance HIGH = Importance.HIGH;

  /** How a connector value becomes the option's value. */
  enum Unit {
    /** The same value (enums and paths as their text). */
    SAME,
    /** A duration given in milliseconds, as a long. */
    MILLIS,
    /** An int where -1 means no limit ({@link Integer#MAX_VALUE} for the library). */
    MINUS_ONE,
    /** Snapshot modes under Debezium's names ({@link DatumConnectorConfig#snapshotModes}). */
    SNAPSHOTS
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

  private static Key key(SourceOption<?> o, String key, Object def, Unit unit, Importance i) {
    String words = o.name().replace('-', ' ');
    return new Key(
        o,
        key,
        def,
        unit,
        o.name().startsWith("snapshot-") ? SNAPSHOTS : REPLICATION,
        i,
        Character.toUpperCase(words.charAt(0)) + words.substring(1));
  }

  private static Key key(SourceOption<?> o, String key) {
    return key(o, key, null, Unit.SAME, LOW);
  }

  /**
   * Adds a key for every option neither listed nor in {@link #NOT_OFFERED}: its name with dots
   * ({@code max-widgets}: {@code max.widgets}), type, default and doc from its declaration. A new
   * option reaches the connector without an edit here.
   */
  private static List<Key> withDerived(Key... listed) {
    List<Key> keys = new java.util.ArrayList<>(List.of(listed));
    for (SourceOption<?> o : SourceOptions.all()) {
      if (keys.stream().noneMatch(k -> k.option() == o) && !NOT_OFFERED.containsKey(o)) {
        keys.add(key(o, o.name().replace('-', '.')));
      }
    }
    return List.copyOf(keys);
  }

  /** The source options the connector does not offer under their own key, and why. */
  static final Map<SourceOption<?>, String> NOT_OFFERED =
      Map.ofEntries(
          Map.entry(
              SourceOptions.JDBC_URL,
              "built from database.hostname, database.port and database.dbname (Debezium's keys)"),
          Map.entry(
              SourceOptions.USER,
              "database.user (Debezium's connection keys, declared with the connection group)"),
          Map.entry(
              SourceOptions.PASSWORD,
              "database.password, a Connect PASSWORD (masked in logs and the REST API)"),
          Map.entry(
              SourceOptions.CREATE_PUBLICATION,
              "publication.autocreate.mode, Debezium's (all_tables, filtered, disabled)"),
          Map.entry(
              SourceOptions.PUBLICATION_TABLES,
              "table.include.list, used by publication.autocreate.mode=filtered as in Debezium"),
          Map.entry(
              SourceOptions.HANDOFF_CAPACITY,
              "the task's own queue bounds what waits for a poll (max.queue.size)"),
          Map.entry(
              SourceOptions.STOP_TIMEOUT,
              "Connect bounds a task's stop (task.shutdown.graceful.timeout.ms)"),
          Map.entry(
              SourceOptions.ACKNOWLEDGEMENT_DURABILITY,
              "the task's checkpoints are Connect's offsets, stored when the worker commits them"),
          Map.entry(
              SourceOptions.HANDLER_THREADS,
              "the task hands records to the Connect worker in poll(); scale with tasks.max and"
                  + " partitions, not handler threads"),
          Map.entry(
              SourceOptions.HANDLER_ORDERING,
              "the task hands records to the Connect worker in poll(), in stream order"));

  /**
   * Every source option the connector offers, in the order of its documentation; a default given
   * here is the connector's own (in the connector's form), where it differs from the library's.
   */
  static final List<Key> KEYS =
      withDerived(
          key(SourceOptions.SLOT, SLOT_NAME, "datum_cdc", Unit.SAME, HIGH),
          key(SourceOptions.CREATE_SLOT, SLOT_CREATE, true, Unit.SAME, MEDIUM),
          key(SourceOptions.FAILOVER_SLOT, SLOT_FAILOVER),
          // a task on another worker may still be stopping when this one starts
          key(SourceOptions.WAIT_FOR_SLOT, SLOT_WAIT_MS, 60_000L, MS, LOW),
          key(SourceOptions.SLOT_CREATION_TIMEOUT, SLOT_CREATION_TIMEOUT_MS, null, MS, LOW),
          key(SourceOptions.TRUST_SLOT_POSITION, SLOT_TRUST_POSITION),
          key(SourceOptions.ALLOW_CLUSTER_CHANGE, ALLOW_CLUSTER_CHANGE),
          key(SourceOptions.ALLOW_PUBLICATION_CHANGE, ALLOW_PUBLICATION_CHANGE),
          key(SourceOptions.PUBLICATION, PUBLICATION_NAME, "datum_cdc", Unit.SAME, HIGH),
          key(SourceOptions.PROTOCOL_VERSION, PROTOCOL_VERSION),
          key(SourceOptions.STREAMING, STREAMING),
          key(SourceOptions.TWO_PHASE, TWO_PHASE),
          key(SourceOptions.BINARY, BINARY),
          // unset, as Debezium, which sends no origin: the server then sends every transaction, on
          // every version (a default of "any" made a task on PostgreSQL 14 or 15 refuse to start:
          // the option needs 16)
          key(SourceOptions.ORIGIN, ORIGIN),
          key(SourceOptions.MESSAGES, MESSAGES),
          key(SourceOptions.MEMORY_BUDGET, MEMORY_BUDGET, null, Unit.SAME, MEDIUM),
          key(SourceOptions.SPILL_DIRECTORY, SPILL_DIRECTORY),
          key(SourceOptions.ON_DECODE_ERROR, DECODE_ERROR_POLICY, null, Unit.SAME, MEDIUM),
          key(SourceOptions.STATUS_INTERVAL, STATUS_INTERVAL_MS, null, MS, LOW),
          key(SourceOptions.RECONNECT_ATTEMPTS, RECONNECT_ATTEMPTS, -1, Unit.MINUS_ONE, LOW),
          key(SourceOptions.RECONNECT_INITIAL_BACKOFF, RECONNECT_BACKOFF_MS, null, MS, LOW),
          key(SourceOptions.RECONNECT_MAX_BACKOFF, RECONNECT_BACKOFF_MAX_MS, null, MS, LOW),
          // as Debezium's default: a new connector reads the existing rows first
          key(SourceOptions.SNAPSHOT_MODES, SNAPSHOT_MODE, "initial", Unit.SNAPSHOTS, HIGH),
          key(SourceOptions.SNAPSHOT_PARALLELISM, SNAPSHOT_MAX_THREADS, null, Unit.SAME, MEDIUM),
          key(SourceOptions.SNAPSHOT_CHUNK_ROWS, SNAPSHOT_CHUNK_ROWS));

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
      case MINUS_ONE -> Type.INT;
      case SNAPSHOTS -> Type.LIST;
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
      case MINUS_ONE -> doc + " -1: no limit.";
      case SNAPSHOTS ->
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
      case MINUS_ONE -> (Integer) v == Integer.MAX_VALUE ? -1 : v;
      case SNAPSHOTS, SAME ->
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
      case MINUS_ONE -> (Integer) value < 0 ? Integer.MAX_VALUE : value;
      case SNAPSHOTS -> {
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
        if (k.unit() == Unit.MINUS_ONE && value instanceof Integer i && i < -1) {
          throw new ConfigException(name, value, "must be -1 (no limit) or at least 0");
        }
        try {
          check(k.option(), toSource(k, value));
        } catch (CdcConfigurationException | IllegalArgumentException e) {
          // the key is named by Connect: the option's own name would only confuse
          String m = e.getMessage();
          String option = "option " + k.option().name();
          throw new ConfigException(
              name, value, m.startsWith(option) ? m.substring(option.length() + 1).strip() : m);
        }
      }

      @Override
      public String toString() {
        List<String> names = k.option().constantNames();
        return k.unit() == Unit.SNAPSHOTS
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

package io.datum.cdc.kafka.connect;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.core.config.SourceOptions;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Range;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigDef.Width;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.types.Password;

/**
 * The configuration of {@link DatumPostgresConnector} and its task: every option, its type,
 * default, validation and documentation ({@link #CONFIG_DEF}), and the parsed values. Where
 * Debezium's PostgreSQL connector has the same setting, the name is Debezium's (docs/
 * kafka-connect.md lists both). The password is a {@link Type#PASSWORD}: Connect masks it in logs
 * and in the REST API, and this class never prints it.
 */
public final class DatumConnectorConfig extends AbstractConfig {

  /** The PostgreSQL server's host name or address; required. */
  public static final String HOSTNAME = "database.hostname";

  /** Its port; default 5432. */
  public static final String PORT = "database.port";

  /** The user; needs the REPLICATION attribute (or superuser) and SELECT on the tables. */
  public static final String USER = "database.user";

  /** The user's password; a PASSWORD value, never logged. */
  public static final String PASSWORD = "database.password";

  /** The database to stream from; required. */
  public static final String DBNAME = "database.dbname";

  /** pgjdbc's {@code sslmode}; default {@code prefer}. */
  public static final String SSLMODE = "database.sslmode";

  /** The prefix of every topic, and the logical name of the server in source partitions. */
  public static final String TOPIC_PREFIX = "topic.prefix";

  /** The logical replication slot; default {@code datum_cdc}. */
  public static final String SLOT_NAME = "slot.name";

  /** Whether the task creates the slot when it does not exist; default true. */
  public static final String SLOT_CREATE = "slot.create";

  /** Whether a slot the task creates is a failover slot (PostgreSQL 17+); default false. */
  public static final String SLOT_FAILOVER = "slot.failover";

  /** How long a task waits for the slot when another process holds it; default 60 s. */
  public static final String SLOT_WAIT_MS = "slot.wait.ms";

  /** How long creating the slot may wait for open transactions; default 0 (no limit). */
  public static final String SLOT_CREATION_TIMEOUT_MS = "slot.creation.timeout.ms";

  /** Resume at the slot's position when it is ahead of the offsets, losing changes. */
  public static final String SLOT_TRUST_POSITION = "slot.trust.position";

  /** Accept a server of another cluster than the offsets name. */
  public static final String ALLOW_CLUSTER_CHANGE = "allow.cluster.change";

  /** Accept another publication than the offsets name. */
  public static final String ALLOW_PUBLICATION_CHANGE = "allow.publication.change";

  /** The publication; default {@code datum_cdc}. */
  public static final String PUBLICATION_NAME = "publication.name";

  /** {@code all_tables}, {@code filtered} or {@code disabled}; default all_tables. */
  public static final String PUBLICATION_AUTOCREATE_MODE = "publication.autocreate.mode";

  /** The tables a {@code filtered} publication is created for, {@code schema.table,...}. */
  public static final String TABLE_INCLUDE_LIST = "table.include.list";

  /** When to snapshot: {@code never}, {@code initial}, {@code initial_only}, {@code on_request}. */
  public static final String SNAPSHOT_MODE = "snapshot.mode";

  /** How many connections read a snapshot; default 1. */
  public static final String SNAPSHOT_MAX_THREADS = "snapshot.max.threads";

  /** Rows per snapshot chunk; default 8192. */
  public static final String SNAPSHOT_CHUNK_ROWS = "snapshot.chunk.rows";

  /** pgoutput {@code proto_version}; default 0: the highest the server supports. */
  public static final String PROTOCOL_VERSION = "pgoutput.protocol.version";

  /** pgoutput {@code streaming}: {@code off}, {@code on} or {@code parallel}; default off. */
  public static final String STREAMING = "pgoutput.streaming";

  /** pgoutput {@code two_phase}; default false. */
  public static final String TWO_PHASE = "pgoutput.two.phase";

  /** pgoutput {@code binary}; default false. */
  public static final String BINARY = "pgoutput.binary";

  /** pgoutput {@code origin}: {@code any} or {@code none}; default any. */
  public static final String ORIGIN = "pgoutput.origin";

  /** pgoutput {@code messages}: emit logical decoding messages; default false. */
  public static final String MESSAGES = "messages.enabled";

  /** Bytes of not yet delivered changes held in memory before spilling; default 64 MiB. */
  public static final String MEMORY_BUDGET = "memory.budget.bytes";

  /** Where large transactions spill; default java.io.tmpdir. */
  public static final String SPILL_DIRECTORY = "spill.directory";

  /** What a value that cannot be decoded does: {@code raw}, {@code skip}, {@code stop}. */
  public static final String DECODE_ERROR_POLICY = "decode.error.policy";

  /** How often the task reports its position to the walsender; default 1000 ms. */
  public static final String STATUS_INTERVAL_MS = "status.update.interval.ms";

  /** Reconnect attempts after a connection loss; -1 (default) for no limit. */
  public static final String RECONNECT_ATTEMPTS = "reconnect.max.attempts";

  /** First reconnect backoff; default 200 ms. */
  public static final String RECONNECT_BACKOFF_MS = "reconnect.backoff.initial.ms";

  /** Longest reconnect backoff; default 30 s. */
  public static final String RECONNECT_BACKOFF_MAX_MS = "reconnect.backoff.max.ms";

  /** Whether a delete is followed by a tombstone; default true. */
  public static final String TOMBSTONES_ON_DELETE = "tombstones.on.delete";

  /** How numeric values are written: {@code precise}, {@code double}, {@code string}. */
  public static final String DECIMAL_HANDLING_MODE = "decimal.handling.mode";

  /** How interval values are written: {@code numeric} or {@code string}. */
  public static final String INTERVAL_HANDLING_MODE = "interval.handling.mode";

  /** How temporal values are written: {@code adaptive} or {@code connect}. */
  public static final String TIME_PRECISION_MODE = "time.precision.mode";

  /** What an unchanged TOASTed value not sent by pgoutput reads as. */
  public static final String UNAVAILABLE_VALUE_PLACEHOLDER = "unavailable.value.placeholder";

  /** How often a heartbeat may carry a position no change record carries; default 10 s. */
  public static final String HEARTBEAT_INTERVAL_MS = "heartbeat.interval.ms";

  /** The heartbeat topic's prefix; the topic is {@code <prefix>.<topic.prefix>}. */
  public static final String HEARTBEAT_TOPIC_PREFIX = "topic.heartbeat.prefix";

  /** Records a poll returns at most; default 2048. */
  public static final String MAX_BATCH_SIZE = "max.batch.size";

  /** Records converted and waiting for a poll at most; default 8192. */
  public static final String MAX_QUEUE_SIZE = "max.queue.size";

  /** How long a poll waits for a record before it returns none; default 500 ms. */
  public static final String POLL_INTERVAL_MS = "poll.interval.ms";

  /**
   * With {@code transaction.boundary=connector}: the most records one Kafka transaction takes
   * before it is committed inside a PostgreSQL transaction; 0 (default): PostgreSQL transactions
   * are never split, however large.
   */
  public static final String TRANSACTION_MAX_RECORDS = "transaction.max.records";

  private static final Pattern TOPIC_CHARS = Pattern.compile("[a-zA-Z0-9._-]+");

  private static final String CONNECTION = "Connection";
  private static final String REPLICATION = ConnectorSourceOptions.REPLICATION;
  private static final String RECORDS = "Records";
  private static final String TASK = "Task";

  /** Every option of the connector. */
  public static final ConfigDef CONFIG_DEF = definition();

  private static ConfigDef definition() {
    ConfigDef d = new ConfigDef();
    int o = 0;
    d.define(
        HOSTNAME,
        Type.STRING,
        ConfigDef.NO_DEFAULT_VALUE,
        new ConfigDef.NonEmptyString(),
        Importance.HIGH,
        "Host name or IP address of the PostgreSQL server (the primary, or a standby on PostgreSQL"
            + " 16+).",
        CONNECTION,
        ++o,
        Width.MEDIUM,
        "Host");
    d.define(
        PORT,
        Type.INT,
        5432,
        Range.between(1, 65535),
        Importance.HIGH,
        "Port of the PostgreSQL server.",
        CONNECTION,
        ++o,
        Width.SHORT,
        "Port");
    d.define(
        USER,
        Type.STRING,
        ConfigDef.NO_DEFAULT_VALUE,
        new ConfigDef.NonEmptyString(),
        Importance.HIGH,
        "PostgreSQL user: needs the REPLICATION attribute (or superuser), SELECT on the published"
            + " tables, and CREATE on the database to create the publication.",
        CONNECTION,
        ++o,
        Width.MEDIUM,
        "User");
    d.define(
        PASSWORD,
        Type.PASSWORD,
        null,
        Importance.HIGH,
        "Password of the user; masked in logs and the REST API.",
        CONNECTION,
        ++o,
        Width.MEDIUM,
        "Password");
    d.define(
        DBNAME,
        Type.STRING,
        ConfigDef.NO_DEFAULT_VALUE,
        new ConfigDef.NonEmptyString(),
        Importance.HIGH,
        "Database to stream the changes of.",
        CONNECTION,
        ++o,
        Width.MEDIUM,
        "Database");
    d.define(
        SSLMODE,
        Type.STRING,
        "prefer",
        ConfigDef.ValidString.in(
            "disable", "allow", "prefer", "require", "verify-ca", "verify-full"),
        Importance.MEDIUM,
        "pgjdbc's sslmode.",
        CONNECTION,
        ++o,
        Width.SHORT,
        "SSL mode");
    o = 0;
    d.define(
        TOPIC_PREFIX,
        Type.STRING,
        ConfigDef.NO_DEFAULT_VALUE,
        topicPrefixValidator(),
        Importance.HIGH,
        "Prefix of every topic (<prefix>.<schema>.<table>) and the logical name of the server in"
            + " the source partition; do not change it: the offsets are found by it.",
        REPLICATION,
        ++o,
        Width.MEDIUM,
        "Topic prefix");
    d.define(
        PUBLICATION_AUTOCREATE_MODE,
        Type.STRING,
        "all_tables",
        ConfigDef.CaseInsensitiveValidString.in("all_tables", "filtered", "disabled"),
        Importance.MEDIUM,
        "When the publication does not exist: create it FOR ALL TABLES (needs a superuser), for"
            + " the tables of table.include.list (filtered), or fail (disabled).",
        REPLICATION,
        ++o,
        Width.SHORT,
        "Publication creation");
    d.define(
        TABLE_INCLUDE_LIST,
        Type.LIST,
        "",
        Importance.MEDIUM,
        "Tables a filtered publication is created for: schema.table, comma-separated (no dot:"
            + " schema public).",
        REPLICATION,
        ++o,
        Width.LONG,
        "Tables");
    ConnectorSourceOptions.define(d); // the library's options, from their declarations
    o = 0;
    d.define(
        TOMBSTONES_ON_DELETE,
        Type.BOOLEAN,
        true,
        Importance.MEDIUM,
        "Follow each delete by a tombstone (null value) for log compaction.",
        RECORDS,
        ++o,
        Width.SHORT,
        "Tombstones");
    d.define(
        DECIMAL_HANDLING_MODE,
        Type.STRING,
        "precise",
        ConfigDef.CaseInsensitiveValidString.in("precise", "double", "string"),
        Importance.MEDIUM,
        "numeric as Connect Decimal (precise), double, or string (docs/kafka-connect-types.md).",
        RECORDS,
        ++o,
        Width.SHORT,
        "Decimals");
    d.define(
        INTERVAL_HANDLING_MODE,
        Type.STRING,
        "numeric",
        ConfigDef.CaseInsensitiveValidString.in("numeric", "string"),
        Importance.LOW,
        "interval as microseconds (numeric) or ISO 8601 (string).",
        RECORDS,
        ++o,
        Width.SHORT,
        "Intervals");
    d.define(
        TIME_PRECISION_MODE,
        Type.STRING,
        "adaptive",
        ConfigDef.CaseInsensitiveValidString.in(
            "adaptive", "adaptive_time_microseconds", "connect"),
        Importance.LOW,
        "Temporal types as Debezium's adaptive semantic types (adaptive_time_microseconds: time"
            + " always in microseconds), or Connect's own (millisecond) types"
            + " (docs/kafka-connect-types.md).",
        RECORDS,
        ++o,
        Width.SHORT,
        "Time precision");
    d.define(
        UNAVAILABLE_VALUE_PLACEHOLDER,
        Type.STRING,
        "__debezium_unavailable_value",
        Importance.LOW,
        "What an unchanged TOASTed value, which pgoutput does not send, reads as.",
        RECORDS,
        ++o,
        Width.MEDIUM,
        "Unavailable value");
    d.define(
        HEARTBEAT_INTERVAL_MS,
        Type.LONG,
        10_000L,
        Range.atLeast(0),
        Importance.MEDIUM,
        "How often, at most, a heartbeat record carries to Connect's offsets a position that no"
            + " change record carries: the slot's position moved on while the published tables"
            + " were quiet (the rest of the database writes WAL; without heartbeats the slot"
            + " keeps it all), or a snapshot's progress was acknowledged after its last row. Sent"
            + " only then, to <topic.heartbeat.prefix>.<topic.prefix>. 0: never (as Debezium's"
            + " default).",
        RECORDS,
        ++o,
        Width.SHORT,
        "Heartbeat interval");
    d.define(
        HEARTBEAT_TOPIC_PREFIX,
        Type.STRING,
        "__datum-heartbeat",
        topicPrefixValidator(),
        Importance.LOW,
        "Heartbeat topic prefix: the topic is <prefix>.<topic.prefix>.",
        RECORDS,
        ++o,
        Width.MEDIUM,
        "Heartbeat topic prefix");
    o = 0;
    d.define(
        MAX_BATCH_SIZE,
        Type.INT,
        2048,
        Range.atLeast(1),
        Importance.LOW,
        "Records a poll returns at most.",
        TASK,
        ++o,
        Width.SHORT,
        "Batch size");
    d.define(
        MAX_QUEUE_SIZE,
        Type.INT,
        8192,
        Range.atLeast(1),
        Importance.LOW,
        "Records converted and waiting for a poll at most; the stream waits when it is full.",
        TASK,
        ++o,
        Width.SHORT,
        "Queue size");
    d.define(
        POLL_INTERVAL_MS,
        Type.LONG,
        500L,
        Range.atLeast(1),
        Importance.LOW,
        "How long a poll waits for a record before it returns none.",
        TASK,
        ++o,
        Width.SHORT,
        "Poll interval");
    d.define(
        TRANSACTION_MAX_RECORDS,
        Type.INT,
        0,
        Range.atLeast(0),
        Importance.LOW,
        "With exactly-once and transaction.boundary=connector: commit the Kafka transaction"
            + " after this many records even inside a PostgreSQL transaction (a read_committed"
            + " consumer then sees a very large PostgreSQL transaction in parts, each still exactly"
            + " once); 0: a PostgreSQL transaction is never split (several small ones share a Kafka"
            + " transaction).",
        TASK,
        ++o,
        Width.SHORT,
        "Transaction max records");
    return d;
  }

  private static ConfigDef.Validator topicPrefixValidator() {
    return new ConfigDef.Validator() {
      @Override
      public void ensureValid(String name, Object value) {
        String s = (String) value;
        if (s == null || s.isEmpty()) {
          throw new ConfigException(name, value, "must not be empty");
        }
        if (!TOPIC_CHARS.matcher(s).matches() || s.length() > 200) {
          throw new ConfigException(
              name,
              value,
              "must be 1 to 200 of the characters Kafka allows in a topic name: ASCII letters,"
                  + " digits, '.', '_' and '-'");
        }
      }

      @Override
      public String toString() {
        return "[a-zA-Z0-9._-]{1,200}";
      }
    };
  }

  /**
   * Parses snapshot modes.
   *
   * @param names the names given
   * @return the modes
   * @throws IllegalArgumentException naming an unknown mode or a combination the library refuses
   */
  static EnumSet<SnapshotMode> snapshotModes(List<String> names) {
    EnumSet<SnapshotMode> modes = EnumSet.noneOf(SnapshotMode.class);
    for (String raw : names) {
      String n = raw.trim().toLowerCase(Locale.ROOT);
      switch (n) {
        case "never", "no_data" -> modes.add(SnapshotMode.NEVER);
        case "initial" -> modes.add(SnapshotMode.INITIAL);
        case "initial_only" -> modes.add(SnapshotMode.INITIAL_ONLY);
        case "on_request" -> modes.add(SnapshotMode.ON_REQUEST);
        default ->
            throw new IllegalArgumentException(
                "unknown snapshot mode '"
                    + raw
                    + "'; the modes are never (or no_data), initial, initial_only, on_request");
      }
    }
    try {
      SourceOptions.SNAPSHOT_MODES.validate(modes); // the combinations the library refuses
    } catch (CdcConfigurationException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    return modes;
  }

  /**
   * Parses and validates a configuration.
   *
   * @param props the connector's or task's configuration
   * @throws ConfigException naming the first invalid option
   */
  public DatumConnectorConfig(Map<?, ?> props) {
    super(CONFIG_DEF, props, false);
    List<String> problems = crossFieldProblems(this);
    if (!problems.isEmpty()) {
      throw new ConfigException(String.join("; ", problems));
    }
  }

  /**
   * Checks what one option's validator cannot: options that must agree.
   *
   * @return each problem as {@code option: message}; empty if none
   */
  static List<String> crossFieldProblems(AbstractConfig c) {
    List<String> p = new ArrayList<>();
    if (c.getString(PUBLICATION_AUTOCREATE_MODE).equalsIgnoreCase("filtered")
        && c.getList(TABLE_INCLUDE_LIST).isEmpty()) {
      p.add(
          TABLE_INCLUDE_LIST
              + ": publication.autocreate.mode=filtered needs the tables to publish");
    }
    if (c.getLong(RECONNECT_BACKOFF_MS) > c.getLong(RECONNECT_BACKOFF_MAX_MS)) {
      p.add(RECONNECT_BACKOFF_MS + ": must not exceed " + RECONNECT_BACKOFF_MAX_MS);
    }
    return p;
  }

  /** Returns the topic prefix. */
  public String topicPrefix() {
    return getString(TOPIC_PREFIX);
  }

  /** Returns the slot name. */
  public String slot() {
    return getString(SLOT_NAME);
  }

  /** Returns the database name. */
  public String database() {
    return getString(DBNAME);
  }

  /** Returns the publication name. */
  public String publication() {
    return getString(PUBLICATION_NAME);
  }

  /** Returns the JDBC URL of the server, without credentials. */
  public String jdbcUrl() {
    String host = getString(HOSTNAME);
    if (host.indexOf(':') >= 0 && !host.startsWith("[")) {
      host = "[" + host + "]"; // an IPv6 address
    }
    return "jdbc:postgresql://"
        + host
        + ":"
        + getInt(PORT)
        + "/"
        + java.net.URLEncoder.encode(database(), StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** The prefix of options passed to pgjdbc as connection properties, as Debezium's. */
  public static final String DRIVER_PREFIX = "driver.";

  /**
   * Returns pgjdbc connection properties for a plain (not replication) connection: user, password,
   * sslmode, the {@code driver.*} options (e.g. {@code driver.sslrootcert}) and an application
   * name.
   *
   * @param applicationName what {@code pg_stat_activity.application_name} shows
   */
  java.util.Properties jdbcProperties(String applicationName) {
    java.util.Properties p = new java.util.Properties();
    p.putAll(driverProperties());
    p.setProperty("user", getString(USER));
    String password = password();
    if (password != null) {
      p.setProperty("password", password);
    }
    p.setProperty("sslmode", getString(SSLMODE));
    p.setProperty("ApplicationName", applicationName);
    return p;
  }

  /** Returns the {@code driver.*} options without the prefix. */
  Map<String, String> driverProperties() {
    Map<String, String> out = new java.util.TreeMap<>();
    for (Map.Entry<String, Object> e : originalsWithPrefix(DRIVER_PREFIX).entrySet()) {
      out.put(e.getKey(), String.valueOf(e.getValue()));
    }
    return out;
  }

  /** Returns the password, or null if none was given. */
  String password() {
    Password p = getPassword(PASSWORD);
    return p == null ? null : p.value();
  }

  /** Returns the settings of the records. */
  RecordSettings recordSettings() {
    return new RecordSettings(
        topicPrefix(),
        database(),
        getBoolean(TOMBSTONES_ON_DELETE),
        getBoolean(MESSAGES) ? RecordSettings.defaultMessagesTopic(topicPrefix()) : null,
        RecordSettings.DecimalMode.parse(getString(DECIMAL_HANDLING_MODE)),
        RecordSettings.IntervalMode.parse(getString(INTERVAL_HANDLING_MODE)),
        RecordSettings.TimePrecisionMode.parse(getString(TIME_PRECISION_MODE)),
        getString(UNAVAILABLE_VALUE_PLACEHOLDER),
        DatumPostgresConnector.VERSION);
  }

  /**
   * Returns a builder of the library's source with every option of this configuration but the
   * checkpoint store and the flush limit, which the task adds.
   *
   * @param publicationExists whether the publication exists already: as with Debezium's {@code
   *     publication.autocreate.mode}, an existing publication is streamed as it is, whatever it
   *     publishes; only a missing one is created
   */
  PgCdcSource.Builder sourceBuilder(boolean publicationExists) {
    String autocreate = getString(PUBLICATION_AUTOCREATE_MODE).toLowerCase(Locale.ROOT);
    PgCdcSource.Builder b =
        PgCdcSource.builder()
            .jdbcUrl(jdbcUrl())
            .user(getString(USER))
            .connectionProperty("sslmode", getString(SSLMODE));
    ConnectorSourceOptions.apply(this, b);
    String password = password();
    if (password != null) {
      b.password(password);
    }
    driverProperties().forEach(b::connectionProperty);
    switch (publicationExists ? "disabled" : autocreate) {
      case "all_tables" -> b.createPublication(true);
      case "filtered" ->
          b.createPublication(true, getList(TABLE_INCLUDE_LIST).toArray(new String[0]));
      default -> b.createPublication(false);
    }
    return b;
  }
}

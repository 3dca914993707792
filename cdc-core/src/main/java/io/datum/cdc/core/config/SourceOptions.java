package io.datum.cdc.core.config;

import io.datum.cdc.SlotNames;
import io.datum.cdc.core.config.SourceOption.Kind;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Every option of a {@link io.datum.cdc.core.PgCdcSource}, declared once. The builder's setters,
 * {@link io.datum.cdc.core.PgCdcSource.Builder#option(String, String)}, the Kafka Connect
 * connector's definition, the Spring Boot properties, the {@code pgcdc stream} flags and the table
 * in docs/configuration.md are derived from these declarations or checked against them by tests.
 */
public final class SourceOptions {

  private SourceOptions() {}

  /** The JDBC URL, {@code jdbc:postgresql://host[:port]/database[?...]}; required. */
  public static final SourceOption<String> JDBC_URL =
      SourceOption.<String>of(
              "jdbc-url",
              Kind.STRING,
              "jdbc:postgresql://host[:port]/database[?...], read by pgjdbc's own parser (host"
                  + " lists such as h1,h2:5433 and targetServerType work); a password in it is"
                  + " masked in every message.")
          .required()
          .check(
              v ->
                  v.startsWith("jdbc:postgresql:")
                      ? null
                      : "not a PostgreSQL JDBC URL (jdbc:postgresql://host[:port]/database)");

  /** The role to connect as. */
  public static final SourceOption<String> USER =
      SourceOption.of(
          "user",
          Kind.STRING,
          "The role to connect as, with the REPLICATION attribute (or superuser); default the"
              + " URL's user, else pgjdbc's (the operating-system user). A different user in the"
              + " URL is refused.");

  /** The role's password. */
  public static final SourceOption<String> PASSWORD =
      SourceOption.of(
          "password",
          Kind.SECRET,
          "The role's password; default the URL's. A different password in the URL is refused.");

  /** On a hot standby: the JDBC URL of its primary, where the source writes. */
  public static final SourceOption<String> PRIMARY_JDBC_URL =
      SourceOption.<String>of(
              "primary-jdbc-url",
              Kind.STRING,
              "When jdbc-url is a hot standby (PostgreSQL 16+): its primary's JDBC URL, same role"
                  + " and password. The source writes there what a standby cannot (a publication it"
                  + " creates, online snapshot watermarks) and asks it for a running-transactions"
                  + " record while it creates a slot on the standby (pg_log_standby_snapshot()). It"
                  + " never writes on the standby. Without it, those features are refused at start"
                  + " on a standby; unused while jdbc-url is a primary.")
          .check(
              v ->
                  v.startsWith("jdbc:postgresql:")
                      ? null
                      : "not a PostgreSQL JDBC URL (jdbc:postgresql://host[:port]/database)");

  /** The logical replication slot; required. */
  public static final SourceOption<String> SLOT =
      SourceOption.<String>of(
              "slot", Kind.STRING, "The logical replication slot (pgoutput), [a-z0-9_]{1,63}.")
          .required()
          .check(
              v ->
                  SlotNames.isValid(v)
                      ? null
                      : "must be 1 to 63 lower-case letters, digits and underscores (a slot name),"
                          + " was \""
                          + v
                          + '"');

  /** The publication whose tables are streamed; required. */
  public static final SourceOption<String> PUBLICATION =
      SourceOption.<String>of(
              "publication",
              Kind.STRING,
              "The publication whose tables are streamed: 1 to 63 characters, no single quote or"
                  + " NUL.")
          .required()
          .check(
              v ->
                  v.isEmpty() || v.length() > 63 || v.indexOf('\'') >= 0 || v.indexOf('\0') >= 0
                      ? "invalid publication name \""
                          + v
                          + "\": 1 to 63 characters, no single"
                          + " quote or NUL"
                      : null);

  /** Create the slot when it does not exist. */
  public static final SourceOption<Boolean> CREATE_SLOT =
      SourceOption.<Boolean>of(
              "create-slot",
              Kind.BOOLEAN,
              "Create the slot (pgoutput) if it does not exist; never when the checkpoint store"
                  + " holds a watermark for it (a new slot would start after the changes in"
                  + " between), never at a reconnect.")
          .defaultValue(false);

  /** Create the publication when it does not exist. */
  public static final SourceOption<Boolean> CREATE_PUBLICATION =
      SourceOption.<Boolean>of(
              "create-publication",
              Kind.BOOLEAN,
              "Create the publication if it does not exist, for publication-tables or, with none,"
                  + " FOR ALL TABLES (a superuser only). An existing publication is never changed:"
                  + " one that lacks a listed table fails the start.")
          .defaultValue(false);

  /** The tables of a publication the source creates. */
  public static final SourceOption<List<String>> PUBLICATION_TABLES =
      SourceOption.<List<String>>of(
              "publication-tables",
              Kind.LIST,
              "The tables a created publication publishes, schema.table (no dot: schema public;"
                  + " double-quote a part as in SQL),"
                  + " comma-separated (a comma inside double quotes belongs to the name; Kafka"
                  + " Connect's list values split at every comma); none means FOR ALL TABLES.")
          .defaultValue(List.of());

  /** Events queued between the replication thread and the handler. */
  public static final SourceOption<Integer> HANDOFF_CAPACITY =
      SourceOption.<Integer>of(
              "handoff-capacity",
              Kind.INT,
              "Events queued between the thread reading the replication connection and the"
                  + " handler's thread.")
          .defaultValue(1024)
          .unit("events")
          .range(1, Integer.MAX_VALUE);

  /** How many threads call the handler. */
  public static final SourceOption<Integer> HANDLER_THREADS =
      SourceOption.<Integer>of(
              "handler-threads",
              Kind.INT,
              "Threads that call the handler: with more than one, events of one ordering unit"
                  + " (handler-ordering) are handled in stream order, one at a time, and different"
                  + " units in parallel; the watermark still moves over the contiguous"
                  + " acknowledged prefix only.")
          .defaultValue(1)
          .unit("threads")
          .range(1, 1024);

  /** Which events the handler threads keep in stream order. */
  public static final SourceOption<HandlerOrdering> HANDLER_ORDERING =
      SourceOption.<HandlerOrdering>ofEnum(
              "handler-ordering",
              HandlerOrdering.class,
              false,
              "With more than one handler thread, the unit handled in stream order: key (a table's"
                  + " row, by primary key or replica identity; a table without a key as a whole),"
                  + " table, transaction (or snapshot chunk), or none. TRUNCATE and logical"
                  + " messages are handled alone, after every earlier event, in every ordering.")
          .defaultValue(HandlerOrdering.KEY);

  /** The longest time between two Standby Status Updates. */
  public static final SourceOption<Duration> STATUS_INTERVAL =
      SourceOption.<Duration>of(
              "status-interval",
              Kind.DURATION,
              "The longest time between two Standby Status Updates; on an idle connection the"
                  + " update is also what notices a server that went away. Keep it well below the"
                  + " server's wal_sender_timeout.")
          .defaultValue(Duration.ofSeconds(1))
          .check(SourceOptions::positive);

  /** How long stop() waits for the handler's current event. */
  public static final SourceOption<Duration> STOP_TIMEOUT =
      SourceOption.<Duration>of(
              "stop-timeout",
              Kind.DURATION,
              "How long stop() waits for the handler to finish its current event.")
          .defaultValue(Duration.ofSeconds(30));

  /** Resume at the slot's position when it is after the stored watermark. */
  public static final SourceOption<Boolean> TRUST_SLOT_POSITION =
      SourceOption.<Boolean>of(
              "trust-slot-position",
              Kind.BOOLEAN,
              "When the slot's confirmed_flush_lsn is after the stored watermark (the slot was"
                  + " advanced, or dropped and recreated), resume at the slot's position, losing"
                  + " the changes in between, instead of refusing to start.")
          .defaultValue(false);

  /** Accept a server of another cluster, database or diverged timeline. */
  public static final SourceOption<Boolean> ALLOW_CLUSTER_CHANGE =
      SourceOption.<Boolean>of(
              "allow-cluster-change",
              Kind.BOOLEAN,
              "Resume although the stored checkpoint names another cluster (system identifier),"
                  + " database, or a timeline the server does not continue (a slot moved by"
                  + " pg_upgrade), logging it at WARN; otherwise such a start fails with"
                  + " CLUSTER_MISMATCH or TIMELINE_DIVERGED.")
          .defaultValue(false);

  /** Accept a stored checkpoint written streaming another publication. */
  public static final SourceOption<Boolean> ALLOW_PUBLICATION_CHANGE =
      SourceOption.<Boolean>of(
              "allow-publication-change",
              Kind.BOOLEAN,
              "Resume although the stored checkpoint was written streaming another publication"
                  + " (its watermark passed over changes that one filtered out, which the new one"
                  + " would never deliver) or after an initial snapshot of another publication's"
                  + " tables; otherwise such a start fails with PUBLICATION_CHANGED.")
          .defaultValue(false);

  /** Create and require a failover slot (PostgreSQL 17+). */
  public static final SourceOption<Boolean> FAILOVER_SLOT =
      SourceOption.<Boolean>of(
              "failover-slot",
              Kind.BOOLEAN,
              "Create the slot as a failover slot, which a physical standby with"
                  + " sync_replication_slots = on keeps, and require an existing slot to be one"
                  + " (else SLOT_INCOMPATIBLE).")
          .defaultValue(false)
          .since(17);

  /** Connection attempts per connection loss before the source fails. */
  public static final SourceOption<Integer> RECONNECT_ATTEMPTS =
      SourceOption.<Integer>of(
              "reconnect-attempts",
              Kind.INT,
              "Connection attempts after a connection loss before the source fails, with"
                  + " exponential backoff and jitter, resuming at the durable watermark; 0 fails"
                  + " at the first loss; 2147483647: unlimited. Only losses after start returned"
                  + " are retried.")
          .defaultValue(Integer.MAX_VALUE)
          .unit("attempts")
          .range(0, Integer.MAX_VALUE);

  /** The backoff before the first reconnect attempt. */
  public static final SourceOption<Duration> RECONNECT_INITIAL_BACKOFF =
      SourceOption.<Duration>of(
              "reconnect-initial-backoff",
              Kind.DURATION,
              "The backoff before the first reconnect attempt; it doubles up to"
                  + " reconnect-max-backoff, each wait between half and all of it.")
          .defaultValue(Duration.ofMillis(200))
          .check(SourceOptions::positive);

  /** The largest reconnect backoff. */
  public static final SourceOption<Duration> RECONNECT_MAX_BACKOFF =
      SourceOption.<Duration>of(
              "reconnect-max-backoff",
              Kind.DURATION,
              "The largest reconnect backoff, at least reconnect-initial-backoff.")
          .defaultValue(Duration.ofSeconds(30))
          .check(SourceOptions::positive);

  /** When an acknowledgement is stored. */
  public static final SourceOption<AcknowledgementDurability> ACKNOWLEDGEMENT_DURABILITY =
      SourceOption.<AcknowledgementDurability>ofEnum(
              "acknowledgement-durability",
              AcknowledgementDurability.class,
              false,
              "event: acknowledge returns once a stored checkpoint includes it (nothing"
                  + " acknowledged comes again after a crash); transaction: a checkpoint is stored"
                  + " when a transaction is completely acknowledged (one store write per"
                  + " transaction).")
          .defaultValue(AcknowledgementDurability.EVENT);

  /** What a change with a column value that cannot be decoded does. */
  public static final SourceOption<DecodeErrorPolicy> ON_DECODE_ERROR =
      SourceOption.<DecodeErrorPolicy>ofEnum(
              "on-decode-error",
              DecodeErrorPolicy.class,
              false,
              "A change one of whose column values cannot be decoded: raw delivers it with that"
                  + " value as PostgreSQL sent it and the column marked, stop fails the source,"
                  + " skip leaves the change out (acknowledged by the source, counted, logged).")
          .defaultValue(DecodeErrorPolicy.RAW);

  /** When to copy the rows that already exist. */
  public static final SourceOption<Set<SnapshotMode>> SNAPSHOT_MODES =
      SourceOption.<Set<SnapshotMode>>ofEnum(
              "snapshot-modes",
              SnapshotMode.class,
              true,
              "Also deliver the rows that already exist as read events: initial every published"
                  + " table once (at a new slot's exported snapshot, or online when the store holds"
                  + " no completed initial snapshot), initial-only the same and then stop once"
                  + " every read row is acknowledged, on-request tables asked for while streaming;"
                  + " never: none. initial or initial-only combine with on-request.")
          .defaultValue(Set.of(SnapshotMode.NEVER))
          .check(SourceOptions::snapshotProblem)
          .since(14);

  /** Connections reading snapshot chunks at once. */
  public static final SourceOption<Integer> SNAPSHOT_PARALLELISM =
      SourceOption.<Integer>of(
              "snapshot-parallelism",
              Kind.INT,
              "Connections reading snapshot chunks at once, each a PostgreSQL backend holding the"
                  + " snapshot (large tables are split into key ranges).")
          .defaultValue(1)
          .unit("connections")
          .range(1, 64);

  /** Rows per snapshot chunk. */
  public static final SourceOption<Integer> SNAPSHOT_CHUNK_ROWS =
      SourceOption.<Integer>of(
              "snapshot-chunk-rows",
              Kind.INT,
              "Rows per snapshot chunk: one COPY of a key range, the unit of progress kept in the"
                  + " checkpoint store and of an online chunk's snapshot. A chunk also ends early"
                  + " once its rows take a quarter of memory-budget divided by the parallelism.")
          .defaultValue(8192)
          .unit("rows")
          .range(1, 1_000_000);

  /** Deliver logical decoding messages. */
  public static final SourceOption<Boolean> MESSAGES =
      SourceOption.<Boolean>of(
              "messages",
              Kind.BOOLEAN,
              "Also deliver logical decoding messages (pg_logical_emit_message) as message"
                  + " events (pgoutput option messages).")
          .defaultValue(false)
          .since(14);

  /** The pgoutput protocol version. */
  public static final SourceOption<Integer> PROTOCOL_VERSION =
      SourceOption.<Integer>of(
              "protocol-version",
              Kind.INT,
              "The pgoutput protocol version, 1 to 4; 0: the highest the server supports (1"
                  + " before PostgreSQL 14, 2 on 14, 3 on 15, 4 on 16 and later).")
          .defaultValue(0)
          .range(0, 4);

  /** The pgoutput streaming option. */
  public static final SourceOption<StreamingMode> STREAMING =
      SourceOption.<StreamingMode>ofEnum(
              "streaming",
              StreamingMode.class,
              false,
              "Let PostgreSQL stream large in-progress transactions (on: PostgreSQL 14+,"
                  + " parallel: 16+); they are still delivered only once committed.")
          .defaultValue(StreamingMode.OFF)
          .since(14);

  /** The pgoutput two_phase option. */
  public static final SourceOption<Boolean> TWO_PHASE =
      SourceOption.<Boolean>of(
              "two-phase",
              Kind.BOOLEAN,
              "Decode prepared transactions at PREPARE TRANSACTION (marks the slot two-phase for"
                  + " good); their events are delivered at COMMIT PREPARED, never after ROLLBACK"
                  + " PREPARED.")
          .defaultValue(false)
          .since(15);

  /** The pgoutput binary option. */
  public static final SourceOption<Boolean> BINARY =
      SourceOption.<Boolean>of(
              "binary",
              Kind.BOOLEAN,
              "Receive column values in binary format; they decode to the same Java objects as"
                  + " in text format (base types of extensions cannot be decoded then).")
          .defaultValue(false)
          .since(14);

  /** The pgoutput origin option; null: not sent. */
  public static final SourceOption<OriginFilter> ORIGIN =
      SourceOption.<OriginFilter>ofEnum(
              "origin",
              OriginFilter.class,
              false,
              "Which transactions to receive by replication origin: none only those without one"
                  + " (not applied by logical replication from another node), any all; not set:"
                  + " the option is not sent.")
          .since(16);

  /** Bytes of undecoded changes held in memory before a transaction spills. */
  public static final SourceOption<Long> MEMORY_BUDGET =
      SourceOption.<Long>of(
              "memory-budget",
              Kind.SIZE,
              "Undecoded changes of transactions not yet delivered held in memory (message size"
                  + " plus 64 bytes per change); a transaction that would exceed it spills to a"
                  + " temporary file in spill-directory.")
          .defaultValue(64L << 20)
          .unit("bytes")
          .range(1, Long.MAX_VALUE);

  /** Where spill files are created. */
  public static final SourceOption<Path> SPILL_DIRECTORY =
      SourceOption.<Path>of(
              "spill-directory",
              Kind.PATH,
              "Where spill files of large transactions are created (unlinked at once; must be a"
                  + " writable directory); default java.io.tmpdir.")
          .defaultValue(Path.of(System.getProperty("java.io.tmpdir")));

  /** How long start waits for a slot another process holds. */
  public static final SourceOption<Duration> WAIT_FOR_SLOT =
      SourceOption.<Duration>of(
              "wait-for-slot",
              Kind.DURATION,
              "When another process holds the slot, how long start waits for it (checked every"
                  + " 200 ms) before failing, naming that process; 0: fail at once.")
          .defaultValue(Duration.ZERO)
          .check(SourceOptions::notNegative);

  /** How long creating the slot waits for older transactions. */
  public static final SourceOption<Duration> SLOT_CREATION_TIMEOUT =
      SourceOption.<Duration>of(
              "slot-creation-timeout",
              Kind.DURATION,
              "How long creating the slot may wait for the transactions and prepared transactions"
                  + " open when it began (PostgreSQL builds the slot's snapshot only once they"
                  + " ended); then start fails naming each; 0: as long as they stay open.")
          .defaultValue(Duration.ZERO)
          .check(SourceOptions::notNegative);

  private static final List<SourceOption<?>> ALL = collect();

  /**
   * Returns every option, in declaration order.
   *
   * @return an unmodifiable list
   */
  public static List<SourceOption<?>> all() {
    return ALL;
  }

  /**
   * Returns the option of a name.
   *
   * @param name the kebab-case name ({@code wait-for-slot})
   * @return the option
   * @throws io.datum.cdc.CdcConfigurationException naming the option and listing the known ones
   */
  public static SourceOption<?> named(String name) {
    for (SourceOption<?> o : ALL) {
      if (o.name().equals(name)) {
        return o;
      }
    }
    Map<String, String> known = new TreeMap<>();
    ALL.forEach(o -> known.put(o.name(), ""));
    throw new io.datum.cdc.CdcConfigurationException(
        "unknown source option \"" + name + "\"; the options are " + known.keySet());
  }

  private static List<SourceOption<?>> collect() {
    List<SourceOption<?>> out = new ArrayList<>();
    for (Field f : SourceOptions.class.getDeclaredFields()) {
      if (Modifier.isPublic(f.getModifiers()) && f.getType() == SourceOption.class) {
        try {
          out.add((SourceOption<?>) f.get(null));
        } catch (IllegalAccessException e) {
          throw new IllegalStateException("cannot read " + f, e);
        }
      }
    }
    return List.copyOf(out);
  }

  private static String positive(Duration d) {
    return d.isNegative() || d.isZero() ? "must be positive, was " + d : null;
  }

  private static String notNegative(Duration d) {
    return d.isNegative() ? "must not be negative, was " + d : null;
  }

  private static String snapshotProblem(Set<SnapshotMode> modes) {
    EnumSet<SnapshotMode> set = EnumSet.noneOf(SnapshotMode.class);
    set.addAll(modes);
    if (set.isEmpty()) {
      return "name at least one snapshot mode";
    }
    if (set.contains(SnapshotMode.NEVER) && set.size() > 1) {
      return "snapshot mode never cannot be combined with another: "
          + set.stream().map(SourceOption::constantName).toList();
    }
    if (set.contains(SnapshotMode.INITIAL_ONLY) && set.contains(SnapshotMode.ON_REQUEST)) {
      return "snapshot modes initial-only and on-request exclude each other: an initial-only"
          + " source stops once its initial snapshot is acknowledged; use initial,on-request to go"
          + " on streaming and take requests";
    }
    if (set.contains(SnapshotMode.INITIAL) && set.contains(SnapshotMode.INITIAL_ONLY)) {
      return "snapshot modes initial and initial-only exclude each other; give one";
    }
    return null;
  }
}

package io.datum.cdc.core;

import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.ClusterIdentity;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SlotNames;
import io.datum.cdc.core.config.AcknowledgementDurability;
import io.datum.cdc.core.config.DecodeErrorPolicy;
import io.datum.cdc.core.config.HandlerOrdering;
import io.datum.cdc.core.config.OriginFilter;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.core.config.SourceConfiguration;
import io.datum.cdc.core.config.SourceOption;
import io.datum.cdc.core.config.SourceOptions;
import io.datum.cdc.core.config.SourceState;
import io.datum.cdc.core.config.StreamingMode;
import io.datum.cdc.core.errors.PgErrors;
import io.datum.cdc.core.replication.SourceRuntime;
import io.datum.cdc.event.CdcHandler;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.postgresql.Driver;

/**
 * Streams the committed row changes of one PostgreSQL logical replication slot (plugin {@code
 * pgoutput}) to an application {@link CdcHandler}, and moves the slot's {@code confirmed_flush_lsn}
 * only as far as the application has acknowledged every change, in commit order.
 *
 * <pre>{@code
 * try (CdcCheckpointStore store = CheckpointStores.open("file:/var/lib/app/cdc");
 *     PgCdcSource source = PgCdcSource.builder()
 *         .jdbcUrl("jdbc:postgresql://db:5432/shop")
 *         .user("cdc").password(System.getenv("CDC_PASSWORD"))
 *         .slot("shop_orders").publication("shop_orders")
 *         .checkpointStore(store)
 *         .build()) {
 *   source.start((event, checkpoints) -> {
 *     process(event);
 *     checkpoints.acknowledge(event.offset());
 *   }).join(); // until stop() or a failure
 * }
 * }</pre>
 *
 * <p>Threads: one reads the replication connection; one calls the handler, fed through a bounded
 * hand-off. A source runs once: after it stopped, build a new one (on the same slot and store it
 * resumes at the watermark and delivers again every event not acknowledged).
 */
public final class PgCdcSource implements AutoCloseable {

  private final SourceRuntime runtime;
  private final SourceConfiguration config;

  private PgCdcSource(SourceConfiguration config) {
    this.config = config;
    this.runtime = new SourceRuntime(config);
  }

  /** Returns a new builder. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Connects, checks (or creates) the slot and publication, and starts streaming at the stored
   * watermark. Returns once streaming has started.
   *
   * @param handler the application's handler, not null
   * @return a future completed when the source stops: normally after {@link #stop()} (or, with
   *     {@link SnapshotMode#INITIAL_ONLY}, once every row of the initial snapshot is acknowledged
   *     and stored), exceptionally with the failure (a {@link io.datum.cdc.CdcConnectionException}
   *     when the connection is lost, the handler's exception, ...)
   * @throws io.datum.cdc.CdcReplicationException if the slot or publication is missing (and not to
   *     be created), the slot is active for another process, the slot's {@code confirmed_flush_lsn}
   *     is after the stored watermark (see {@link Builder#trustSlotPosition}), the stored
   *     checkpoint belongs to another cluster, database or diverged timeline (see {@link
   *     Builder#allowClusterChange}), or the server refuses replication
   * @throws io.datum.cdc.CdcConnectionException if PostgreSQL cannot be reached (not retried:
   *     reconnecting covers only losses after start returned)
   * @throws CdcConfigurationException if an option is too new for the server, or the spill
   *     directory is not a writable directory
   * @throws io.datum.cdc.CdcStoreException if the stored checkpoint cannot be read
   * @throws IllegalStateException if the source was started before
   */
  public CompletableFuture<Void> start(CdcHandler handler) {
    return runtime.start(Objects.requireNonNull(handler, "handler"));
  }

  /**
   * Stops gracefully: no further event is handed to the handler, the event being handled completes,
   * and a final Standby Status Update reports the durable watermark. Waits up to the stop timeout
   * for the threads. Idempotent.
   */
  public void stop() {
    runtime.stop();
  }

  /**
   * Stops the source and drops its replication slot. With {@code force}, a walsender that still
   * holds the slot (another process) is terminated first ({@code pg_terminate_backend}).
   *
   * @param force terminate the process holding the slot if it is active
   * @throws io.datum.cdc.CdcReplicationException if the slot does not exist or stays active
   * @throws io.datum.cdc.CdcConnectionException if PostgreSQL cannot be reached (not retried:
   *     reconnecting covers only losses after start returned)
   * @throws CdcConfigurationException if an option is too new for the server, or the spill
   *     directory is not a writable directory
   */
  public void dropSlot(boolean force) {
    runtime.dropSlot(force);
  }

  /**
   * Snapshots tables while streaming (an online, incremental snapshot): their rows come as {@link
   * io.datum.cdc.event.ReadEvent}s interleaved with the changes, never after a newer change of the
   * same key, chunk by chunk, the stream never waiting longer than one chunk read. Progress is kept
   * in the checkpoint store: after a restart the source reads only what was not acknowledged. No
   * write to any user table; needs EXECUTE on {@code pg_logical_emit_message} (docs/snapshots.md).
   *
   * <p>A table without a primary key or replica identity index is read whole at the exported
   * snapshot of a temporary replication slot, delivered at that slot's consistent point: first a
   * reset ({@link io.datum.cdc.event.TruncateEvent#isSnapshotReset()}: drop what you hold of the
   * table), then its rows, the stream holding at that point while they are read (no change waits
   * longer than the read of that one table). Until the reset and every row are acknowledged, a
   * restart reads the table again, after a new reset. It needs one free replication slot and one
   * free walsender while the temporary slot is created.
   *
   * @param tables the tables, as the publication publishes them (a partitioned table's root with
   *     publish_via_partition_root), at least one
   * @return the snapshot's id ({@code request-<LSN>}), as its rows' {@link
   *     io.datum.cdc.event.SnapshotInfo#id()}
   * @throws CdcConfigurationException if the source was built with {@link SnapshotMode#NEVER}, a
   *     table is not published by the publication, or is being snapshotted already (nothing is
   *     requested then)
   * @throws IllegalStateException if the source is not running
   * @throws io.datum.cdc.CdcConnectionException if the tables cannot be checked
   * @throws io.datum.cdc.CdcException if another session holds a lock on a table that blocks
   *     reading its definition (ACCESS EXCLUSIVE: ALTER TABLE, VACUUM FULL, LOCK TABLE) for 5 s;
   *     the message names the holders, nothing is requested, and asking again later works
   */
  public String snapshot(io.datum.cdc.TableId... tables) {
    Objects.requireNonNull(tables, "tables");
    if (tables.length == 0) {
      throw new CdcConfigurationException("snapshot(...) needs at least one table");
    }
    return runtime.requestSnapshot(List.of(tables));
  }

  /**
   * Returns whether a snapshot has rows left to read or acknowledge (the initial one, or one asked
   * for with {@link #snapshot(io.datum.cdc.TableId...)}).
   *
   * @return true while a snapshot is in progress
   */
  public boolean snapshotInProgress() {
    return runtime.snapshotTracker().inProgress();
  }

  /**
   * Returns the identity of the cluster the source's positions belong to: the server's ({@code
   * IDENTIFY_SYSTEM}: system identifier, timeline, database; PostgreSQL docs, 55.4 Streaming
   * Replication Protocol) once the source found it to match the stored checkpoint's and started
   * streaming, before that the stored checkpoint's. It is what the next stored checkpoint carries,
   * so an application that keeps positions itself (a Kafka Connect task's offsets) records it with
   * them; every event handed to the handler after streaming started belongs to it.
   *
   * @return the identity, or null if not known yet (no stored checkpoint and not yet streaming)
   */
  public ClusterIdentity cluster() {
    return runtime.cluster();
  }

  /** Returns the handle the handler receives, for acknowledging from elsewhere. */
  public CdcCheckpointHandle checkpoints() {
    return runtime.handle();
  }

  /**
   * Returns the durable watermark: the end LSN of the newest transaction such that it and all
   * before it are acknowledged and stored.
   */
  public PgLsn watermark() {
    return runtime.handle().watermark();
  }

  /**
   * Returns the position this source confirms to PostgreSQL as flushed in its Standby Status
   * Updates (what the slot's {@code confirmed_flush_lsn} becomes once sent): the durable {@link
   * #watermark()}, but not past the consistent point of an initial snapshot that is not complete,
   * nor past what the builder's {@code confirmedFlushLimit} returns. Use it, not the watermark, to
   * tell whether the slot has caught up.
   *
   * @return the position, never null
   */
  public PgLsn confirmedPosition() {
    return runtime.confirmedPosition();
  }

  /**
   * Returns the source's progress: watermark, pending transactions and events, events handled and
   * acknowledged, the watermark's age, the time since the last event, reconnects. Cheap enough to
   * poll every second.
   *
   * @return a new snapshot, never null
   */
  public SourceMetrics metrics() {
    long[] p = runtime.progress();
    double seconds = p[4] / 1e9;
    return new SourceMetrics(
        watermark(),
        (int) p[0],
        p[1],
        p[2],
        p[3],
        seconds > 0 ? p[3] / seconds : 0,
        runtime.reconnects(),
        p[5],
        p[6],
        p[7],
        runtime.snapshotTracker().figures(),
        runtime.snapshotChunksRetried(),
        runtime.snapshotWaiting(),
        p[8],
        p[9],
        watermarkAge(p[10]),
        p[11] / 1e9,
        runtime.handlerQueues());
  }

  /** Seconds since a commit time in microseconds since 1970 (see SourceRuntime.progress). */
  private static double watermarkAge(long commitMicros) {
    if (commitMicros == Long.MIN_VALUE) {
      return 0; // nothing pending
    }
    if (commitMicros == 0) {
      return Double.NaN;
    }
    java.time.Instant now = java.time.Instant.now();
    long nowMicros = now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
    return Math.max(0, nowMicros - commitMicros) / 1e6;
  }

  /**
   * Returns the source's lifecycle state: {@link SourceState#NEW} before {@link #start}, {@link
   * SourceState#STARTING} while start connects, {@link SourceState#SNAPSHOTTING} once it returned
   * while a new slot's exported initial snapshot is read (before streaming starts), {@link
   * SourceState#STREAMING} once it returned and the stream runs, {@link SourceState#RECONNECTING}
   * after a connection loss, {@link SourceState#STOPPING} after {@link #stop()} or a failure until
   * the future completes, then {@link SourceState#STOPPED} or {@link SourceState#FAILED} (set
   * before the future completes). Cheap (one volatile read); any thread.
   *
   * @return the state, never null
   */
  public SourceState state() {
    return runtime.state();
  }

  /** Returns the name of the replication slot the source reads; never null. */
  public String slot() {
    return config.slot();
  }

  /** Returns the name of the publication the source streams; never null. */
  public String publication() {
    return config.publication();
  }

  /**
   * Opens a new ordinary (not replication) JDBC connection to the source's database with the
   * source's URL, user, password and connection properties, for monitoring queries (for example
   * {@code pg_replication_slots}). The source does not track it: the caller closes it. Its {@code
   * application_name} is {@code datum-cdc monitor SLOT} unless the URL or properties set one.
   *
   * @return a new open connection
   * @throws java.sql.SQLException if the connection cannot be opened
   */
  public java.sql.Connection openConnection() throws java.sql.SQLException {
    java.util.Properties p = new java.util.Properties();
    p.putAll(config.properties());
    if (org.postgresql.PGProperty.APPLICATION_NAME.get(p) == null) {
      // pg_stat_activity tells it apart from the walsender ("datum-cdc SLOT"); an
      // ApplicationName in the URL or the properties wins
      org.postgresql.PGProperty.APPLICATION_NAME.set(p, "datum-cdc monitor " + slot());
    }
    return java.sql.DriverManager.getConnection(config.jdbcUrl(), p);
  }

  /**
   * Reads the slot's status from {@code pg_replication_slots} (lag in bytes, active, walsender pid,
   * {@code wal_status}, {@code safe_wal_size}; see {@link SlotStatus}) on a new connection from
   * {@link #openConnection()}, closed before this returns. One query of at most {@value
   * SlotStatus#QUERY_TIMEOUT_SECONDS} seconds plus the connection set-up: callers that poll cache
   * the result (or keep a connection and call {@link SlotStatus#read}). Any thread; works before
   * start and after stop.
   *
   * @return the status, never null
   * @throws java.sql.SQLException if the connection or query fails or times out, or the slot does
   *     not exist
   */
  public SlotStatus readSlotStatus() throws java.sql.SQLException {
    try (java.sql.Connection c = openConnection()) {
      return SlotStatus.read(c, slot());
    }
  }

  /** Returns how many times the source reconnected after a connection loss. */
  public long reconnects() {
    return runtime.reconnects();
  }

  /** Same as {@link #stop()}. */
  @Override
  public void close() {
    stop();
  }

  /**
   * Builds a {@link PgCdcSource}. Each setter checks its argument at once; {@link #build()} checks
   * that the required ones were given.
   */
  public static final class Builder {
    private final Map<SourceOption<?>, Object> values = new HashMap<>();
    private final Properties properties = new Properties();
    private CdcCheckpointStore store;
    private Supplier<PgLsn> confirmedFlushLimit;

    private Builder() {}

    /**
     * @param jdbcUrl {@code jdbc:postgresql://host:port/database}, as pgjdbc reads it (host lists,
     *     parameters); required
     * @return this builder
     * @throws CdcConfigurationException if pgjdbc's parser ({@code Driver.parseURL}) does not take
     *     it as a PostgreSQL URL; the message shows it with any password masked
     */
    public Builder jdbcUrl(String jdbcUrl) {
      if (jdbcUrl == null || Driver.parseURL(jdbcUrl, null) == null) {
        throw new CdcConfigurationException(
            "not a PostgreSQL JDBC URL (jdbc:postgresql://host[:port]/database[?...]): "
                + (jdbcUrl == null ? null : PgErrors.redact(jdbcUrl)));
      }
      values.put(SourceOptions.JDBC_URL, SourceOptions.JDBC_URL.validate(jdbcUrl));
      return this;
    }

    /**
     * Streams from a hot standby (PostgreSQL 16+; {@link #jdbcUrl} names the standby) and writes
     * what a standby cannot on its primary: a publication {@link #createPublication} creates, the
     * watermarks of online and resumed snapshots (which the standby's stream carries once it has
     * replayed them), and, while a slot is created on the standby, a running-transactions record
     * ({@code pg_log_standby_snapshot()}, PostgreSQL docs 9.28.6; a standby's slot creation waits
     * for one from the primary). The source never writes on the standby. Connects as the same
     * {@link #user} with the same {@link #password} and connection properties. Without it, a source
     * on a standby refuses at {@link PgCdcSource#start} the features that write (snapshots,
     * creating a missing publication), naming this option. Unused while {@link #jdbcUrl} is a
     * primary (also after the standby's promotion). See docs/configuration.md, "Streaming from a
     * standby".
     *
     * @param primaryJdbcUrl {@code jdbc:postgresql://host:port/database} of the primary, the same
     *     database as {@link #jdbcUrl}'s; or null for none (the default)
     * @return this builder
     * @throws CdcConfigurationException if pgjdbc's parser does not take it as a PostgreSQL URL
     */
    public Builder primaryJdbcUrl(String primaryJdbcUrl) {
      if (primaryJdbcUrl == null) {
        values.remove(SourceOptions.PRIMARY_JDBC_URL);
        return this;
      }
      if (Driver.parseURL(primaryJdbcUrl, null) == null) {
        throw new CdcConfigurationException(
            "not a PostgreSQL JDBC URL (jdbc:postgresql://host[:port]/database[?...]) for the"
                + " primary: "
                + PgErrors.redact(primaryJdbcUrl));
      }
      return set(SourceOptions.PRIMARY_JDBC_URL, primaryJdbcUrl);
    }

    /**
     * @param user the role to connect as; it needs the REPLICATION attribute (or superuser). A
     *     different {@code user} parameter in the JDBC URL is refused by {@link #build()}
     * @return this builder
     */
    public Builder user(String user) {
      properties.setProperty("user", Objects.requireNonNull(user, "user"));
      values.put(SourceOptions.USER, user);
      return this;
    }

    /**
     * @param password the password, or null for none. A different {@code password} parameter in the
     *     JDBC URL is refused by {@link #build()}
     * @return this builder
     */
    public Builder password(String password) {
      if (password == null) {
        properties.remove("password");
        values.remove(SourceOptions.PASSWORD);
      } else {
        properties.setProperty("password", password);
        values.put(SourceOptions.PASSWORD, password);
      }
      return this;
    }

    /**
     * @param name a pgjdbc connection property (e.g. {@code sslmode})
     * @param value its value
     * @return this builder
     */
    public Builder connectionProperty(String name, String value) {
      properties.setProperty(Objects.requireNonNull(name), Objects.requireNonNull(value));
      return this;
    }

    /**
     * @param slot the logical replication slot; {@code [a-z0-9_]{1,63}}; required
     * @return this builder
     * @throws CdcConfigurationException if the name is not a valid slot name
     */
    public Builder slot(String slot) {
      return set(SourceOptions.SLOT, SlotNames.requireValid(slot));
    }

    /**
     * @param publication the publication whose tables are streamed; required. Any identifier of 1
     *     to 63 characters without single quotes or NUL
     * @return this builder
     * @throws CdcConfigurationException if the name is empty, too long, or holds {@code '} or NUL
     */
    public Builder publication(String publication) {
      if (publication == null) {
        throw new CdcConfigurationException(
            "invalid publication name null: 1 to 63 characters, no single quote or NUL");
      }
      return set(SourceOptions.PUBLICATION, publication);
    }

    /**
     * @param store where acknowledged positions are kept; required. The caller closes it after the
     *     source stopped.
     * @return this builder
     */
    public Builder checkpointStore(CdcCheckpointStore store) {
      this.store = Objects.requireNonNull(store, "store");
      return this;
    }

    /**
     * @param createSlot create the slot with the pgoutput plugin if it does not exist (default
     *     false: a missing slot is an error)
     * @return this builder
     */
    public Builder createSlot(boolean createSlot) {
      return set(SourceOptions.CREATE_SLOT, createSlot);
    }

    /**
     * @param createPublication create the publication if it does not exist (default false)
     * @param tables the tables it publishes, as {@code schema.table} (no dot: schema {@code
     *     public}); none means FOR ALL TABLES, which needs a superuser
     * @return this builder
     */
    public Builder createPublication(boolean createPublication, String... tables) {
      set(SourceOptions.PUBLICATION_TABLES, List.of(tables));
      return set(SourceOptions.CREATE_PUBLICATION, createPublication);
    }

    /**
     * @param events how many events the hand-off between the reading thread and the handler holds
     *     (default 1024)
     * @return this builder
     * @throws IllegalArgumentException if less than 1
     */
    public Builder handoffCapacity(int events) {
      return setOrIllegal(SourceOptions.HANDOFF_CAPACITY, events);
    }

    /**
     * Sets how many threads call the handler and which events they keep in stream order. With more
     * than one thread, the events of one ordering unit are handled in stream order, one at a time;
     * different units in parallel. Each thread acknowledges as one thread does; the watermark and
     * the slot still move over the contiguous prefix of acknowledged transactions only, so a crash
     * loses nothing whatever the threads had finished. A {@code TRUNCATE} and a logical decoding
     * message are handled alone, after every earlier event (docs/library.md, "Parallel handlers").
     *
     * @param threads the handler threads, 1 (the default: every event in stream order, on one
     *     thread) to 1024
     * @param ordering the ordering unit with more than one thread, not null ({@link
     *     HandlerOrdering#KEY} by default)
     * @return this builder
     * @throws IllegalArgumentException if {@code threads} is outside [1, 1024]
     * @throws NullPointerException if {@code ordering} is null
     */
    public Builder handlerThreads(int threads, HandlerOrdering ordering) {
      setOrIllegal(SourceOptions.HANDLER_THREADS, threads);
      return set(SourceOptions.HANDLER_ORDERING, Objects.requireNonNull(ordering, "ordering"));
    }

    /**
     * Sets how many threads call the handler, keeping each row's events in stream order ({@link
     * #handlerThreads(int, HandlerOrdering)} with {@link HandlerOrdering#KEY}).
     *
     * @param threads the handler threads, 1 (the default) to 1024
     * @return this builder
     * @throws IllegalArgumentException if {@code threads} is outside [1, 1024]
     */
    public Builder handlerThreads(int threads) {
      return setOrIllegal(SourceOptions.HANDLER_THREADS, threads);
    }

    /**
     * @param interval the longest time between two Standby Status Updates (default 1 s: on an idle
     *     connection the update is also what notices a server that went away, since pgjdbc's
     *     non-blocking read does not report the socket's end; keep it well below the server's
     *     {@code wal_sender_timeout} (default 60 s)
     * @return this builder
     * @throws IllegalArgumentException if not positive
     */
    public Builder statusInterval(Duration interval) {
      return setOrIllegal(
          SourceOptions.STATUS_INTERVAL, Objects.requireNonNull(interval, "interval"));
    }

    /**
     * @param timeout how long {@link PgCdcSource#stop()} waits for the handler to finish its
     *     current event (default 30 s)
     * @return this builder
     */
    public Builder stopTimeout(Duration timeout) {
      return set(SourceOptions.STOP_TIMEOUT, Objects.requireNonNull(timeout, "timeout"));
    }

    /**
     * @param trust when the slot's {@code confirmed_flush_lsn} is after the watermark in the
     *     checkpoint store (someone advanced the slot, or dropped and recreated it, while this
     *     consumer was down), resume at the slot's position, losing the changes in between, instead
     *     of failing {@link PgCdcSource#start} with a {@link io.datum.cdc.CdcReplicationException}
     *     (default false)
     * @return this builder
     */
    public Builder trustSlotPosition(boolean trust) {
      return set(SourceOptions.TRUST_SLOT_POSITION, trust);
    }

    /**
     * Every checkpoint names the cluster it was written for (system identifier, timeline and
     * database, from {@code IDENTIFY_SYSTEM}); at start and at every reconnect the source compares
     * the server with it and fails with a {@link io.datum.cdc.CdcReplicationException} ({@code
     * CLUSTER_MISMATCH} or {@code TIMELINE_DIVERGED}) when the positions would not mean the same
     * changes: another system identifier or database, an earlier timeline, or a timeline that does
     * not descend from the stored one or left it before the stored watermark. A later timeline that
     * continues the stored one (a promoted standby) is accepted.
     *
     * @param allow accept any such server, logging the mismatch at WARN, and name it in later
     *     checkpoints (for a slot that really moved, such as {@code pg_upgrade} with its slots;
     *     default false)
     * @return this builder
     */
    public Builder allowClusterChange(boolean allow) {
      return set(SourceOptions.ALLOW_CLUSTER_CHANGE, allow);
    }

    /**
     * Every checkpoint names the publication it was streamed with; a start (or reconnect) with
     * another publication and a stored watermark fails with a {@link
     * io.datum.cdc.CdcReplicationException} ({@code PUBLICATION_CHANGED}): the slot's position
     * moved over the changes the stored publication filtered out, so the new one would never
     * deliver those of its tables (adding tables to the same publication is no change).
     *
     * @param allow accept another publication, logging it at WARN, and name it in later checkpoints
     *     (default false)
     * @return this builder
     */
    public Builder allowPublicationChange(boolean allow) {
      return set(SourceOptions.ALLOW_PUBLICATION_CHANGE, allow);
    }

    /**
     * Makes the slot a failover slot (PostgreSQL 17+), one that a physical standby with {@code
     * sync_replication_slots = on} keeps a copy of, so that after the standby's promotion the
     * source resumes there without losing or repeating a change (PostgreSQL docs, 47.2.3 "Logical
     * Replication Failover"). When the source creates the slot ({@link #createSlot}), it sends
     * {@code failover} in the creating command itself ({@code pg_create_logical_replication_slot(
     * name, 'pgoutput', failover => true)}); an existing slot must have {@code
     * pg_replication_slots.failover} true, or {@link PgCdcSource#start} fails with a {@link
     * io.datum.cdc.CdcReplicationException} ({@code SLOT_INCOMPATIBLE}) saying how to make it one:
     * a slot that silently is not one would be found out only at the failover, when it is too late.
     * A primary whose {@code synchronized_standby_slots} is empty is logged at WARN: without it the
     * source may acknowledge changes the standby has not received yet, and after a promotion the
     * timeline check refuses to resume ({@code TIMELINE_DIVERGED}).
     *
     * <p>Without failover slots a promoted standby has no slot, and the source fails with {@code
     * SLOT_MISSING} naming the promotion; it never creates a new slot there, which would skip the
     * changes in between.
     *
     * <p>On PostgreSQL 16 and older, which have no failover slots, {@code start} fails with a
     * {@link CdcConfigurationException} naming {@code failoverSlot} and the server's {@code
     * server_version_num}.
     *
     * @param failover create and require a failover slot (default false)
     * @return this builder
     */
    public Builder failoverSlot(boolean failover) {
      return set(SourceOptions.FAILOVER_SLOT, failover);
    }

    /**
     * Reconnects after a connection loss (walsender terminated, server restart, network cut)
     * instead of failing: waits with exponential backoff and jitter (each wait between half and all
     * of the current backoff, which doubles up to {@code maxBackoff}), opens a new replication
     * connection and resumes at the durable watermark. Events delivered but not acknowledged before
     * the loss are delivered again, with {@link io.datum.cdc.event.TransactionInfo#redelivered()}
     * true. Failures retrying cannot fix (slot or publication dropped, permission denied,
     * authentication failed, WAL removed) still stop the source at once. Only losses after {@link
     * PgCdcSource#start} returned are retried; {@code start} itself fails at once. Default: {@code
     * Integer.MAX_VALUE} attempts (unlimited), 200 ms initial and 30 s largest backoff; every
     * attempt is logged (WARN for the loss, DEBUG per attempt) and counted in {@link
     * PgCdcSource#reconnects()}.
     *
     * @param attempts connection attempts per loss before the source fails; 0 disables reconnecting
     *     (a lost connection then completes the start future exceptionally with a {@link
     *     io.datum.cdc.CdcConnectionException})
     * @param initialBackoff the backoff before the first attempt, positive
     * @param maxBackoff the largest backoff, at least {@code initialBackoff}
     * @return this builder
     * @throws IllegalArgumentException if an argument is out of range
     */
    public Builder reconnect(int attempts, Duration initialBackoff, Duration maxBackoff) {
      if (attempts < 0
          || initialBackoff.isNegative()
          || initialBackoff.isZero()
          || maxBackoff.compareTo(initialBackoff) < 0) {
        throw new IllegalArgumentException(
            "reconnect("
                + attempts
                + ", "
                + initialBackoff
                + ", "
                + maxBackoff
                + "): attempts >= 0, 0 < initialBackoff <= maxBackoff");
      }
      setOrIllegal(SourceOptions.RECONNECT_ATTEMPTS, attempts);
      setOrIllegal(SourceOptions.RECONNECT_INITIAL_BACKOFF, initialBackoff);
      return setOrIllegal(SourceOptions.RECONNECT_MAX_BACKOFF, maxBackoff);
    }

    /**
     * @param durability when an acknowledgement is stored (default {@link
     *     AcknowledgementDurability#EVENT}: no event whose {@code acknowledge()} returned is
     *     delivered again after a crash; {@link AcknowledgementDurability#TRANSACTION} trades that
     *     for one store write per transaction instead of one per acknowledging call)
     * @return this builder
     */
    public Builder acknowledgementDurability(AcknowledgementDurability durability) {
      return set(
          SourceOptions.ACKNOWLEDGEMENT_DURABILITY,
          Objects.requireNonNull(durability, "durability"));
    }

    /**
     * Sets what happens to a change one of whose column values cannot be decoded (a type dropped
     * from the catalog before the change was read and not decodable from the stream alone, an
     * extension type in binary mode, a value the decoders reject): see {@link DecodeErrorPolicy}. A
     * malformed pgoutput message always stops the source, whatever the policy.
     *
     * @param policy {@link DecodeErrorPolicy#STOP}, {@link DecodeErrorPolicy#RAW} (the default) or
     *     {@link DecodeErrorPolicy#SKIP}
     * @return this builder
     * @throws NullPointerException if {@code policy} is null
     */
    public Builder onDecodeError(DecodeErrorPolicy policy) {
      return set(SourceOptions.ON_DECODE_ERROR, Objects.requireNonNull(policy, "policy"));
    }

    /**
     * When to copy the rows that already exist, as {@link io.datum.cdc.event.ReadEvent}s, besides
     * streaming changes. Default {@link SnapshotMode#NEVER}. {@link SnapshotMode#INITIAL} or {@link
     * SnapshotMode#INITIAL_ONLY} may be combined with {@link SnapshotMode#ON_REQUEST}.
     *
     * @param modes one or more modes, not null
     * @return this builder
     * @throws CdcConfigurationException if no mode is given, NEVER is combined with another, or
     *     INITIAL_ONLY with INITIAL or ON_REQUEST
     */
    public Builder snapshot(SnapshotMode... modes) {
      Objects.requireNonNull(modes, "modes");
      if (modes.length == 0) {
        throw new CdcConfigurationException("snapshot(...) needs at least one SnapshotMode");
      }
      EnumSet<SnapshotMode> set = EnumSet.noneOf(SnapshotMode.class);
      for (SnapshotMode mode : modes) {
        set.add(Objects.requireNonNull(mode, "mode"));
      }
      return set(SourceOptions.SNAPSHOT_MODES, set);
    }

    /**
     * @param connections how many connections read snapshot chunks at once (each a PostgreSQL
     *     backend holding the snapshot); default 1
     * @return this builder
     * @throws CdcConfigurationException if not in [1, 64]
     */
    public Builder snapshotParallelism(int connections) {
      return set(SourceOptions.SNAPSHOT_PARALLELISM, connections);
    }

    /**
     * @param rows rows per snapshot chunk: the unit of progress kept in the checkpoint store and,
     *     while streaming, of one chunk query; default 8192. A chunk also ends early once its rows
     *     take a quarter of the {@link #memoryBudget} divided by the parallelism
     * @return this builder
     * @throws CdcConfigurationException if not in [1, 1,000,000]
     */
    public Builder snapshotChunkRows(int rows) {
      return set(SourceOptions.SNAPSHOT_CHUNK_ROWS, rows);
    }

    /**
     * @param messages deliver logical decoding messages written with {@code
     *     pg_logical_emit_message} as {@link io.datum.cdc.event.MessageEvent}s (pgoutput option
     *     {@code messages}, PostgreSQL 14 and later; {@link PgCdcSource#start} fails with a {@link
     *     CdcConfigurationException} on an older server). Default false. With {@link #streaming
     *     streaming}, a transactional message written in a savepoint that is later rolled back is
     *     still delivered when PostgreSQL streamed the transaction: pgoutput tags a streamed
     *     message with the top-level transaction's xid, not the subtransaction's (pgoutput.c,
     *     pgoutput_message), so the subtransaction's Stream Abort does not cover it (PostgreSQL 14
     *     to 18)
     * @return this builder
     */
    public Builder messages(boolean messages) {
      return set(SourceOptions.MESSAGES, messages);
    }

    /**
     * @param version the pgoutput protocol version to ask for, 1 to 4; default 0: the highest the
     *     server supports (1 before PostgreSQL 14, 2 on 14, 3 on 15, 4 on 16 and later). {@link
     *     PgCdcSource#start} fails with a {@link CdcConfigurationException} if the server is too
     *     old for the version, or the version too old for a requested option
     * @return this builder
     * @throws IllegalArgumentException if not 0 to 4
     */
    public Builder protocolVersion(int version) {
      return setOrIllegal(SourceOptions.PROTOCOL_VERSION, version);
    }

    /**
     * @param mode whether PostgreSQL streams large in-progress transactions (default {@link
     *     StreamingMode#OFF}); {@code ON} needs PostgreSQL 14, {@code PARALLEL} 16. Streamed
     *     transactions are buffered and delivered at their commit like any other
     * @return this builder
     */
    public Builder streaming(StreamingMode mode) {
      return set(SourceOptions.STREAMING, Objects.requireNonNull(mode, "mode"));
    }

    /**
     * @param twoPhase decode prepared transactions at PREPARE TRANSACTION (pgoutput option {@code
     *     two_phase}, PostgreSQL 15+; enabling it marks the slot two-phase for good). Their events
     *     are still delivered only at COMMIT PREPARED, never after ROLLBACK PREPARED; their offsets
     *     carry the prepare record's end LSN as {@code txEndLsn}, and the watermark does not pass a
     *     prepared transaction until it is committed and acknowledged or rolled back (the slot then
     *     retains WAL while a transaction stays prepared). Default false: a prepared transaction
     *     arrives as an ordinary one at COMMIT PREPARED
     * @return this builder
     */
    public Builder twoPhase(boolean twoPhase) {
      return set(SourceOptions.TWO_PHASE, twoPhase);
    }

    /**
     * @param binary ask for column values in binary format (pgoutput option {@code binary},
     *     PostgreSQL 14+); values decode to the same Java objects as in text format. PostgreSQL
     *     sends every type that has a send function in binary, user-defined ones included ({@code
     *     logicalrep_write_tuple}, proto.c), and the stream does not say what kind a user type is,
     *     so in binary mode the source also reads {@code pg_type} over its admin connection: at
     *     start for the column types of the published tables, and once for each new type a Relation
     *     message names (a type created while streaming); never per row. Enums, domains (as their
     *     base type), composites, ranges and multiranges (of any subtype decoded here), and arrays
     *     of all of these decode as in text mode: enum labels, the base type's value, and the
     *     output function's text for the others. {@code timestamptz} inside a range, composite or
     *     array prints in the replication session's TimeZone with the JVM's time zone rules. What
     *     cannot be decoded in binary mode fails with a {@link io.datum.cdc.CdcDecodingException}
     *     naming the column, table and type: base types of extensions (hstore, citext, PostGIS ...;
     *     their binary format is the extension's own) and the few builtins without a binary decoder
     *     ({@code regclass} and the other {@code reg*} types, {@code tsquery}, ...); stream tables
     *     holding such types in text mode. Default false
     * @return this builder
     */
    public Builder binary(boolean binary) {
      return set(SourceOptions.BINARY, binary);
    }

    /**
     * @param filter which transactions to receive by replication origin (pgoutput option {@code
     *     origin}, PostgreSQL 16+), or null not to send the option (default; the server then sends
     *     every transaction)
     * @return this builder
     */
    public Builder origin(OriginFilter filter) {
      return set(SourceOptions.ORIGIN, filter);
    }

    /**
     * @param bytes how many bytes of undecoded changes of transactions not yet committed (or not
     *     yet delivered) are held in memory, counted as message size plus 64 bytes per change; a
     *     transaction that would exceed it goes to a temporary spill file and is delivered from
     *     there. Default 64 MiB. Heap use is bounded by this plus the hand-off's events
     * @return this builder
     * @throws IllegalArgumentException if less than 1
     */
    public Builder memoryBudget(long bytes) {
      return setOrIllegal(SourceOptions.MEMORY_BUDGET, bytes);
    }

    /**
     * @param directory where spill files of large transactions are created (default {@code
     *     java.io.tmpdir}); each is deleted once its transaction is delivered or aborted, or the
     *     connection closes
     * @return this builder
     */
    public Builder spillDirectory(Path directory) {
      return set(SourceOptions.SPILL_DIRECTORY, Objects.requireNonNull(directory, "directory"));
    }

    /**
     * @param wait how long {@link PgCdcSource#start} waits for the slot when it is active for
     *     another process (checked every 200 ms), before failing with a {@link
     *     io.datum.cdc.CdcReplicationException} naming that process; default zero: fail at once
     * @return this builder
     * @throws IllegalArgumentException if negative
     */
    public Builder waitForSlot(Duration wait) {
      return setOrIllegal(SourceOptions.WAIT_FOR_SLOT, Objects.requireNonNull(wait, "wait"));
    }

    /**
     * @param timeout how long creating the slot ({@link #createSlot}) may wait for the transactions
     *     and prepared transactions open when it began (PostgreSQL builds the slot's snapshot only
     *     once they ended), before {@link PgCdcSource#start} fails with a {@link
     *     io.datum.cdc.CdcReplicationException} naming them (pid, xid, start, state and query from
     *     {@code pg_stat_activity}; gid from {@code pg_prepared_xacts}); default zero: wait as long
     *     as they stay open
     * @return this builder
     * @throws IllegalArgumentException if negative
     */
    public Builder slotCreationTimeout(Duration timeout) {
      return setOrIllegal(
          SourceOptions.SLOT_CREATION_TIMEOUT, Objects.requireNonNull(timeout, "timeout"));
    }

    /**
     * Caps what the source confirms to PostgreSQL, for an application whose checkpoint store is
     * written before the events' downstream has made them durable: a Kafka Connect task, whose
     * checkpoints become durable only when the worker commits its offsets. The slot's {@code
     * confirmed_flush_lsn} (what the walsender may discard WAL up to; PostgreSQL docs, 55.4
     * Streaming Replication Protocol, "Standby status update", flush position) then moves to the
     * smaller of the stored watermark and this limit.
     *
     * @param limit asked at every status update, on the replication thread: must be fast,
     *     non-blocking and thread-safe, and return the highest LSN the slot may be confirmed to
     *     (never null); null (the default) for no limit beyond the stored watermark
     * @return this builder
     */
    public Builder confirmedFlushLimit(Supplier<PgLsn> limit) {
      this.confirmedFlushLimit = limit;
      return this;
    }

    /**
     * Sets an option by its declaration, as the typed setters do; what the option does, its default
     * and its checks are in {@link SourceOptions}.
     *
     * @param option the option, not null
     * @param value its value; null only for an option without default ({@link
     *     SourceOptions#ORIGIN}: not sent; {@link SourceOptions#PASSWORD}: none)
     * @param <T> the option's type
     * @return this builder
     * @throws CdcConfigurationException naming the option if the value fails its checks
     */
    public <T> Builder option(SourceOption<T> option, T value) {
      Objects.requireNonNull(option, "option");
      if (option == SourceOptions.JDBC_URL) {
        return jdbcUrl((String) value);
      }
      if (option == SourceOptions.USER) {
        return user((String) value);
      }
      if (option == SourceOptions.PASSWORD) {
        return password((String) value);
      }
      return set(option, value);
    }

    /**
     * Sets an option by name from text, as a property file, a command line or a connector's
     * settings give it ({@link SourceOption#parse} says the forms: {@code 30s}, {@code 64m}, {@code
     * initial,on-request}, ...).
     *
     * @param name the option's kebab-case name ({@code wait-for-slot}), as in {@link SourceOptions}
     * @param value its value as text, not null
     * @return this builder
     * @throws CdcConfigurationException if there is no such option (listing the options) or the
     *     value does not parse or fails its checks (naming the option and the expected form)
     */
    public Builder option(String name, String value) {
      if (name == null || value == null) {
        throw new CdcConfigurationException(
            "option(name, value) needs both, was option("
                + (name == null ? "null" : '"' + name + '"')
                + ", "
                + (value == null ? "null" : "...")
                + ")");
      }
      return parsed(SourceOptions.named(name), value);
    }

    private <T> Builder parsed(SourceOption<T> option, String value) {
      return option(option, option.parse(value));
    }

    private <T> Builder set(SourceOption<T> option, T value) {
      values.put(option, option.validate(value));
      return this;
    }

    /** Sets an option whose setter threw IllegalArgumentException before the declarations. */
    private <T> Builder setOrIllegal(SourceOption<T> option, T value) {
      try {
        return set(option, value);
      } catch (CdcConfigurationException e) {
        throw new IllegalArgumentException(e.getMessage(), e);
      }
    }

    /**
     * @return a source, not started
     * @throws CdcConfigurationException if the JDBC URL, slot, publication or store is missing, or
     *     the JDBC URL's user or password parameter differs from the one given to {@link #user} or
     *     {@link #password}, or options disagree ({@link SourceOptions#RECONNECT_INITIAL_BACKOFF}
     *     after {@link SourceOptions#RECONNECT_MAX_BACKOFF}, given with {@link #option}), or an
     *     option is given that would be ignored without another (publication tables without
     *     creating the publication; snapshot parallelism or chunk rows without a snapshot mode)
     */
    public PgCdcSource build() {
      List<String> missing = new ArrayList<>();
      for (SourceOption<?> o :
          List.of(SourceOptions.JDBC_URL, SourceOptions.SLOT, SourceOptions.PUBLICATION)) {
        if (values.get(o) == null) {
          missing.add(o == SourceOptions.JDBC_URL ? "jdbcUrl" : o.name());
        }
      }
      if (store == null) {
        missing.add("checkpointStore");
      }
      if (!missing.isEmpty()) {
        throw new CdcConfigurationException("PgCdcSource needs " + String.join(", ", missing));
      }
      refuseIgnored();
      // pgjdbc's own parser: parameters decoded as the driver reads them
      for (SourceOption<?> url : List.of(SourceOptions.JDBC_URL, SourceOptions.PRIMARY_JDBC_URL)) {
        if (values.get(url) != null) {
          refuseSecondCredentials(url);
        }
      }
      return new PgCdcSource(
          SourceConfiguration.of(values, properties, store, confirmedFlushLimit));
    }

    /**
     * Refuses a user or password in a URL that differs from the one given separately, or (the
     * primary's URL) from the one the JDBC URL carries: both URLs connect as one role.
     */
    private void refuseSecondCredentials(SourceOption<?> url) {
      Properties inUrl = Driver.parseURL((String) values.get(url), null);
      Properties first =
          url == SourceOptions.JDBC_URL
              ? new Properties()
              : Driver.parseURL((String) values.get(SourceOptions.JDBC_URL), null);
      for (String name : List.of("user", "password")) {
        String given = inUrl.getProperty(name);
        String other =
            properties.containsKey(name) ? properties.getProperty(name) : first.getProperty(name);
        if (given != null && other != null && !given.equals(other)) {
          // pgjdbc lets the URL's parameter win: refuse instead of silently ignoring the setter
          throw new CdcConfigurationException(
              "the "
                  + (url == SourceOptions.JDBC_URL ? "JDBC URL" : "primary's JDBC URL")
                  + "'s "
                  + name
                  + " parameter differs from the "
                  + name
                  + " given separately (the builder's "
                  + name
                  + "(...), pgcdc --"
                  + (name.equals("user") ? "user" : "password-env")
                  + (url == SourceOptions.JDBC_URL ? "" : ", or the JDBC URL's")
                  + "); give it once"
                  + (url == SourceOptions.JDBC_URL ? "" : ": both URLs connect as one role"));
        }
      }
    }

    /**
     * Refuses options that would be ignored without the option they apply with (set to other than
     * their default): the tables of a publication the source does not create, the snapshot settings
     * of a source that never snapshots.
     */
    private void refuseIgnored() {
      List<String> ignored = new ArrayList<>();
      if (changed(SourceOptions.PUBLICATION_TABLES)
          && !Boolean.TRUE.equals(values.get(SourceOptions.CREATE_PUBLICATION))) {
        ignored.add(
            "publication-tables (the tables of createPublication(true, tables...), pgcdc"
                + " --tables) applies only with create-publication true (pgcdc"
                + " --create-publication): an existing publication is never changed");
      }
      @SuppressWarnings("unchecked")
      Set<SnapshotMode> modes = (Set<SnapshotMode>) values.get(SourceOptions.SNAPSHOT_MODES);
      if (modes == null || modes.isEmpty() || modes.equals(Set.of(SnapshotMode.NEVER))) {
        for (SourceOption<?> o :
            List.of(SourceOptions.SNAPSHOT_PARALLELISM, SourceOptions.SNAPSHOT_CHUNK_ROWS)) {
          if (changed(o)) {
            ignored.add(
                o.name()
                    + " applies only with a snapshot mode (snapshot(SnapshotMode.INITIAL or"
                    + " ON_REQUEST), pgcdc --snapshot MODE); the source never snapshots");
          }
        }
      }
      if (!ignored.isEmpty()) {
        throw new CdcConfigurationException(
            String.join("; ", ignored) + " (it would be ignored): set both, or leave it out");
      }
    }

    private boolean changed(SourceOption<?> o) {
      Object v = values.get(o);
      return v != null && !v.equals(o.defaultValue());
    }
  }
}

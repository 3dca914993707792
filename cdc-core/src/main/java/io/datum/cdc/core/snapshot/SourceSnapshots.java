package io.datum.cdc.core.snapshot;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.core.config.SourceConfiguration;
import io.datum.cdc.core.config.SourceOptions;
import io.datum.cdc.core.delivery.Merge;
import io.datum.cdc.core.delivery.PeerProducer;
import io.datum.cdc.core.errors.PgErrors;
import io.datum.cdc.core.feedback.SnapshotAcknowledgements;
import io.datum.cdc.core.feedback.SourceCheckpointHandle;
import io.datum.cdc.core.relation.ValueFailure;
import io.datum.cdc.core.server.ServerRole;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.MessageEvent;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.function.Consumer;
import org.postgresql.PGProperty;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A source's snapshots: the settings, the acknowledgement tracker, the reader, the initial snapshot
 * at a new slot's exported snapshot and the online snapshots while streaming. The stream's peer
 * producer: the replication thread drives it through {@link PeerProducer} only. Lives as long as
 * the source, across reconnects.
 */
public final class SourceSnapshots implements PeerProducer, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(SourceSnapshots.class);

  private final SourceConfiguration config;
  private final SnapshotSettings settings;
  private final SnapshotAcknowledgements tracker;
  private final SourceCheckpointHandle handle;
  private final TableReader reader;

  /** Whether the source asked for logical decoding messages (else they are the snapshots' only). */
  private final boolean messages;

  private volatile OnlineSnapshots online;

  /** The server's role: on a hot standby the watermarks are written on the primary. */
  private final ServerRole role;

  /**
   * @param config the source's settings
   * @param tracker the source's snapshot acknowledgements
   * @param handle the source's checkpoint handle (stores plans)
   * @param role the server's role: where watermarks are written
   */
  public SourceSnapshots(
      SourceConfiguration config,
      SnapshotAcknowledgements tracker,
      SourceCheckpointHandle handle,
      ServerRole role) {
    this.role = role;
    this.config = config;
    this.settings = SnapshotSettings.of(config);
    this.messages = config.get(SourceOptions.MESSAGES);
    this.tracker = tracker;
    this.handle = handle;
    this.reader =
        new TableReader(
            ValueFailure.Policy.valueOf(config.get(SourceOptions.ON_DECODE_ERROR).name()));
  }

  /** Returns the tracker. */
  public SnapshotAcknowledgements tracker() {
    return tracker;
  }

  /** Bytes of row text per chunk: a quarter of the memory budget shared by the readers. */
  private long chunkBytes() {
    return Math.max(
        1L << 20, config.get(SourceOptions.MEMORY_BUDGET) / (4L * settings.parallelism()));
  }

  @Override
  public boolean needsMessages() {
    return settings.needsMessages();
  }

  /**
   * {@inheritDoc}
   *
   * @throws CdcConfigurationException if snapshots are enabled and the server is before PostgreSQL
   *     14 (pgoutput's {@code messages} option, which carries the watermarks, came in 14), or is a
   *     hot standby and the source has no primary to write the watermarks on
   */
  @Override
  public void checkServer(int serverVersionNum) {
    if (settings.enabled() && serverVersionNum < 140000) {
      throw new CdcConfigurationException(
          "snapshots (snapshot(...), pgcdc --snapshot) need PostgreSQL 14 or later (pgoutput's"
              + " messages option carries their watermarks); the server is "
              + serverVersionNum);
    }
    if (settings.enabled() && role.standby() && config.get(SourceOptions.TWO_PHASE)) {
      // a prepared transaction's events carry its PREPARE's position, but a standby makes it
      // visible only when it replays COMMIT PREPARED: the chunk's visibility by replay position
      // (Visibility.ofReplay) cannot tell
      throw new CdcConfigurationException(
          "snapshots (pgcdc --snapshot) with two-phase decoding (twoPhase(true), pgcdc"
              + " --two-phase) are not supported on a hot standby: a chunk read there cannot tell"
              + " whether a prepared transaction had committed; leave one of them out, or stream"
              + " from the primary");
    }
    if (settings.enabled()) {
      // even an initial snapshot at a new slot's exported snapshot: one interrupted goes on online
      String mode =
          String.join(
              ",",
              config.get(SourceOptions.SNAPSHOT_MODES).stream()
                  .map(io.datum.cdc.core.config.SnapshotMode::cliName)
                  .toList());
      role.requireWrites(
          "snapshot mode " + mode + " (pgcdc --snapshot " + mode + ")",
          "snapshots write their watermarks, logical decoding messages, there: on-request and"
              + " online ones always, an initial one when a crash interrupts it and it goes on"
              + " online");
    }
  }

  /** Returns true with an initial mode: a new slot's exported snapshot is the initial snapshot. */
  @Override
  public boolean wantsExportedSnapshot() {
    return settings.initial();
  }

  /**
   * {@inheritDoc}
   *
   * <p>With snapshot mode never, refuses a store that holds a snapshot in progress. Else the reader
   * decodes as the stream of this connection does (its types, the walsender session's TimeZone). At
   * the source's start on an existing slot, with an initial mode and no completed initial snapshot
   * stored, plans the initial snapshot online ({@link #planInitialOnline}).
   *
   * @throws CdcConfigurationException with snapshot mode never if the store holds a snapshot in
   *     progress
   */
  @Override
  public void opened(Session session) {
    if (!settings.enabled()) {
      refuseUnfinished();
      return;
    }
    reader.configure(session.types(), session.timeZone());
    if (online == null) {
      online =
          new OnlineSnapshots(
              config.slot(),
              config.publication(),
              tracker,
              connections,
              reader,
              settings.chunkRows(),
              chunkBytes(),
              session.serverVersionNum(),
              config.get(SourceOptions.TWO_PHASE),
              role);
    }
    if (!session.reconnect() && !session.exportedSnapshot()) {
      planInitialOnline(session.start());
    }
  }

  /**
   * With snapshot mode never, refuses a store that holds a snapshot in progress: nothing would read
   * the rest, and an initial snapshot's hold would keep the slot (and the WAL after it) for ever.
   *
   * @throws CdcConfigurationException naming the tables left and the mode that finishes them
   */
  private void refuseUnfinished() {
    if (!tracker.inProgress()) {
      return;
    }
    PgLsn hold = tracker.holdLsn();
    throw new CdcConfigurationException(
        "the checkpoint store of slot \""
            + config.slot()
            + "\" holds a snapshot in progress ("
            + tracker.tablesInProgress()
            + " not read to the end) and the source was built with snapshot mode never, which"
            + " would never read the rest"
            + (hold == null
                ? ""
                : " and would hold the slot at the initial snapshot's consistent point "
                    + hold
                    + " for ever")
            + "; build it with "
            + (hold == null
                ? "snapshot(SnapshotMode.ON_REQUEST) (pgcdc --snapshot on-request)"
                : "snapshot(SnapshotMode.INITIAL) (pgcdc --snapshot initial)")
            + " to finish that snapshot, then with the mode you want");
  }

  /** The connections the readers open. */
  private final OnlineSnapshots.Connections connections =
      new OnlineSnapshots.Connections() {
        @Override
        public Connection open() throws SQLException {
          return plainConnection();
        }

        @Override
        public Connection openReplication() throws SQLException {
          Properties p = new Properties();
          p.putAll(config.properties());
          PGProperty.REPLICATION.set(p, "database");
          PGProperty.PREFER_QUERY_MODE.set(p, "simple");
          PGProperty.ASSUME_MIN_SERVER_VERSION.set(p, "10");
          PGProperty.APPLICATION_NAME.set(p, "datum-cdc snapshot slot " + config.slot());
          return DriverManager.getConnection(config.jdbcUrl(), p);
        }
      };

  /** Opens a plain connection for reading, named for pg_stat_activity. */
  public Connection plainConnection() throws SQLException {
    Properties p = new Properties();
    p.putAll(config.properties());
    PGProperty.APPLICATION_NAME.set(p, "datum-cdc snapshot " + config.slot());
    return DriverManager.getConnection(config.jdbcUrl(), p);
  }

  /**
   * With an initial mode at an existing slot whose store holds no completed initial snapshot (and
   * none in progress): plans one over every published table, read online while streaming, and holds
   * the slot at the stream's start position until it is acknowledged.
   *
   * @param watermark the position streaming starts at
   */
  private void planInitialOnline(PgLsn watermark) {
    if (!settings.initial() || tracker.initialCompleted() || initialInProgress()) {
      return;
    }
    List<TableId> ids = new ArrayList<>();
    List<SnapshotTable> published;
    try (Connection c = plainConnection()) {
      TableReader.prepareSession(c, reader.timeZone());
      // pg_publication_tables opens each published table (PostgreSQL 16+: its columns), so one
      // that another session holds ACCESS EXCLUSIVE would hold the start for as long
      try (Statement st = c.createStatement()) {
        st.execute("SET lock_timeout = '" + 2 * REQUEST_LOCK_TIMEOUT_MILLIS + "ms'");
      }
      try {
        published = reader.publishedTables(c, config.publication());
      } catch (SQLException e) {
        if ("55P03".equals(e.getSQLState())) {
          throw new CdcException(
              "cannot list the tables of publication \""
                  + config.publication()
                  + "\" for the initial snapshot of slot \""
                  + config.slot()
                  + "\": another session holds a lock on one of them ("
                  + exclusiveLocks()
                  + "); start again once it is released",
              e);
        }
        throw e;
      }
      for (SnapshotTable t : published) {
        ids.add(t.table());
      }
    } catch (SQLException e) {
      throw PgErrors.map(
          "cannot list the tables of publication \""
              + config.publication()
              + "\" for the initial snapshot of slot \""
              + config.slot()
              + '"',
          e);
    }
    ids.sort(java.util.Comparator.comparing(TableId::toString));
    // PgLsn.ZERO cannot be held: hold at the smallest position, so the slot keeps its own
    tracker.startInitial(watermark.isZero() ? PgLsn.of(1) : watermark, ids);
    published.forEach(t -> tracker.estimate(t.table(), t.reltuples()));
    handle.persistNow();
    LOG.info(
        "slot {}: the store holds no completed initial snapshot; reading {} table(s) online while"
            + " streaming from {}",
        config.slot(),
        ids.size(),
        watermark);
  }

  private boolean initialInProgress() {
    for (SnapshotAcknowledgements.ReadTask t : tracker.readTasks()) {
      if (SnapshotAcknowledgements.INITIAL.equals(t.range().snapshotId())) {
        return true;
      }
    }
    return tracker.inProgress() && tracker.holdLsn() != null;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Runs the initial snapshot; with initial-only, the source ends once it is acknowledged and
   * stored.
   */
  @Override
  public boolean readExported(String snapshotName, PgLsn consistentPoint, Delivery delivery)
      throws InterruptedException {
    new InitialSnapshot(
            config.slot(),
            config.publication(),
            tracker,
            connections,
            reader,
            settings.parallelism(),
            settings.chunkRows(),
            chunkBytes())
        .run(snapshotName, consistentPoint, handle::persistNow, delivery);
    return !settings.stopAfterInitial();
  }

  /** Returns the online chunks read again so far. */
  public long chunksRetried() {
    OnlineSnapshots o = online;
    return o == null ? 0 : o.chunkCounts()[1];
  }

  /**
   * Returns what the snapshot in progress waits for while it reads no row, in words, or null: the
   * creation of a temporary slot for a table without a key (it waits for the transactions open when
   * it began), or the stream reaching that slot's position.
   */
  public String waiting() {
    OnlineSnapshots o = online;
    return o == null ? null : o.waiting();
  }

  /** Starts the online snapshot thread (if snapshots are enabled). */
  @Override
  public void streamStarted() {
    OnlineSnapshots o = online;
    if (o != null) {
      o.start();
    }
  }

  /**
   * {@inheritDoc}
   *
   * @return true with initial-only once a stored checkpoint records the initial snapshot as
   *     complete
   * @throws CdcException the online snapshot's failure, if it failed for good
   */
  @Override
  public boolean done() {
    OnlineSnapshots o = online;
    if (o != null && o.failure() != null) {
      throw o.failure();
    }
    if (settings.stopAfterInitial() && handle.storedInitialCompleted()) {
      if (!doneLogged) {
        doneLogged = true;
        LOG.info("slot {}: initial snapshot acknowledged and stored", config.slot());
      }
      return true;
    }
    return false;
  }

  /** Whether {@link #done()} logged that the initial-only snapshot is stored. */
  private boolean doneLogged;

  /**
   * Sees a stream event before it is handed off (the merge of stream and read rows): holds the
   * stream at the position a table without a key is read at until its reset and rows are released
   * ({@link OnlineSnapshots#gate}); takes out datum-cdc's own messages (online snapshot watermarks,
   * snapshot requests; a high watermark releases its chunk's rows, which then go before the next
   * stream event) and, when the source did not ask for logical decoding messages, every other
   * message (the stream carries them for the snapshots only); lets the online snapshot see every
   * other event (the rows a change supersedes).
   *
   * @param event the next stream event, not null
   * @param release takes the read rows to hand off before the next stream event
   * @return what to do with the event
   */
  @Override
  public Merge.Verdict observe(ChangeEvent event, Consumer<ChangeEvent> release)
      throws InterruptedException {
    OnlineSnapshots o = online;
    if (o != null && o.gate(event, release)) {
      return Merge.Verdict.HOLD;
    }
    if (o != null && o.consume(event, settings.onRequest(), release::accept)) {
      return Merge.Verdict.TAKE_OUT;
    }
    if (event instanceof MessageEvent && !messages) {
      return Merge.Verdict.TAKE_OUT;
    }
    if (o != null) {
      o.observe(event);
    }
    return Merge.Verdict.DELIVER;
  }

  /** The hand-off was dropped at a reconnect: chunks in flight are read again. */
  @Override
  public void connectionLost() {
    OnlineSnapshots o = online;
    if (o != null) {
      o.connectionLost();
    }
    tracker.resetInFlight();
  }

  /** The ACCESS EXCLUSIVE locks on tables of this database, as text for an error. */
  private String exclusiveLocks() {
    try (Connection c = plainConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT string_agg(format('%s by pid %s: %s', l.relation::regclass, l.pid,"
                    + " left(a.query, 80)), '; ') FROM pg_locks l"
                    + " JOIN pg_stat_activity a ON a.pid = l.pid"
                    + " WHERE l.granted AND l.locktype = 'relation'"
                    + " AND l.mode = 'AccessExclusiveLock' AND l.database ="
                    + " (SELECT oid FROM pg_database WHERE datname = current_database())")) {
      rs.next();
      String held = rs.getString(1);
      return held == null ? "released meanwhile" : held;
    } catch (SQLException e) {
      return "the holders cannot be read: " + e.getMessage();
    }
  }

  /** How long a snapshot request waits for a lock on a table's definition. */
  static final long REQUEST_LOCK_TIMEOUT_MILLIS = 5000;

  /**
   * The sessions holding a lock on {@code table}, as text for an error; "unknown" if unreadable.
   */
  private String lockHolders(TableId table) {
    try (Connection c = plainConnection()) {
      return SnapshotCatalog.lockHolders(c, table);
    } catch (SQLException e) {
      return "the holders cannot be read: " + e.getMessage();
    }
  }

  /**
   * Asks for an online snapshot of tables ({@code PgCdcSource.snapshot}): each must be published. A
   * table with a primary key or replica identity index is read in chunks between watermarks; one
   * without is read whole at a temporary slot's exported snapshot, after a reset ({@link
   * io.datum.cdc.event.TruncateEvent#isSnapshotReset()}).
   *
   * @param tables the tables
   * @return the snapshot's id
   * @throws CdcConfigurationException if snapshots are off (NEVER), a table is not published, or is
   *     being snapshotted already
   */
  public String request(List<TableId> tables) {
    if (!settings.enabled()) {
      throw new CdcConfigurationException(
          "the source of slot "
              + config.slot()
              + " was built with snapshot mode never; build it with snapshot(SnapshotMode.ON_REQUEST)"
              + " (or INITIAL) to snapshot tables while streaming");
    }
    OnlineSnapshots o = online;
    if (o == null) {
      throw new IllegalStateException("the source of slot " + config.slot() + " is not started");
    }
    String id;
    List<SnapshotTable> described = new ArrayList<>();
    try (Connection c = plainConnection()) {
      TableReader.prepareSession(c, reader.timeZone());
      // a table another session holds ACCESS EXCLUSIVE (ALTER TABLE, VACUUM FULL, an explicit
      // LOCK) would block the caller until it ends: give up after a while, naming the holder
      try (Statement st = c.createStatement()) {
        st.execute("SET lock_timeout = '" + REQUEST_LOCK_TIMEOUT_MILLIS + "ms'");
      }
      for (TableId t : tables) {
        try {
          described.add(reader.describe(c, config.publication(), t));
        } catch (SQLException e) {
          if ("55P03".equals(e.getSQLState())) {
            throw new CdcException(
                "cannot snapshot "
                    + t
                    + ": another session holds a lock on it that conflicts with reading its"
                    + " definition ("
                    + lockHolders(t)
                    + "); nothing was requested; ask again once that session ended",
                e);
          }
          throw e;
        }
      }
      id = "request-" + ServerRole.visiblePosition(c);
    } catch (SQLException e) {
      throw PgErrors.map(
          "cannot check the tables to snapshot for slot \"" + config.slot() + '"', e);
    }
    List<TableId> busy = new ArrayList<>();
    for (TableId t : tables) {
      if (tracker.tablesInProgress().contains(t)) {
        busy.add(t);
      }
    }
    if (!busy.isEmpty()) {
      throw new CdcConfigurationException(
          "a snapshot of " + busy + " is in progress already (slot " + config.slot() + ")");
    }
    o.request(id, tables);
    described.forEach(t -> tracker.estimate(t.table(), t.reltuples()));
    handle.persistNow();
    return id;
  }

  @Override
  public void close() {
    OnlineSnapshots o = online;
    if (o != null) {
      o.close();
    }
  }
}

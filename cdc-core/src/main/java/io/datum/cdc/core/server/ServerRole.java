package io.datum.cdc.core.server;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.core.config.SourceConfiguration;
import io.datum.cdc.core.config.SourceOptions;
import io.datum.cdc.core.errors.PgErrors;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.postgresql.PGProperty;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a source's server is a primary or a hot standby, and where the source writes: on a
 * primary, on it; on a standby (PostgreSQL 16+, which decodes on a standby), never on it but on the
 * primary that {@link SourceOptions#PRIMARY_JDBC_URL} names. The facts it builds on (PostgreSQL
 * docs, 47.2.3 and 9.28.6): a standby can host a logical slot and export its snapshot; creating one
 * waits until the standby replays a running-transactions record ({@code xl_running_xacts}) from the
 * primary, which {@code pg_log_standby_snapshot()} on the primary writes at once; {@code
 * pg_logical_emit_message}, {@code CREATE PUBLICATION} and every other write run on the primary
 * only, and reach the standby's stream once replayed there; a standby's WAL position is {@code
 * pg_last_wal_replay_lsn()}.
 *
 * <p>The role is read again at every connection ({@link #identify}): a standby promoted since is a
 * primary from then on, and the source writes on it.
 *
 * <p>Thread-safe: the role is a volatile read; each call opens its own connections.
 */
public final class ServerRole {

  private static final Logger LOG = LoggerFactory.getLogger(ServerRole.class);

  /** {@code server_version_num} from which a standby decodes (PostgreSQL 16 release notes). */
  public static final int STANDBY_DECODING_VERSION = 160000;

  /** How often a running-transactions record is asked for while a slot is created. */
  private static final long NUDGE_INTERVAL_MILLIS = 1_000;

  /** How long a slot creation on a standby without the primary waits before it says why. */
  private static final long SILENT_WAIT_MILLIS = 2_000;

  /**
   * Why a slot can no longer be used, as an SQL expression over {@code pg_replication_slots s}:
   * {@code invalidation_reason} (PostgreSQL 17+); on 16 {@code conflict} when {@code conflicting}
   * (a standby's slot in conflict with recovery), {@code wal_removed} when {@code wal_status} is
   * {@code lost}; null while usable. The columns are read through jsonb, absent ones giving null.
   */
  public static final String INVALIDATION_REASON_SQL =
      "coalesce(to_jsonb(s) ->> 'invalidation_reason',"
          + " CASE WHEN (to_jsonb(s) ->> 'conflicting')::boolean THEN 'conflict' END,"
          + " CASE WHEN to_jsonb(s) ->> 'wal_status' = 'lost' THEN 'wal_removed' END)";

  private final SourceConfiguration config;
  private volatile boolean standby;
  private volatile boolean identified;

  /**
   * @param config the source's settings: the JDBC URL, the primary's, the connection properties
   */
  public ServerRole(SourceConfiguration config) {
    this.config = config;
  }

  /**
   * Reads whether the server is a hot standby ({@code pg_is_in_recovery()}) and remembers it. On a
   * standby: refuses PostgreSQL before 16, and at start checks that the primary's URL (if given)
   * names a primary of the same database and cluster.
   *
   * @param connection an ordinary connection to the source's server; left open
   * @param serverVersionNum its {@code server_version_num}
   * @param atStart true at the source's start (the primary is checked), false at a reconnect (a
   *     primary down for a while does not stop a stream that needs no write)
   * @return true on a standby
   * @throws CdcConfigurationException if the standby runs PostgreSQL before 16, or the primary's
   *     URL names a standby, another database or another cluster
   * @throws SQLException if a query fails
   * @throws io.datum.cdc.CdcException as {@link PgErrors#map} if the primary cannot be reached at
   *     start
   */
  public boolean identify(Connection connection, int serverVersionNum, boolean atStart)
      throws SQLException {
    boolean inRecovery;
    String database;
    try (Statement st = connection.createStatement();
        ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery(), current_database()")) {
      rs.next();
      inRecovery = rs.getBoolean(1);
      database = rs.getString(2);
    }
    if (inRecovery && serverVersionNum < STANDBY_DECODING_VERSION) {
      throw new CdcConfigurationException(
          PgErrors.redact(config.jdbcUrl())
              + " is a hot standby running PostgreSQL "
              + serverVersionNum / 10000
              + " (server_version_num "
              + serverVersionNum
              + "), and logical decoding on a standby needs PostgreSQL 16 or later: stream from"
              + " the primary (jdbc-url naming it), or from a standby of PostgreSQL 16+");
    }
    if (identified && inRecovery != standby) {
      LOG.info(
          "slot {}: {} is {} now",
          config.slot(),
          PgErrors.redact(config.jdbcUrl()),
          inRecovery ? "a hot standby" : "a primary (promoted); the source writes on it");
    } else if (!identified && inRecovery) {
      LOG.info(
          "slot {}: {} is a hot standby; {}",
          config.slot(),
          PgErrors.redact(config.jdbcUrl()),
          primaryUrl() == null
              ? "no primary-jdbc-url, so nothing is written (features that write are refused)"
              : "writes go to the primary " + PgErrors.redact(primaryUrl()));
    }
    if (!inRecovery && atStart && primaryUrl() != null) {
      LOG.warn(
          "slot {}: primary-jdbc-url {} is not used: {} is a primary, and the source writes there",
          config.slot(),
          PgErrors.redact(primaryUrl()),
          PgErrors.redact(config.jdbcUrl()));
    }
    if (inRecovery && atStart) {
      warnUnprotected(connection);
      if (primaryUrl() != null) {
        checkPrimary(connection, database);
      }
    }
    standby = inRecovery;
    identified = true;
    return inRecovery;
  }

  /**
   * Warns when the standby does not keep the primary from removing catalog rows its logical slots
   * need: without {@code hot_standby_feedback} the primary never learns of them, and without a
   * physical slot ({@code primary_slot_name}) it forgets them whenever the standby disconnects; a
   * VACUUM of a catalog (or pruning) then invalidates the slot ({@code rows_removed}), and the
   * changes since its position are lost. A warning, not a refusal: a database without DDL may run
   * for ever without such a conflict.
   */
  private void warnUnprotected(Connection standby) throws SQLException {
    String feedback;
    String physicalSlot;
    try (Statement st = standby.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT current_setting('hot_standby_feedback'),"
                    + " current_setting('primary_slot_name')")) {
      rs.next();
      feedback = rs.getString(1);
      physicalSlot = rs.getString(2);
    }
    if (!"on".equals(feedback) || physicalSlot == null || physicalSlot.isEmpty()) {
      LOG.warn(
          "slot {}: the standby {} runs with hot_standby_feedback = {} and primary_slot_name = '{}':"
              + " the primary may remove catalog rows the standby's logical slot still needs, which"
              + " invalidates it (rows_removed) and loses the changes since its position; set"
              + " hot_standby_feedback = on and a physical replication slot (primary_slot_name) on"
              + " the standby (PostgreSQL docs, 47.2.3)",
          config.slot(),
          PgErrors.redact(config.jdbcUrl()),
          feedback,
          physicalSlot == null ? "" : physicalSlot);
    }
  }

  /** Checks that the primary's URL names a primary, of the standby's database and cluster. */
  private void checkPrimary(Connection standbyConnection, String database) throws SQLException {
    try (Connection primary = openPrimary("datum-cdc check " + config.slot());
        Statement st = primary.createStatement();
        ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery(), current_database()")) {
      rs.next();
      if (rs.getBoolean(1)) {
        throw new CdcConfigurationException(
            "primary-jdbc-url "
                + PgErrors.redact(primaryUrl())
                + " names a hot standby too; name the primary, where the source can write");
      }
      if (!database.equals(rs.getString(2))) {
        throw new CdcConfigurationException(
            "primary-jdbc-url "
                + PgErrors.redact(primaryUrl())
                + " names database "
                + rs.getString(2)
                + ", but the standby's source streams database "
                + database
                + " (logical decoding messages reach the slots of their own database only);"
                + " name the same database in both URLs");
      }
      String ours = systemIdentifier(standbyConnection);
      String theirs = systemIdentifier(primary);
      if (ours != null && theirs != null && !ours.equals(theirs)) {
        throw new CdcConfigurationException(
            "primary-jdbc-url "
                + PgErrors.redact(primaryUrl())
                + " names a server of another cluster (system identifier "
                + theirs
                + ") than the standby "
                + PgErrors.redact(config.jdbcUrl())
                + " ("
                + ours
                + "); name the standby's own primary");
      }
    } catch (SQLException e) {
      CdcException mapped =
          PgErrors.map(
              "cannot check the primary " + PgErrors.redact(primaryUrl()) + " of the standby", e);
      if (!PgErrors.isTransient(mapped)) {
        throw mapped; // authentication, a missing database: no later attempt heals it
      }
      // the stream needs no write: it starts; what writes (snapshot watermarks) retries until
      // the primary is back
      LOG.warn(
          "slot {}: {}; streaming from the standby goes on, and what writes on the primary"
              + " (snapshot watermarks) waits for it",
          config.slot(),
          mapped.getMessage());
    }
  }

  /** The cluster's system identifier, or null where {@code pg_control_system()} is not granted. */
  private static String systemIdentifier(Connection c) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT system_identifier::text FROM pg_control_system()")) {
      rs.next();
      return rs.getString(1);
    } catch (SQLException e) {
      if ("42501".equals(e.getSQLState())) {
        return null; // insufficient_privilege: the check is skipped, the rest still holds
      }
      throw e;
    }
  }

  /** Returns whether the server was a hot standby at the last {@link #identify}. */
  public boolean standby() {
    return standby;
  }

  /** Returns the primary's JDBC URL ({@link SourceOptions#PRIMARY_JDBC_URL}), or null. */
  public String primaryUrl() {
    return config.get(SourceOptions.PRIMARY_JDBC_URL);
  }

  /** Returns whether the source can write: on a primary, or on a standby given its primary. */
  public boolean canWrite() {
    return !standby || primaryUrl() != null;
  }

  /**
   * Refuses a feature that writes when the server is a standby and no primary is given.
   *
   * @param feature the feature, as the user named it ("snapshot mode initial (pgcdc --snapshot
   *     initial)")
   * @param why what it writes on the primary, as a phrase ("CREATE PUBLICATION runs on a primary
   *     only")
   * @throws CdcConfigurationException naming the feature and {@link SourceOptions#PRIMARY_JDBC_URL}
   */
  public void requireWrites(String feature, String why) {
    if (!canWrite()) {
      throw new CdcConfigurationException(
          feature
              + " needs a write on the primary ("
              + why
              + "), and "
              + PgErrors.redact(config.jdbcUrl())
              + " is a hot standby, where the source writes nothing: give the primary's JDBC URL"
              + " (option primary-jdbc-url: the builder's primaryJdbcUrl(...), pgcdc --primary-url,"
              + " the connector's primary.jdbc.url, Spring's datum.cdc.primary-jdbc-url), or"
              + " leave the feature out");
    }
  }

  /**
   * Opens an ordinary connection where the source writes: the server itself when it is a primary,
   * else the primary {@link SourceOptions#PRIMARY_JDBC_URL} names.
   *
   * @param applicationName the name {@code pg_stat_activity} shows
   * @return a connection in auto-commit mode
   * @throws CdcConfigurationException if the server is a standby and no primary is given
   * @throws SQLException if connecting fails
   */
  public Connection openWritable(String applicationName) throws SQLException {
    if (!standby) {
      Properties p = config.properties();
      PGProperty.APPLICATION_NAME.set(p, applicationName);
      return DriverManager.getConnection(config.jdbcUrl(), p);
    }
    requireWrites("this", "a write");
    return openPrimary(applicationName);
  }

  private Connection openPrimary(String applicationName) throws SQLException {
    Properties p = config.properties();
    // the same role: a user or password given only in jdbc-url's parameters counts here too
    Properties inUrl = org.postgresql.Driver.parseURL(config.jdbcUrl(), null);
    for (String name : new String[] {"user", "password"}) {
      if (!p.containsKey(name) && inUrl != null && inUrl.getProperty(name) != null) {
        p.setProperty(name, inUrl.getProperty(name));
      }
    }
    PGProperty.APPLICATION_NAME.set(p, applicationName);
    return DriverManager.getConnection(primaryUrl(), p);
  }

  /**
   * Returns the position up to which a server has made its WAL visible: {@code
   * pg_last_wal_replay_lsn()} on a standby, {@code pg_current_wal_insert_lsn()} on a primary
   * (PostgreSQL docs, 9.28.4 and 9.28.5).
   *
   * @param c an ordinary connection to the server; left open
   * @return the position
   * @throws SQLException if the query fails
   */
  public static PgLsn visiblePosition(Connection c) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()"
                    + " ELSE pg_current_wal_insert_lsn() END)::text")) {
      rs.next();
      return PgLsn.parse(rs.getString(1));
    }
  }

  /**
   * Returns the primary's flushed WAL position ({@code pg_current_wal_flush_lsn()}), read on a
   * connection from {@link #openWritable} right after a write committed: a standby has the write
   * once it has replayed this far.
   *
   * @param writable a connection to the primary; left open
   * @return the position
   * @throws SQLException if the query fails
   */
  public static PgLsn flushedPosition(Connection writable) throws SQLException {
    try (Statement st = writable.createStatement();
        ResultSet rs = st.executeQuery("SELECT pg_current_wal_flush_lsn()::text")) {
      rs.next();
      return PgLsn.parse(rs.getString(1));
    }
  }

  /**
   * On a standby, waits until it has replayed the WAL up to {@code position} (a write of the
   * primary is visible there from then on); returns at once on a primary. Polls {@code
   * pg_is_in_recovery()} and {@code pg_last_wal_replay_lsn()}, from every millisecond up to every
   * 50 ms: the server offers nothing to wait on. A standby promoted meanwhile ends the wait: what
   * was written on the former primary after the promotion never reaches it.
   *
   * @param onServer an ordinary connection to the source's server; left open
   * @param position the primary's position to reach
   * @param stop tells when to give up (the source stops)
   * @param waiting receives, once the wait is longer than a second, what it waits for (for the
   *     snapshot's progress), and null when it ends
   * @return true once replayed (or on a primary); false if {@code stop} said so first, or the
   *     standby was promoted (then {@link #standby()} is false from here on)
   * @throws SQLException if the query fails
   */
  public boolean awaitReplay(
      Connection onServer,
      PgLsn position,
      BooleanSupplier stop,
      java.util.function.Consumer<String> waiting)
      throws SQLException {
    if (!standby) {
      return true;
    }
    long start = System.nanoTime();
    long pause = TimeUnit.MILLISECONDS.toNanos(1);
    boolean said = false;
    try (Statement st = onServer.createStatement()) {
      while (true) {
        PgLsn replayed;
        try (ResultSet rs =
            st.executeQuery("SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text")) {
          rs.next();
          if (!rs.getBoolean(1)) {
            promoted();
            return false;
          }
          String text = rs.getString(2);
          replayed = text == null ? PgLsn.ZERO : PgLsn.parse(text);
        }
        if (!replayed.isBefore(position)) {
          return true;
        }
        if (stop.getAsBoolean()) {
          return false;
        }
        if (!said && System.nanoTime() - start > TimeUnit.SECONDS.toNanos(1)) {
          said = true;
          waiting.accept(
              "the standby to replay the primary's WAL up to "
                  + position
                  + " (it had replayed "
                  + replayed
                  + " a second into the wait; replication from the primary paused or slow?)");
        }
        LockSupport.parkNanos(this, pause);
        pause = Math.min(pause * 2, TimeUnit.MILLISECONDS.toNanos(50));
      }
    } finally {
      if (said) {
        waiting.accept(null);
      }
    }
  }

  /**
   * While the server is a standby, reads again whether it still is ({@code pg_is_in_recovery()}): a
   * standby promoted while a connection stayed open is a primary, and the source writes on it from
   * then on. Nothing is queried on a primary.
   *
   * @param onServer an ordinary connection to the source's server; left open
   * @return whether the server is a standby
   * @throws SQLException if the query fails
   */
  public boolean refresh(Connection onServer) throws SQLException {
    if (!standby) {
      return false;
    }
    try (Statement st = onServer.createStatement();
        ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
      rs.next();
      if (!rs.getBoolean(1)) {
        promoted();
      }
    }
    return standby;
  }

  private void promoted() {
    if (standby) {
      standby = false;
      LOG.info(
          "slot {}: {} was promoted: a primary now, the source writes on it",
          config.slot(),
          PgErrors.redact(config.jdbcUrl()));
    }
  }

  /** A slot creation, which may throw what the creating command throws. */
  @FunctionalInterface
  public interface SlotCreation<T> {
    /**
     * Creates the slot.
     *
     * @return what the creation returns
     * @throws SQLException as the creating command
     */
    T create() throws SQLException;
  }

  /**
   * Runs a slot creation, which PostgreSQL makes wait (for the transactions open when it began; on
   * a standby also for a running-transactions record from the primary), and watches it from a
   * thread of its own:
   *
   * <ul>
   *   <li>when {@code stop} says so (the source is stopped while it starts), the creating command
   *       is cancelled ({@code PGConnection.cancelQuery()}): left running, the server would finish
   *       creating the slot after the source is gone, and the slot would hold WAL and catalog rows
   *       for no one;
   *   <li>on a standby, a standby creates a logical slot only once it replays a
   *       running-transactions record written after the creation began (an idle primary writes one
   *       rarely, or never), so the thread asks the primary for one ({@code SELECT
   *       pg_log_standby_snapshot()}) every second; without the primary's URL it says, after two
   *       seconds and at WARN, what the creation waits for and how to hurry it. A role that may not
   *       execute {@code pg_log_standby_snapshot()} is told the GRANT once (WARN), and the creation
   *       waits as without the primary.
   * </ul>
   *
   * @param slot the slot, for the messages
   * @param connection the connection the creating command runs on (cancelled on stop)
   * @param stop tells whether the source is stopping
   * @param creation the creating command
   * @param <T> its result
   * @return the creation's result
   * @throws SQLException as the creation
   * @throws CdcException if the creation was cancelled because the source stopped (no slot was
   *     created)
   */
  public <T> T creatingSlot(
      String slot, Connection connection, BooleanSupplier stop, SlotCreation<T> creation)
      throws SQLException {
    CountDownLatch done = new CountDownLatch(1);
    java.util.concurrent.atomic.AtomicBoolean cancelled =
        new java.util.concurrent.atomic.AtomicBoolean();
    Thread watcher =
        new Thread(
            () -> watch(slot, connection, stop, cancelled, done),
            "datum-cdc-slot-creation-" + slot);
    watcher.setDaemon(true);
    watcher.start();
    try {
      return creation.create();
    } catch (SQLException | RuntimeException e) {
      // after a cancel, whatever the creation threw (a timeout's error, say) is the stop's doing
      if (cancelled.get()) {
        throw new CdcException(
            "the source stopped while slot \""
                + slot
                + "\" was being created: the creation was cancelled, and no slot was created",
            e);
      }
      throw e;
    } finally {
      done.countDown();
    }
  }

  private void watch(
      String slot,
      Connection connection,
      BooleanSupplier stop,
      java.util.concurrent.atomic.AtomicBoolean cancelled,
      CountDownLatch done) {
    boolean onStandby = standby;
    long started = System.nanoTime();
    long nextNudge = started + TimeUnit.MILLISECONDS.toNanos(200); // after the creation began
    boolean said = false;
    boolean nudging = onStandby && primaryUrl() != null;
    Connection primary = null;
    try {
      while (!done.await(100, TimeUnit.MILLISECONDS)) {
        if (stop.getAsBoolean() && cancelled.compareAndSet(false, true)) {
          connection.unwrap(org.postgresql.PGConnection.class).cancelQuery();
        }
        long now = System.nanoTime();
        if (onStandby && !nudging && !said && now - started > SILENT_WAIT_MILLIS * 1_000_000L) {
          said = true;
          LOG.warn(
              "slot {}: creating a logical slot on the standby waits until the primary logs its"
                  + " running transactions (xl_running_xacts), which an idle primary does rarely"
                  + " or never; run SELECT pg_log_standby_snapshot() on the primary, or give the"
                  + " source the primary (primary-jdbc-url) to have it asked every second",
              slot);
        }
        if (nudging && now - nextNudge >= 0) {
          nextNudge = now + TimeUnit.MILLISECONDS.toNanos(NUDGE_INTERVAL_MILLIS);
          try {
            if (primary == null) {
              primary = openPrimary("datum-cdc slot creation " + slot);
            }
            try (Statement st = primary.createStatement()) {
              st.executeQuery("SELECT pg_log_standby_snapshot()").close();
            }
          } catch (SQLException e) {
            nudging = false; // the creation goes on without help
            if ("42501".equals(e.getSQLState())) {
              LOG.warn(
                  "slot {}: the role may not execute pg_log_standby_snapshot() on the primary {},"
                      + " so the slot's creation on the standby waits until the primary logs its"
                      + " running transactions by itself (rarely or never when idle); GRANT"
                      + " EXECUTE ON FUNCTION pg_log_standby_snapshot() TO the source's role on"
                      + " the primary",
                  slot,
                  PgErrors.redact(primaryUrl()));
            } else {
              LOG.warn(
                  "slot {}: cannot ask the primary {} for a running-transactions record while the"
                      + " slot is created on the standby: {}",
                  slot,
                  PgErrors.redact(primaryUrl()),
                  e.toString());
            }
          }
        }
      }
    } catch (SQLException e) {
      // cancelling failed: the creation ends by itself, and start() then sees the stop
      LOG.warn("slot {}: cannot cancel the slot's creation: {}", slot, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      if (primary != null) {
        try {
          primary.close();
        } catch (SQLException e) {
          LOG.debug("slot {}: closing the primary's connection: {}", slot, e.toString());
        }
      }
    }
  }
}

package io.datum.cdc.core.replication;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcReplicationException;
import io.datum.cdc.CdcReplicationException.Reason;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.core.errors.PgErrors;
import io.datum.cdc.core.server.ServerRole;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Slot and publication management over an ordinary SQL connection: checks, creation, walsender
 * termination and drop. Values go through bind parameters and identifiers through {@link
 * PgErrors#quoteIdentifier}, never concatenated unquoted.
 */
final class SlotAdmin {

  private static final Logger LOG = LoggerFactory.getLogger(SlotAdmin.class);

  /**
   * What {@code pg_replication_slots} says of a slot (PostgreSQL docs, 53.19 pg_replication_slots).
   * {@code failover} and {@code synced} (PostgreSQL 17+) are null on older servers. {@code
   * invalidation} is why the slot can no longer be used, or null: {@code invalidation_reason}
   * (PostgreSQL 17+: {@code wal_removed}, {@code rows_removed}, {@code wal_level_insufficient}, 18:
   * {@code idle_timeout}); on 16 {@code conflicting} true gives {@code conflict} (rows removed or
   * wal_level lowered: a conflict with recovery on a standby's slot), {@code wal_status lost} gives
   * {@code wal_removed}.
   */
  record SlotState(
      String plugin,
      String type,
      String database,
      boolean active,
      Integer activePid,
      PgLsn confirmedFlushLsn,
      String walStatus,
      Boolean failover,
      Boolean synced,
      String invalidation) {}

  private final Connection connection;

  SlotAdmin(Connection connection) {
    this.connection = connection;
  }

  /** Returns {@code server_version_num}, for example 170006. */
  int serverVersionNum() throws SQLException {
    try (Statement st = connection.createStatement();
        ResultSet rs = st.executeQuery("SHOW server_version_num")) {
      rs.next();
      return Integer.parseInt(rs.getString(1));
    }
  }

  /**
   * Returns the server's current WAL position: {@code pg_current_wal_lsn()}, or on a standby {@code
   * pg_last_wal_replay_lsn()} (PostgreSQL docs, 9.28.4 Backup Control Functions).
   */
  PgLsn currentWalLsn() throws SQLException {
    try (Statement st = connection.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()"
                    + " ELSE pg_current_wal_lsn() END)::text")) {
      rs.next();
      return PgLsn.parse(rs.getString(1));
    }
  }

  /** Returns the slot's state, or null if it does not exist. */
  SlotState slot(String slot) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement(
            // wal_status exists from PostgreSQL 13; read through jsonb so older servers give null
            "SELECT plugin, slot_type, database, active, active_pid, confirmed_flush_lsn::text,"
                + " to_jsonb(s) ->> 'wal_status', (to_jsonb(s) ->> 'failover')::boolean,"
                + " (to_jsonb(s) ->> 'synced')::boolean,"
                + " "
                + ServerRole.INVALIDATION_REASON_SQL
                + " FROM pg_replication_slots s WHERE slot_name = ?")) {
      ps.setString(1, slot);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        int pid = rs.getInt(5);
        Integer activePid = rs.wasNull() ? null : pid;
        String confirmed = rs.getString(6);
        return new SlotState(
            rs.getString(1),
            rs.getString(2),
            rs.getString(3),
            rs.getBoolean(4),
            activePid,
            confirmed == null ? PgLsn.ZERO : PgLsn.parse(confirmed),
            rs.getString(7),
            rs.getObject(8, Boolean.class),
            rs.getObject(9, Boolean.class),
            rs.getString(10));
      }
    }
  }

  /**
   * Creates a logical slot with the pgoutput plugin; a failover slot ({@code failover => true},
   * PostgreSQL 17+, docs 9.28.6 Replication Management Functions) if asked, in the creating command
   * itself. A slot created on a replication connection with an exported snapshot must carry the
   * option in that same command too, since the snapshot ends at the connection's next command:
   * {@code CREATE_REPLICATION_SLOT name LOGICAL pgoutput (SNAPSHOT 'export', FAILOVER true)} (docs
   * 53.4 Streaming Replication Protocol; FAILOVER from 17), never a later {@code
   * ALTER_REPLICATION_SLOT}. PostgreSQL builds the slot's snapshot once every transaction (and
   * prepared transaction) with an xid open when the creation began has ended (snapbuild.c), so the
   * creation waits for them.
   *
   * @param failover create a failover slot
   * @param timeout the longest wait; zero for no limit
   * @throws CdcReplicationException naming the open transactions, if the timeout passed
   */
  void createSlot(String slot, boolean failover, Duration timeout, ServerRole role)
      throws SQLException {
    boolean limited = !timeout.isZero();
    if (limited) {
      setStatementTimeout(Long.toString(Math.max(1, timeout.toMillis())));
    }
    try (PreparedStatement ps =
        connection.prepareStatement(
            failover
                ? "SELECT pg_create_logical_replication_slot(?, 'pgoutput', failover => true)"
                : "SELECT pg_create_logical_replication_slot(?, 'pgoutput')")) {
      ps.setString(1, slot);
      ps.executeQuery().close();
    } catch (SQLException e) {
      if (limited && "57014".equals(e.getSQLState())) { // query_canceled: the statement timeout
        setStatementTimeout("0");
        throw creationTimedOut(slot, timeout, openTransactions(role), e);
      }
      throw e;
    } finally {
      if (limited && !connection.isClosed()) {
        setStatementTimeout("0");
      }
    }
    LOG.info(
        "created logical replication slot {} (pgoutput{})", slot, failover ? ", failover" : "");
  }

  /**
   * Returns the names in {@code synchronized_standby_slots} (PostgreSQL 17+): the physical slots
   * whose standbys must have received WAL before a failover slot's walsender sends it.
   */
  String synchronizedStandbySlots() throws SQLException {
    try (Statement st = connection.createStatement();
        ResultSet rs = st.executeQuery("SHOW synchronized_standby_slots")) {
      rs.next();
      return rs.getString(1);
    }
  }

  private void setStatementTimeout(String millis) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement("SELECT set_config('statement_timeout', ?, false)")) {
      ps.setString(1, millis);
      ps.executeQuery().close();
    }
  }

  /**
   * Describes the transactions that hold up a slot creation: those with an xid in {@code
   * pg_stat_activity} (but this session's) and the prepared ones in {@code pg_prepared_xacts}.
   */
  /**
   * The error of a slot creation that waited longer than the slot creation timeout.
   *
   * @param slot the slot
   * @param timeout the timeout
   * @param open the transactions it waited for ({@link #openTransactions})
   * @param cause the cancelled statement's error
   * @return the error, naming the transactions and the remedies
   */
  static CdcReplicationException creationTimedOut(
      String slot, Duration timeout, String open, SQLException cause) {
    return new CdcReplicationException(
        Reason.SERVER_ERROR,
        "creating replication slot \""
            + slot
            + "\" waited "
            + timeout.toMillis() / 1000.0
            + " s for transactions open when it began, which PostgreSQL waits for before the"
            + " slot can start: "
            + open
            + ". End them (COMMIT or ROLLBACK, ROLLBACK PREPARED 'gid', or"
            + " pg_terminate_backend(pid)), or allow a longer wait (slotCreationTimeout,"
            + " pgcdc --slot-create-timeout)",
        cause);
  }

  /**
   * Describes the transactions a slot creation waits for, for its error message.
   *
   * @return the open transactions (pid, xid, age, state; prepared ones by gid)
   * @throws SQLException if the catalog cannot be read
   */
  /**
   * Describes what a slot creation waits for: on a primary {@link #openTransactions()}; on a
   * standby whose primary the source was given, the primary's open transactions (a standby's own
   * sessions hold no xid).
   */
  String openTransactions(ServerRole role) throws SQLException {
    if (role.standby() && role.primaryUrl() != null) {
      try (Connection primary = role.openWritable("datum-cdc slot creation")) {
        return "on the primary "
            + PgErrors.redact(role.primaryUrl())
            + ": "
            + new SlotAdmin(primary).openTransactions();
      }
    }
    return openTransactions();
  }

  String openTransactions() throws SQLException {
    try (Statement st = connection.createStatement();
        ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
      rs.next();
      if (rs.getBoolean(1)) {
        // a standby's own sessions hold no xid: the creation waits for the primary
        return "on a standby, the creation waits for the primary to log its running transactions"
            + " (xl_running_xacts; SELECT pg_log_standby_snapshot() on the primary writes one, as"
            + " the source does every second when given the primary, primary-jdbc-url) and for"
            + " the primary's transactions open then to end (pg_stat_activity on the primary"
            + " lists them)";
      }
    }
    List<String> open = new ArrayList<>();
    try (Statement st = connection.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT pid, backend_xid::text, xact_start::text, state, datname,"
                    + " left(regexp_replace(query, '\\s+', ' ', 'g'), 80)"
                    + " FROM pg_stat_activity"
                    + " WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()"
                    + " ORDER BY xact_start")) {
      while (rs.next()) {
        open.add(
            "pid "
                + rs.getInt(1)
                + " (xid "
                + rs.getString(2)
                + ", database "
                + rs.getString(5)
                + ", open since "
                + rs.getString(3)
                + ", "
                + rs.getString(4)
                + ", query '"
                + rs.getString(6)
                + "')");
      }
    }
    try (Statement st = connection.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT gid, transaction::text, prepared::text, database FROM pg_prepared_xacts"
                    + " ORDER BY prepared")) {
      while (rs.next()) {
        open.add(
            "prepared transaction '"
                + rs.getString(1)
                + "' (xid "
                + rs.getString(2)
                + ", database "
                + rs.getString(4)
                + ", prepared at "
                + rs.getString(3)
                + ")");
      }
    }
    return open.isEmpty()
        ? "none is open any more (they ended just now: try again)"
        : String.join(", ", open);
  }

  /** Returns true if the publication exists in the connection's database. */
  boolean publicationExists(String publication) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement("SELECT 1 FROM pg_publication WHERE pubname = ?")) {
      ps.setString(1, publication);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /**
   * Creates a publication for the given tables, or for all tables if the list is empty.
   *
   * @param tables {@code schema.table} or {@code table} names (unquoted; a name without a dot is in
   *     schema {@code public})
   */
  void createPublication(String publication, List<String> tables) throws SQLException {
    StringBuilder sql =
        new StringBuilder("CREATE PUBLICATION ").append(PgErrors.quoteIdentifier(publication));
    if (tables.isEmpty()) {
      sql.append(" FOR ALL TABLES");
    } else {
      List<String> quoted = new ArrayList<>();
      for (String table : tables) {
        quoted.add(qualified(table));
      }
      sql.append(" FOR TABLE ").append(String.join(", ", quoted));
    }
    try (Statement st = connection.createStatement()) {
      st.execute(sql.toString());
    }
    LOG.info("created publication {} ({})", publication, tables.isEmpty() ? "all tables" : tables);
    List<String> broken = tablesWithoutIdentity(publication);
    if (!broken.isEmpty()) {
      LOG.warn(
          "publication {} publishes {} table(s) without a primary key or replica identity: {};"
              + " PostgreSQL now refuses UPDATE and DELETE on them (\"does not have a replica"
              + " identity and publishes updates\"): give each a primary key, or ALTER TABLE ..."
              + " REPLICA IDENTITY FULL, or DROP PUBLICATION {} and create it for other tables",
          publication,
          broken.size(),
          String.join(", ", broken),
          PgErrors.quoteIdentifier(publication));
    }
  }

  /**
   * Returns the tables a publication publishes on which PostgreSQL refuses UPDATE and DELETE: those
   * with replica identity {@code nothing}, or {@code default} without a primary key (PostgreSQL
   * docs, 31.1 Publication), as {@code schema.table}, sorted.
   */
  List<String> tablesWithoutIdentity(String publication) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT quote_ident(pt.schemaname) || '.' || quote_ident(pt.tablename)"
                + " FROM pg_publication_tables pt"
                + " JOIN pg_namespace n ON n.nspname = pt.schemaname"
                + " JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = pt.tablename"
                + " WHERE pt.pubname = ? AND (c.relreplident = 'n' OR (c.relreplident = 'd'"
                + " AND NOT EXISTS (SELECT 1 FROM pg_index i"
                + " WHERE i.indrelid = c.oid AND i.indisprimary)))"
                + " ORDER BY 1")) {
      ps.setString(1, publication);
      List<String> tables = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          tables.add(rs.getString(1));
        }
      }
      return tables;
    }
  }

  /**
   * Checks that an existing publication publishes what the source was told to create it with: all
   * tables (an empty list), or each listed table.
   *
   * @throws CdcConfigurationException naming the tables it lacks and the remedy
   */
  void requirePublicationCovers(String publication, List<String> tables) throws SQLException {
    String quotedPublication = PgErrors.quoteIdentifier(publication);
    if (tables.isEmpty()) {
      try (PreparedStatement ps =
          connection.prepareStatement(
              "SELECT puballtables FROM pg_publication WHERE pubname = ?")) {
        ps.setString(1, publication);
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next() && !rs.getBoolean(1)) {
            throw new CdcConfigurationException(
                "publication \""
                    + publication
                    + "\" exists but is not FOR ALL TABLES, as it was asked to be created (pgcdc"
                    + " --create-publication --all-tables); stream it without"
                    + " --create-publication, or DROP PUBLICATION "
                    + quotedPublication
                    + " to let it be created");
          }
        }
      }
      return;
    }
    List<String> missing = new ArrayList<>();
    for (String table : tables) {
      String qualified = qualified(table);
      int dot = table.indexOf('.');
      try (PreparedStatement ps =
          connection.prepareStatement(
              // pg_publication_rel: tables added by name (a partitioned one, too);
              // pg_publication_tables: also those of FOR TABLES IN SCHEMA (15+)
              "SELECT to_regclass(?) IS NOT NULL, EXISTS (SELECT 1 FROM pg_publication p"
                  + " WHERE p.pubname = ? AND (p.puballtables"
                  + " OR EXISTS (SELECT 1 FROM pg_publication_rel r"
                  + " WHERE r.prpubid = p.oid AND r.prrelid = to_regclass(?))"
                  + " OR EXISTS (SELECT 1 FROM pg_publication_tables t WHERE t.pubname = p.pubname"
                  + " AND t.schemaname = ? AND t.tablename = ?)))")) {
        ps.setString(1, qualified);
        ps.setString(2, publication);
        ps.setString(3, qualified);
        ps.setString(4, dot < 0 ? "public" : table.substring(0, dot));
        ps.setString(5, dot < 0 ? table : table.substring(dot + 1));
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          if (!rs.getBoolean(2)) {
            missing.add(table + (rs.getBoolean(1) ? "" : " (no such table)"));
          }
        }
      }
    }
    if (!missing.isEmpty()) {
      throw new CdcConfigurationException(
          "publication \""
              + publication
              + "\" exists but does not publish "
              + String.join(", ", missing)
              + " (--tables, createPublication); existing publications are not changed: add them"
              + " (ALTER PUBLICATION "
              + quotedPublication
              + " ADD TABLE ...), or stream another publication");
    }
  }

  /** A table name as {@link TableId#parse} takes it, quoted for SQL. */
  private static String qualified(String table) {
    TableId id = TableId.parse(table);
    return PgErrors.quoteIdentifier(id.schema()) + '.' + PgErrors.quoteIdentifier(id.table());
  }

  /** Drops a publication (undoing its creation by a start that then failed). */
  void dropPublication(String publication) throws SQLException {
    try (Statement st = connection.createStatement()) {
      st.execute("DROP PUBLICATION IF EXISTS " + PgErrors.quoteIdentifier(publication));
    }
    LOG.info("dropped publication {}, created by a start that failed", publication);
  }

  /**
   * Drops a slot. With {@code force}, first terminates the walsender that holds it; waits up to
   * {@code timeoutMillis} for the slot to become inactive.
   *
   * @throws CdcReplicationException if the slot does not exist, or is still active after the
   *     timeout (naming the process)
   */
  void dropSlot(String slot, boolean force, long timeoutMillis) throws SQLException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    while (true) {
      SlotState state = slot(slot);
      if (state == null) {
        throw new CdcReplicationException(
            Reason.SLOT_MISSING, "replication slot \"" + slot + "\" does not exist");
      }
      if (state.active() && force && state.activePid() != null) {
        try (PreparedStatement ps = connection.prepareStatement("SELECT pg_terminate_backend(?)")) {
          ps.setInt(1, state.activePid());
          ps.executeQuery().close();
        }
        LOG.info("terminated walsender {} holding slot {}", state.activePid(), slot);
      }
      if (!state.active()) {
        try (PreparedStatement ps =
            connection.prepareStatement("SELECT pg_drop_replication_slot(?)")) {
          ps.setString(1, slot);
          ps.executeQuery().close();
          LOG.info("dropped replication slot {}", slot);
          return;
        } catch (SQLException e) {
          if (!"55006".equals(e.getSQLState())) {
            throw e; // anything but "is active" (raced with a reconnect) is final
          }
        }
      }
      if (System.nanoTime() > deadline) {
        throw new CdcReplicationException(
            Reason.SLOT_ACTIVE,
            "replication slot \""
                + slot
                + "\" is still active for PID "
                + state.activePid()
                + (force
                    ? " after terminating it"
                    : "; drop it with force to terminate that process"));
      }
      try {
        Thread.sleep(20); // polling the server's slot state; nothing local to wait on
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new CdcReplicationException(
            Reason.INTERRUPTED, "interrupted while dropping slot \"" + slot + '"');
      }
    }
  }
}

package io.datum.cdc.core;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SlotNames;
import io.datum.cdc.TableId;
import io.datum.cdc.core.snapshot.SnapshotMessages;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;

/**
 * Asks a running source, from anywhere, to snapshot tables: writes the request into the WAL as a
 * transactional logical decoding message ({@code pg_logical_emit_message(true, 'datum-cdc',
 * 'snapshot SLOT schema.table ...')}, PostgreSQL docs 9.28.6 Replication Management Functions),
 * which the source of that slot reads in commit order and honours if it was built with {@link
 * io.datum.cdc.core.config.SnapshotMode#ON_REQUEST}. No table is written to; the caller needs
 * EXECUTE on {@code pg_logical_emit_message}, which PUBLIC has by default (so any role that can
 * connect can ask; a server that revokes it refuses with SQLSTATE 42501; see docs/snapshots.md).
 * {@code pgcdc snapshot} uses it.
 */
public final class SnapshotRequests {

  private SnapshotRequests() {}

  /**
   * Writes a request in its own transaction (or in the caller's, if one is open: it then counts
   * once that commits).
   *
   * @param connection a connection to the slot's database
   * @param slot the slot whose source is to snapshot the tables
   * @param tables the tables, as the source's publication publishes them, at least one
   * @return the snapshot's id, which its rows will carry: {@code request-} and the WAL insert
   *     position when it was asked for ({@code pg_current_wal_insert_lsn()}), written into the
   *     request
   * @throws CdcConfigurationException if the slot name is invalid or no logical slot of that name
   *     exists in the connection's database, no table is given, a table does not exist, or no
   *     publication publishes it, or the connection is to a hot standby (use {@link
   *     #request(Connection, Connection, String, List)}) (then nothing is written)
   * @throws SQLException if PostgreSQL refuses (a missing privilege names the function)
   */
  public static String request(Connection connection, String slot, List<TableId> tables)
      throws SQLException {
    if (inRecovery(connection)) {
      throw new CdcConfigurationException(
          "the connection is to a hot standby, where nothing can be written, and a snapshot"
              + " request is written into the WAL: write it on the primary, checking the slot on"
              + " the standby (SnapshotRequests.request(primary, standby, slot, tables); pgcdc"
              + " snapshot --url STANDBY --primary-url PRIMARY); the standby's stream reads it once"
              + " the standby replays it");
    }
    return request(connection, connection, slot, tables);
  }

  /**
   * Writes a request for the source of a slot on a hot standby (PostgreSQL 16+): the slot, the
   * tables and their publication are checked on the standby, and the request is written on its
   * primary, in its own transaction (or the caller's there); the standby's stream reads it once the
   * standby has replayed it. With one connection for both, the same as {@link #request(Connection,
   * String, List)}.
   *
   * @param primary a connection to the primary, the slot's database
   * @param slotServer a connection to the server holding the slot (the standby), same database
   * @param slot the slot whose source is to snapshot the tables
   * @param tables the tables, as the source's publication publishes them, at least one
   * @return the snapshot's id, which its rows will carry: {@code request-} and the primary's WAL
   *     insert position when it was asked for
   * @throws CdcConfigurationException as {@link #request(Connection, String, List)}, checked on
   *     {@code slotServer}; or if {@code primary} is a hot standby too, or a server of another
   *     database or (where {@code pg_control_system()} is granted) another cluster
   * @throws SQLException if PostgreSQL refuses (a missing privilege names the function)
   */
  public static String request(
      Connection primary, Connection slotServer, String slot, List<TableId> tables)
      throws SQLException {
    SlotNames.requireValid(slot);
    if (tables.isEmpty()) {
      throw new CdcConfigurationException("a snapshot request names at least one table");
    }
    if (primary != slotServer) {
      refuseOtherPrimary(primary, slotServer);
    }
    Connection connection = slotServer;
    refuseMissingSlot(connection, slot);
    refuseMissing(connection, tables);
    refuseUnpublished(connection, slot, tables);
    String id;
    try (PreparedStatement ps =
            primary.prepareStatement("SELECT pg_current_wal_insert_lsn()::text");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      id = "request-" + PgLsn.parse(rs.getString(1));
    }
    try (PreparedStatement ps =
        primary.prepareStatement("SELECT pg_logical_emit_message(true, ?, ?)")) {
      ps.setString(1, SnapshotMessages.PREFIX);
      ps.setString(2, SnapshotMessages.request(slot, id, tables));
      ps.executeQuery().close();
    }
    return id;
  }

  /**
   * Refuses a connection for writing that cannot reach the slot's stream: a standby (nothing can be
   * written there), another database (a logical decoding message reaches only the slots of its own
   * database) or, where {@code pg_control_system()} is granted on both, another cluster. A request
   * written there would be lost without a word.
   */
  private static void refuseOtherPrimary(Connection primary, Connection slotServer)
      throws SQLException {
    if (inRecovery(primary)) {
      throw new CdcConfigurationException(
          "the connection for writing the snapshot request is to a hot standby too: give one to"
              + " the primary (pgcdc snapshot --primary-url)");
    }
    String[] ours = identity(slotServer);
    String[] theirs = identity(primary);
    if (!ours[0].equals(theirs[0])) {
      throw new CdcConfigurationException(
          "the primary's connection is to database "
              + theirs[0]
              + ", the slot's server's to "
              + ours[0]
              + ": a snapshot request written there would never reach the slot's stream (a logical"
              + " decoding message reaches the slots of its own database only); name the same"
              + " database in both");
    }
    if (ours[1] != null && theirs[1] != null && !ours[1].equals(theirs[1])) {
      throw new CdcConfigurationException(
          "the primary's connection is to a server of another cluster (system identifier "
              + theirs[1]
              + ") than the slot's server ("
              + ours[1]
              + "): a snapshot request written there would never reach the slot's stream; give"
              + " the standby's own primary");
    }
  }

  /** The database and, where granted, the system identifier of a connection's server. */
  private static String[] identity(Connection c) throws SQLException {
    String database;
    try (PreparedStatement ps = c.prepareStatement("SELECT current_database()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      database = rs.getString(1);
    }
    String system = null;
    try (PreparedStatement ps =
            c.prepareStatement("SELECT system_identifier::text FROM pg_control_system()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      system = rs.getString(1);
    } catch (SQLException e) {
      if (!"42501".equals(e.getSQLState())) {
        throw e;
      }
    }
    return new String[] {database, system};
  }

  private static boolean inRecovery(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_is_in_recovery()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getBoolean(1);
    }
  }

  /**
   * Refuses tables that do not exist (as a table or a partitioned table): the running source would
   * drop a request for one, and the request's writer would never know.
   *
   * @throws CdcConfigurationException naming each missing table
   */
  private static void refuseMissing(Connection connection, List<TableId> tables)
      throws SQLException {
    List<TableId> missing =
        without(
            connection,
            "SELECT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid ="
                + " c.relnamespace WHERE n.nspname = ? AND c.relname = ? AND c.relkind IN ('r',"
                + " 'p'))",
            tables);
    if (!missing.isEmpty()) {
      throw new CdcConfigurationException(
          "no table "
              + (missing.size() == 1 ? missing.get(0) : missing)
              + " in this database: name each table as schema.table, as the source's publication"
              + " publishes it (quote a part as in SQL: \"Sales\".\"Orders\"); nothing was"
              + " requested");
    }
  }

  /**
   * Refuses a slot that does not exist in the connection's database: no source would read the
   * request.
   *
   * @throws CdcConfigurationException naming the slot, and its database if it is another's
   */
  private static void refuseMissingSlot(Connection connection, String slot) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT database, current_database(), slot_type FROM pg_replication_slots"
                + " WHERE slot_name = ?")) {
      ps.setString(1, slot);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new CdcConfigurationException(
              "no replication slot \""
                  + slot
                  + "\" on this server, so no stream would read the request: name the slot the"
                  + " stream reads (SELECT slot_name FROM pg_replication_slots lists them); nothing was"
                  + " requested");
        }
        if (!"logical".equals(rs.getString(3)) || !rs.getString(2).equals(rs.getString(1))) {
          throw new CdcConfigurationException(
              "replication slot \""
                  + slot
                  + "\" is "
                  + ("logical".equals(rs.getString(3))
                      ? "a slot of database \"" + rs.getString(1) + "\""
                      : "a physical slot")
                  + ", not a logical slot of this database (\""
                  + rs.getString(2)
                  + "\"): connect to the database the stream reads; nothing was requested");
        }
      }
    }
  }

  /**
   * Refuses tables no publication publishes: the stream of the slot would drop a request for one.
   * (Which publication the stream reads is not known here; a table another publication publishes is
   * still dropped by a stream that does not publish it, and logged at ERROR.)
   *
   * @throws CdcConfigurationException naming each table
   */
  private static void refuseUnpublished(Connection connection, String slot, List<TableId> tables)
      throws SQLException {
    List<TableId> unpublished =
        without(
            connection,
            "SELECT EXISTS (SELECT 1 FROM pg_publication_tables WHERE schemaname = ? AND"
                + " tablename = ?)",
            tables);
    if (!unpublished.isEmpty()) {
      throw new CdcConfigurationException(
          "no publication publishes "
              + (unpublished.size() == 1 ? unpublished.get(0) : unpublished)
              + ", so the stream of slot \""
              + slot
              + "\" would drop the request: add "
              + (unpublished.size() == 1 ? "it" : "them")
              + " to the stream's publication (ALTER PUBLICATION ... ADD TABLE), or name a"
              + " partitioned table as its publication publishes it (its root only with"
              + " publish_via_partition_root); nothing was requested");
    }
  }

  /** The tables for which {@code exists} (schema, table parameters) is false. */
  private static List<TableId> without(Connection connection, String exists, List<TableId> tables)
      throws SQLException {
    List<TableId> out = new java.util.ArrayList<>();
    try (PreparedStatement ps = connection.prepareStatement(exists)) {
      for (TableId t : tables) {
        ps.setString(1, t.schema());
        ps.setString(2, t.table());
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          if (!rs.getBoolean(1)) {
            out.add(t);
          }
        }
      }
    }
    return out;
  }

  /**
   * Parses a table name as every input takes it ({@link TableId#parse}): {@code schema.table} or
   * {@code table} (schema public), a part double-quoted as in SQL ({@code "Sales"."Orders 2024"}).
   *
   * @param qualified the name
   * @return the table
   * @throws CdcConfigurationException naming the text if it is not of that form
   */
  public static TableId table(String qualified) {
    return SnapshotMessages.table(qualified);
  }
}

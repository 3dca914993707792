package io.datum.cdc.store.jdbc.internal;

import io.datum.cdc.CdcStoreException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * A PostgreSQL session-level advisory lock ({@code pg_try_advisory_lock(bigint)}) on a checkpoint
 * table, held by the store's own connection for as long as the store is open. PostgreSQL releases
 * it when the session ends, also when the process holding it dies (its backend sees the socket
 * close), so a crash never leaves a stale lock; it takes no row or table lock, so it blocks neither
 * the handlers' transactions nor vacuum. The key is the first 8 bytes of the SHA-256 of {@code
 * "datum-cdc checkpoint table " + table} (lower case): the same in every process. Advisory locks
 * are per database, so the key names one table of one database. The store keys it by the table's
 * oid (so {@code public.t} and {@code t} are one table, and {@code t} in two schemas two), and
 * holds a key by name only around its {@code CREATE TABLE IF NOT EXISTS}.
 */
public final class AdvisoryLock {

  private AdvisoryLock() {}

  /**
   * Returns the lock key of a table.
   *
   * @param table what names the lock (the store gives {@code "oid " + oid} or {@code "ddl " +
   *     name})
   * @return the 64-bit key
   */
  public static long key(String table) {
    try {
      byte[] hash =
          MessageDigest.getInstance("SHA-256")
              .digest(("datum-cdc checkpoint table " + table).getBytes(StandardCharsets.UTF_8));
      long key = 0;
      for (int i = 0; i < 8; i++) {
        key = key << 8 | (hash[i] & 0xFF);
      }
      return key;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  /**
   * Takes the lock on {@code db}'s session, waiting for it.
   *
   * @param db the connection, in auto-commit mode
   * @param key the lock key
   * @throws SQLException if the statement fails
   */
  public static void lockWaiting(Connection db, long key) throws SQLException {
    try (PreparedStatement lock = db.prepareStatement("SELECT pg_advisory_lock(?)")) {
      lock.setLong(1, key);
      lock.executeQuery().close();
    }
  }

  /**
   * Takes the lock on {@code db}'s session, or throws naming the holder.
   *
   * @param db the store's connection, in auto-commit mode
   * @param key the lock key
   * @param location the store, for the message
   * @throws CdcStoreException {@code "<location> is in use by another process or store: ..."} with
   *     the holder's backend pid, application name, client address and start time when PostgreSQL
   *     shows them
   * @throws SQLException if the statements fail
   */
  public static void acquire(Connection db, long key, String location) throws SQLException {
    try (PreparedStatement lock = db.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
      lock.setLong(1, key);
      try (ResultSet rs = lock.executeQuery()) {
        if (rs.next() && rs.getBoolean(1)) {
          return;
        }
      }
    }
    throw new CdcStoreException(
        location
            + " is in use by another process or store: "
            + holder(db, key)
            + " holds its advisory lock (key "
            + key
            + "); a checkpoint table can be open by one store at a time, close the other first");
  }

  /**
   * Releases the lock.
   *
   * @param db the connection that holds it
   * @param key the lock key
   * @throws SQLException if the statement fails
   */
  public static void release(Connection db, long key) throws SQLException {
    try (PreparedStatement unlock = db.prepareStatement("SELECT pg_advisory_unlock(?)")) {
      unlock.setLong(1, key);
      unlock.executeQuery().close();
    }
  }

  private static String holder(Connection db, long key) {
    String sql =
        "SELECT a.pid, a.application_name, a.client_addr, a.backend_start"
            + " FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
            + " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
            + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            + " AND ((l.classid::bigint << 32) | l.objid::bigint) = ?";
    try (PreparedStatement ps = db.prepareStatement(sql)) {
      ps.setLong(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          String app = rs.getString(2);
          String addr = rs.getString(3);
          return "PostgreSQL backend "
              + rs.getInt(1)
              + (app == null || app.isEmpty() ? "" : " (application_name \"" + app + "\")")
              + (addr == null ? " over a local socket" : " from " + addr)
              + ", connected since "
              + rs.getString(4);
        }
      }
      return "another session";
    } catch (SQLException e) {
      return "another session (pg_locks is unreadable: " + e.getMessage() + ")";
    }
  }
}

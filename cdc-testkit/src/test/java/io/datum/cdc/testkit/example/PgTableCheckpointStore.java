package io.datum.cdc.testkit.example;

import io.datum.cdc.CdcStoreException;
import io.datum.cdc.spi.AbstractCheckpointStore;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The custom store of docs/stores.md: one row per slot in a PostgreSQL table, the checkpoint in the
 * SPI's binary form. The store's connection holds an advisory lock on the table's name for the life
 * of the store, so a second store on the same table, in this process or another, is refused;
 * PostgreSQL drops the lock when the connection ends, also when the process dies.
 */
public final class PgTableCheckpointStore extends AbstractCheckpointStore {
  private final Connection db; // one statement at a time: the methods below are synchronized
  private final String table; // a trusted identifier chosen by the application

  private PgTableCheckpointStore(String location, Connection db, String table) {
    super(location, null); // no StoreLock: the advisory lock excludes other stores
    this.db = db;
    this.table = table;
  }

  /** Opens the store on {@code table} (created if missing), or throws if another store has it. */
  public static PgTableCheckpointStore open(String url, String table) {
    String location = "checkpoint table " + table + " at " + url.replaceAll("password=[^&]*", "");
    try {
      Connection db = DriverManager.getConnection(url);
      try (PreparedStatement lock =
          db.prepareStatement("SELECT pg_try_advisory_lock(hashtext(?))")) {
        lock.setString(1, table);
        ResultSet locked = lock.executeQuery();
        if (!locked.next() || !locked.getBoolean(1)) {
          db.close();
          throw new CdcStoreException(location + " is in use by another process or store");
        }
        db.createStatement()
            .execute(
                "CREATE TABLE IF NOT EXISTS " + table + " (slot text PRIMARY KEY, value bytea)");
        return new PgTableCheckpointStore(location, db, table);
      } catch (SQLException | RuntimeException e) {
        db.close();
        throw e;
      }
    } catch (SQLException e) {
      throw new CdcStoreException("cannot open " + location + ": " + e, e);
    }
  }

  @Override
  protected synchronized byte[] read(String slot) throws SQLException {
    try (PreparedStatement ps =
        db.prepareStatement("SELECT value FROM " + table + " WHERE slot = ?")) {
      ps.setString(1, slot);
      ResultSet rs = ps.executeQuery();
      return rs.next() ? rs.getBytes(1) : null;
    }
  }

  @Override
  protected synchronized void write(Map<String, byte[]> batch) throws SQLException {
    db.setAutoCommit(false); // one transaction per batch, durable at commit (synchronous_commit)
    try (PreparedStatement ps =
        db.prepareStatement(
            "INSERT INTO "
                + table
                + " VALUES (?, ?) ON CONFLICT (slot) DO UPDATE SET value = EXCLUDED.value")) {
      for (Map.Entry<String, byte[]> e : batch.entrySet()) {
        ps.setString(1, e.getKey());
        ps.setBytes(2, e.getValue());
        ps.addBatch();
      }
      ps.executeBatch();
      db.commit();
    } catch (SQLException e) {
      db.rollback();
      throw e;
    } finally {
      db.setAutoCommit(true);
    }
  }

  @Override
  protected synchronized List<String> list() throws SQLException {
    List<String> slots = new ArrayList<>();
    ResultSet rs = db.createStatement().executeQuery("SELECT slot FROM " + table);
    while (rs.next()) {
      slots.add(rs.getString(1));
    }
    return slots;
  }

  @Override
  protected void release() throws SQLException {
    // unlocked before the session ends: the server releases a session's locks only when its
    // backend exits, some time after the client closed, so a store reopened at once could still
    // find the lock held
    try (PreparedStatement unlock = db.prepareStatement("SELECT pg_advisory_unlock(hashtext(?))")) {
      unlock.setString(1, table);
      unlock.executeQuery();
    } finally {
      db.close();
    }
  }

  @Override
  public String location() {
    return toString(); // the name given to the base: table and URL without the password
  }
}

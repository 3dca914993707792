package io.datum.cdc.testkit.example;

import io.datum.cdc.*;
import java.sql.*;
import java.util.*;

/** The README's custom store: checkpoints in a PostgreSQL table, one row per slot. */
public final class PgTableCheckpointStore implements CdcCheckpointStore {
  private final String url, table; // table: a trusted identifier chosen by the application
  private volatile boolean closed;

  public PgTableCheckpointStore(String url, String table) {
    this.url = url;
    this.table = table;
    try (Connection c = DriverManager.getConnection(url)) {
      c.createStatement()
          .execute(
              "CREATE TABLE IF NOT EXISTS "
                  + table
                  + " (slot text PRIMARY KEY,"
                  + " watermark text NOT NULL, tx_ends text[], counts int[], acked bytea[])");
    } catch (SQLException e) {
      throw new CdcStoreException("cannot create checkpoint table " + table + ": " + e, e);
    }
  }

  @Override
  public Optional<CdcCheckpoint> load(String slot) {
    SlotNames.requireValid(slot);
    try (Connection c = DriverManager.getConnection(url);
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT watermark, tx_ends, counts, acked FROM " + table + " WHERE slot = ?")) {
      ps.setString(1, slot);
      ResultSet rs = ps.executeQuery();
      if (!rs.next()) return Optional.empty();
      String[] ends = (String[]) rs.getArray(2).getArray();
      Integer[] counts = (Integer[]) rs.getArray(3).getArray();
      byte[][] acked = (byte[][]) rs.getArray(4).getArray();
      List<CdcCheckpoint.PartialTransaction> beyond = new ArrayList<>();
      for (int i = 0; i < ends.length; i++) {
        beyond.add(
            new CdcCheckpoint.PartialTransaction(
                PgLsn.parse(ends[i]), counts[i], BitSet.valueOf(acked[i])));
      }
      return Optional.of(new CdcCheckpoint(slot, PgLsn.parse(rs.getString(1)), beyond));
    } catch (SQLException | RuntimeException e) {
      throw new CdcStoreException(
          "cannot load slot " + slot + " from table " + table + ": " + e, e);
    }
  }

  @Override
  public void store(CdcCheckpoint cp) {
    if (closed) throw new IllegalStateException("store closed: " + location());
    List<CdcCheckpoint.PartialTransaction> txs = cp.acknowledgedBeyond();
    try (Connection c = DriverManager.getConnection(url);
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO "
                    + table
                    + " VALUES (?, ?, ?, ?, ?) ON CONFLICT (slot) DO UPDATE SET"
                    + " watermark = EXCLUDED.watermark, tx_ends = EXCLUDED.tx_ends, counts = EXCLUDED.counts,"
                    + " acked = EXCLUDED.acked")) { // autocommit: durable when it returns
      // (synchronous_commit=on)
      ps.setString(1, cp.slot());
      ps.setString(2, cp.watermark().toString());
      ps.setArray(
          3, c.createArrayOf("text", txs.stream().map(t -> t.txEndLsn().toString()).toArray()));
      ps.setArray(4, c.createArrayOf("int4", txs.stream().map(t -> t.eventCount()).toArray()));
      ps.setObject(5, txs.stream().map(t -> t.acknowledged().toByteArray()).toArray(byte[][]::new));
      ps.executeUpdate();
    } catch (SQLException e) {
      throw new CdcStoreException(
          "cannot store slot " + cp.slot() + " in table " + table + ": " + e, e);
    }
  }

  @Override
  public String location() {
    return "table " + table + " at " + url.replaceAll("password=[^&]*", "password=***");
  }

  @Override
  public void close() {
    closed = true;
  }
}
